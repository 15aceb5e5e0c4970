"""The LangGraph bridge: runs a LangGraph graph (also create_agent / create_deep_agent
graphs) as an agentengine runner.

A turn: pick the thread, build the input (hook or default mapping) or, on a resume, the
Command answering the pending interrupts; stream the graph once (messages + updates +
custom, subgraphs included); then report every interrupt still pending as approval
requests, or, when nothing streamed as text, the final state's answer (`output`, else
`answer`, else the last AI message), and end. The graph is never run a second time to
look for text.

Threads, as KsADK: a graph compiled with its own checkpointer keeps one thread per (user,
session) and gets only the new turn; a graph without one sees exactly its input each
turn (the hook's state, or the host's history), on a thread of its own run that lives
only until the run ends or its interrupts are answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentengine_runner import (
    Capabilities,
    Description,
    Emitter,
    Runner,
    RunnerError,
    RunRequest,
)
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    convert_to_messages,
)
from langgraph.errors import InvalidUpdateError
from langgraph.types import Command

from . import interrupts as intr
from . import resume as res
from .checkpoint import DurableCheckpointer, attach
from .config import Settings
from .hooks import PREPARE_INPUT, PREPARE_STATE, call_hook, find_hook
from .inputs import graph_input, history_messages, turn_messages, with_text
from .loader import LoadedEntry, kind_of, module_description
from .runconfig import graph_context, invocation_context, run_config
from .stream import EventWriter

log = logging.getLogger("agentengine_runner.adapters")

STREAM_MODES = ["messages", "updates", "custom"]
# Final-state keys holding a graph's answer, in KsADK's order (then the last AI message).
ANSWER_KEYS = ("output", "answer")
RUN_THREAD = "/run:"
# The native event carrying one node's state update (LangGraph's "updates" stream part).
NATIVE_UPDATES = "langgraph.updates"
# The payload.metadata key asking for them ("1"), set by the host's LangGraph API.
UPDATES_FLAG = "langgraph_updates"
# More stream modes a LangGraph API client asked for (payload.metadata, comma-separated):
# their parts go to the host as NATIVE_PART events, {"mode", "ns", "data"}.
MODES_FLAG = "langgraph_modes"
EXTRA_MODES = ("tasks", "checkpoints", "debug", "events")
NATIVE_PART = "langgraph.part"
# The LangGraph API run's input keys other than messages (payload.metadata, a JSON object):
# they reach the graph as input channels.
INPUT_FLAG = "langgraph_input"
# The session-state key a LangGraph API run's final state goes to, every channel but
# messages (the host shows messages from the conversation it stores).
VALUES_KEY = "langgraph_values"
# The input item of a run that updates a LangGraph API thread's state (update_state):
# {"type": STATE_UPDATE, "values": ..., "as_node": ...}.
STATE_UPDATE = "langgraph_state_update"
# A LangGraph API run's static breakpoints (payload.metadata, JSON: "*" or node names); a
# run stopped at one pauses on an approval of kind "breakpoint", whose answer goes on.
BREAKPOINT_FLAGS = {"interrupt_before": "langgraph_interrupt_before", "interrupt_after": "langgraph_interrupt_after"}
# The request metadata keys passing a LangGraph API run's config.configurable and context.
CONFIGURABLE_FLAG = "langgraph_configurable"
CONTEXT_FLAG = "langgraph_context"
# Configurable keys that are the runtime's, never the client's.
_OWN_CONFIGURABLE = frozenset({"thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "agentengine", "user_id"})


@dataclass
class _Turn:
    """What one run's stream showed: interrupts and the top-level answer keys written."""

    interrupts: list[Any] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    # Whether node updates go to the host (a run started through LangGraph's API).
    forward_updates: bool = False
    # Further stream modes forwarded as NATIVE_PART events.
    extra_modes: tuple[str, ...] = ()
    # The graph's thread id and the one the host's clients know it by (the session id).
    thread: str = ""
    public_thread: str = ""
    # interrupt_before / interrupt_after of the run (LangGraph's static breakpoints).
    breakpoints: dict[str, Any] = field(default_factory=dict)
    # The root graph's last "values" part (asked for with forward_updates): the state
    # the run ended with, read from the stream instead of loading the checkpoint again.
    final_values: Any = None
    # An "__interrupt__" update was seen, a breakpoint's empty one included: the last
    # values part then has the interrupted step's writes applied, the checkpoint not.
    interrupted: bool = False


class GraphRunner(Runner):
    framework = "langgraph"

    def __init__(
        self,
        settings: Settings,
        entry: LoadedEntry,
        *,
        checkpointer: DurableCheckpointer | None = None,
    ) -> None:
        self.settings = settings
        self.entry = entry
        self.checkpointer = checkpointer or DurableCheckpointer()
        self.hook = find_hook(entry.module, PREPARE_STATE, PREPARE_INPUT)
        self.own_checkpointer = has_own_checkpointer(entry.obj, kind_of(entry.obj))
        # Per-run threads of runs paused on an interrupt, by session thread (the approval
        # detail carries the same, for a runner that did not pause the run itself).
        self._paused: dict[str, str] = {}
        self._warned_input = False
        self._graph: Any = None
        self._lock = asyncio.Lock()

    def describe(self) -> Description:
        return Description(
            framework=self.framework,
            agent_name=self.settings.agent_name,
            description=module_description(self.entry.module),
            capabilities=Capabilities(resume=True, checkpoints=True),
        )

    async def graph(self) -> Any:
        """The user's graph, compiled with (or copied onto) the durable checkpointer."""
        async with self._lock:
            if self._graph is None:
                saver = await self.checkpointer.get()
                self._graph = attach(self.entry.obj, kind_of(self.entry.obj), saver)
            return self._graph

    async def aclose(self) -> None:
        await self.checkpointer.aclose()

    async def call(self, method: str, arg: Any) -> Any:
        # LangGraph's server API asks for the assistant's graph and schemas (graph_api.py).
        from . import graph_api

        if method not in graph_api.METHODS:
            raise NotImplementedError(method)
        return await graph_api.call(method, arg, await self.graph())

    # -- a turn ----------------------------------------------------------------------

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        graph = await self.graph()
        ictx = invocation_context(request, self.framework)
        config = run_config(request, ictx)
        session_thread = config["configurable"]["thread_id"]
        thread = session_thread
        continued = continue_thread(request.payload, session_thread)
        if continued is not None:
            thread = continued
            config["configurable"]["thread_id"] = thread
        elif not self.own_checkpointer:
            thread = await self._run_thread(graph, request, session_thread)
            config["configurable"]["thread_id"] = thread
        writer = EventWriter(emit, self.framework, detail={"thread_id": thread})
        writer.tools_traced = "callbacks" in config  # run_config's span handler
        fresh_thread = not self.own_checkpointer and not request.is_resume and continued is None
        snapshot = None if fresh_thread else await _state(graph, config)
        messages = _messages(snapshot)
        pending = intr.approvals(intr.pending_interrupts(snapshot), messages)
        stored = _stored_partial(request)
        writer.already_reported(messages)
        update = state_update(request.payload)
        if update is not None and continued is None and not request.is_resume:
            await self._update_state(graph, request, config, writer, update, fresh_thread)
            if fresh_thread:
                await self._end_run_thread(graph, session_thread, thread, False)
            return

        if continued is not None:
            if snapshot is None or not snapshot.next:
                raise RunnerError(
                    f"checkpoint thread {thread!r} has nothing left to run", code="invalid_request"
                )
            # None continues the thread from its checkpoint: the nodes it was about to
            # run run now (LangGraph's way to retry a failed or cancelled step).
            graph_in, saved = None, stored
        elif request.is_resume and not pending and snapshot is not None and snapshot.next and _at_breakpoint(request):
            if not all(bool(r.get("approve", True)) for r in res.host_resumes(request.payload)):
                # A breakpoint refused: the run stops where it is, its thread dropped.
                if not self.own_checkpointer:
                    await self._end_run_thread(graph, session_thread, thread, False)
                return
            # None runs the thread on from its checkpoint: the nodes it stopped before.
            graph_in, saved = None, stored
        elif request.is_resume:
            started = await self._resume_input(request, pending, stored, writer)
            if started is None:
                return
            graph_in, saved = started
        else:
            graph_in, saved = await self._fresh_input(request, graph, snapshot, messages), stored
            if fresh_thread:
                given_history(graph_in, writer)

        turn = _Turn(
            forward_updates=wants_updates(request.payload),
            extra_modes=extra_modes(request.payload),
            thread=thread,
            public_thread=request.session_id or thread,
            breakpoints=breakpoints(request.payload),
        )
        config["configurable"].update(client_configurable(request.payload))
        context = client_context(request.payload)
        options: dict[str, Any] = {
            "context": context if context is not None else graph_context(getattr(graph, "context_schema", None), ictx),
            "stream_mode": STREAM_MODES
            + (["values"] if turn.forward_updates else [])
            + [m for m in turn.extra_modes if m != "events"],
            "subgraphs": True,
            **turn.breakpoints,
        }
        try:
            if "events" in turn.extra_modes:
                parts = _with_events(graph.astream_events(graph_in, config, version="v2", **options), writer, turn)
            else:
                parts = graph.astream(graph_in, config, **options)
            async for ns, mode, data in parts:
                await self.on_part({"type": mode, "ns": ns, "data": data}, writer, turn)
        except BaseException:
            if not self.own_checkpointer:
                # The failed or cancelled run's thread stays until the session's next
                # turn, so that it can be continued in place (payload continue_from).
                self._paused[session_thread] = thread
            raise
        await writer.finish()
        if turn.forward_updates:
            await self._report_values(graph, config, writer, None if turn.interrupted else turn.final_values)
        if not request.is_resume and not turn.interrupts and not saved and writer.any_text and not turn.breakpoints:
            # A fresh turn whose stream showed no interrupt and already gave the answer:
            # the final state would add nothing (an interrupt always shows in the
            # "updates" stream), and reading it is a checkpoint load per turn.
            if not self.own_checkpointer:
                await self._end_run_thread(graph, session_thread, thread, False)
            return
        final, paused = await self._report_interrupts(graph, config, writer, turn, saved)
        if not paused and not writer.any_text:
            await writer.answer(final_answer(final if final is not None else turn.values))
        if not self.own_checkpointer:
            await self._end_run_thread(graph, session_thread, thread, paused)

    async def _run_thread(self, graph: Any, request: RunRequest, session_thread: str) -> str:
        """The thread of this run (a graph without its own checkpointer): a new one, or on
        a resume the thread of the run that paused."""
        prefix = session_thread + RUN_THREAD
        if request.is_resume:
            for resume in res.host_resumes(request.payload):
                described = _detail_thread(resume)
                if described.startswith(prefix):
                    return described
            if session_thread in self._paused:
                return self._paused[session_thread]
            # A runner that did not pause the run: the run thread the host handed over.
            handed = [
                str(getattr(c, "thread_id", "")) for c in getattr(request, "checkpoints", ()) or ()
            ]
            return next((t for t in reversed(handed) if t.startswith(prefix)), prefix + "none")
        # A new message instead of an answer: the paused run is abandoned.
        abandoned = self._paused.pop(session_thread, None)
        if abandoned:
            await _delete_thread(graph, abandoned)
        return prefix + (request.invocation_id or uuid.uuid4().hex)

    async def _end_run_thread(self, graph: Any, session_thread: str, thread: str, paused: bool) -> None:
        if paused:
            self._paused[session_thread] = thread
            return
        if self._paused.get(session_thread) == thread:
            del self._paused[session_thread]
        await _delete_thread(graph, thread)

    async def _fresh_input(
        self, request: RunRequest, graph: Any, snapshot: Any, messages: Sequence[Any]
    ) -> Any:
        if self.hook is not None:
            value = await call_hook(self.hook[1], request.payload, request.session_context)
            return self._hook_input(value, _input_keys(graph), request, messages)
        keys = _input_keys(graph)
        state = graph_input(
            request.payload,
            request.session_context,
            input_keys=keys,
            existing=messages,
        )
        if wants_updates(request.payload):
            if not self.own_checkpointer and keys is not None:
                # A LangGraph API thread's channels carry over from its last run, as
                # the messages do: the run's thread starts from them.
                for key, value in _stored_values(request).items():
                    if key in keys and key not in state:
                        state[key] = value
            for key, value in api_input(request.payload).items():
                if key != "messages" and (keys is None or key in keys):
                    state[key] = value
        return state

    def _hook_input(
        self, value: Any, keys: Sequence[str] | None, request: RunRequest, existing: Sequence[Any]
    ) -> Any:
        """A hook's value as input for a graph that reads `messages` (create_agent): a
        value without a `messages` list gets the conversation — the history (when the
        thread does not hold it already) and the user message, whose text is the hook's
        `input` (or returned string) when the graph does not read `input` itself. A
        returned `messages` list is used as given."""
        if keys is None or "messages" not in keys:
            return value
        if isinstance(value, str):
            value = {"input": value}
        if not isinstance(value, Mapping) or "messages" in value:
            return value
        payload = request.payload
        rest = dict(value)
        text = rest.get("input")
        if "input" not in keys and isinstance(text, str):
            del rest["input"]
            payload = with_text(payload, text)
            if not self._warned_input:
                self._warned_input = True
                log.warning(
                    "%s returned {'input': ...} but the agent reads 'messages': the text is "
                    "sent as the user message after the conversation's history (return "
                    "{'messages': [...]} to choose the messages yourself)",
                    self.hook[0] if self.hook else "the hook",
                )
        rest["messages"] = turn_messages(payload, request.session_context, existing)
        return rest

    async def _resume_input(
        self,
        request: RunRequest,
        pending: list[intr.Approval],
        stored: dict[str, Any],
        writer: EventWriter,
    ) -> tuple[Any, dict[str, Any]] | None:
        """The Command resuming the thread and the partial HITL decisions session state
        holds now; None when the run is over already (a HITL interrupt still misses
        decisions: they were saved and the rest re-requested)."""
        if not pending:
            raise RunnerError(
                f"session {request.session_id!r} has no pending interrupt to resume",
                code=res.INVALID_RESUME,
            )
        if self.hook is not None:
            value = await call_hook(self.hook[1], request.payload, request.session_context)
            if isinstance(value, Command):
                return value, stored
            if not _passthrough(value, request.payload):
                return Command(resume=_keyed(value, pending), **command_extras(request.payload)), stored
        plan = res.plan(res.parse_answers(request.payload), pending, stored)
        if plan.partial != stored:
            await writer.state_delta({res.PARTIAL_KEY: plan.partial or None})
        if not plan.values:
            for approval in plan.waiting:
                await writer.approval(approval)
            return None
        return Command(resume=plan.values, **command_extras(request.payload)), plan.partial

    # -- stream parts ----------------------------------------------------------------

    async def on_part(self, part: Mapping[str, Any], writer: EventWriter, turn: _Turn) -> None:
        kind, ns, data = part["type"], tuple(part.get("ns") or ()), part["data"]
        if kind == "messages":
            message, _meta = data
            # Tokens of agents running inside a tool (DeepAgents' task subagents) are not
            # this agent's answer; their complete messages surface through updates.
            if isinstance(message, AIMessageChunk) and not in_tool(ns):
                await writer.chunk(message)
        elif kind == "updates":
            if turn.forward_updates:
                await self.forward_updates(ns, data, writer)
            for node, update in data.items():
                if node == "__interrupt__":
                    turn.interrupted = True
                    turn.interrupts.extend(update)
                elif not node.startswith("__"):
                    for item in update if isinstance(update, list) else [update]:
                        if isinstance(item, Mapping):
                            if not ns:
                                turn.values.update({k: item[k] for k in ANSWER_KEYS if k in item})
                            await self.on_update(node, item, ns, writer)
        elif kind == "custom":
            await writer.custom(data)
        elif kind == "values":
            if not ns:
                turn.final_values = data
        elif kind in turn.extra_modes:
            await writer.native(
                NATIVE_PART,
                {"mode": kind, "ns": list(ns), "data": public_thread(data, turn.thread, turn.public_thread)},
            )

    async def _update_state(
        self,
        graph: Any,
        request: RunRequest,
        config: dict[str, Any],
        writer: EventWriter,
        update: Mapping[str, Any],
        fresh_thread: bool,
    ) -> None:
        """LangGraph's update_state, by the graph itself: on a run's own thread, first the
        thread's state as the host keeps it (the conversation and the channels its last
        run reported) written as the graph's input, then values as node as_node writes them
        (the graph's reducers apply). The messages the update adds and the channels after it
        are reported as a run's are."""
        if fresh_thread:
            history = request.payload.get("history")
            if history is None:
                history = request.session_context.get("history")
            seed: dict[str, Any] = {"messages": history_messages(history)}
            keys = _input_keys(graph)
            for key, value in _stored_values(request).items():
                if keys is None or key in keys:
                    seed[key] = value
            given_history(seed, writer)
            await graph.aupdate_state(config, seed, as_node="__start__")
        as_node = update.get("as_node")
        try:
            await graph.aupdate_state(config, update.get("values"), as_node=as_node or None)
        except (InvalidUpdateError, ValueError, KeyError, TypeError) as err:
            raise RunnerError(f"cannot update the thread's state: {err}", code="invalid_request") from err
        snapshot = await _state(graph, config)
        for message in _messages(snapshot):
            await writer.message(message)
        await writer.finish()
        await self._report_values(graph, config, writer, getattr(snapshot, "values", None))

    async def _report_values(
        self, graph: Any, config: dict[str, Any], writer: EventWriter, values: Any = None
    ) -> None:
        """The graph's state at the run's end, every channel but messages, into session
        state (VALUES_KEY), for the thread state LangGraph API clients read. values: the
        state if known already (a run's last root "values" part holds the channels a state
        snapshot reads, the graph's stream channels); otherwise the thread's checkpoint is
        read."""
        if values is None:
            values = getattr(await _state(graph, config), "values", None)
        if isinstance(values, Mapping):
            await writer.state_delta({VALUES_KEY: {k: v for k, v in values.items() if k != "messages"}})

    async def forward_updates(
        self, ns: tuple[str, ...], data: Mapping[str, Any], writer: EventWriter
    ) -> None:
        """Each node's update as a native event, for clients of LangGraph's own API (its
        "updates" stream mode); interrupts reach them as the host's approval requests."""
        for node, update in data.items():
            if not node.startswith("__"):
                await writer.native(NATIVE_UPDATES, {"ns": list(ns), "node": node, "update": update})

    async def on_update(
        self, node: str, update: Mapping[str, Any], ns: tuple[str, ...], writer: EventWriter
    ) -> None:
        """One node's state update. Subclasses surface more keys (DeepAgents files)."""
        found = node_messages(update.get("messages"))
        if in_tool(ns):
            for message in found:
                await writer.native("subagent.message", _brief(message, ns, node))
                if isinstance(message, AIMessage):  # subagent tokens cost too
                    await writer.usage(message.id or f"anon:{id(message)}", message)
            return
        for message in found:
            await writer.message(message)

    # -- the end of a turn -----------------------------------------------------------

    async def _report_interrupts(
        self,
        graph: Any,
        config: dict[str, Any],
        writer: EventWriter,
        turn: _Turn,
        saved: dict[str, Any],
    ) -> tuple[Mapping[str, Any] | None, bool]:
        """Sends an approval request per pending interrupt (per action for HITL ones) and
        drops saved partial HITL decisions whose interrupt is gone. saved: what session
        state holds under PARTIAL_KEY now. Returns the final state values (None without
        a checkpointer) and whether the run paused on interrupts."""
        snapshot = await _state(graph, config)
        if snapshot is not None:
            pending = intr.pending_interrupts(snapshot)
        else:  # no checkpointer: only what the stream showed
            pending = [intr.Pending(i.id, i.value, "") for i in turn.interrupts]
        approvals = intr.approvals(pending, _messages(snapshot))
        if not pending and turn.breakpoints and snapshot is not None and snapshot.next:
            approvals = [_breakpoint(snapshot)]
        live = {p.id for p in pending}
        kept = {iid: d for iid, d in saved.items() if iid in live}
        if kept != saved:
            await writer.state_delta({res.PARTIAL_KEY: kept or None})
        for approval in approvals:
            decided = kept.get(approval.interrupt_id) or {}
            if approval.kind == "hitl" and str(approval.index) in decided:
                continue
            await writer.approval(approval)
        values = getattr(snapshot, "values", None)
        return (values if isinstance(values, Mapping) else None), bool(approvals)


def wants_updates(payload: Mapping[str, Any]) -> bool:
    """True for a run whose client asked for node updates (payload.metadata carries
    UPDATES_FLAG): they cost an encoding of each update, which other runs do not need."""
    meta = payload.get("metadata")
    return isinstance(meta, Mapping) and meta.get(UPDATES_FLAG) == "1"


async def _with_events(events: Any, writer: EventWriter, turn: _Turn) -> Any:
    """The graph's stream parts from astream_events (what the root graph streams), every
    other event forwarded as an "events" part (LangGraph's events stream mode)."""
    root = None
    async for event in events:
        if root is None:
            root = event.get("run_id")
        if event.get("event") == "on_chain_stream" and event.get("run_id") == root:
            chunk = (event.get("data") or {}).get("chunk")
            if isinstance(chunk, tuple) and len(chunk) == 3:
                yield chunk
                continue
        await writer.native(
            NATIVE_PART, {"mode": "events", "ns": [], "data": public_thread(event, turn.thread, turn.public_thread)}
        )


def _flag_object(payload: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    meta = payload.get("metadata")
    raw = meta.get(key) if isinstance(meta, Mapping) else None
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def client_configurable(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The run's config.configurable from a LangGraph API client, without the keys the
    runtime sets itself (the thread, the checkpoint, agentengine's own)."""
    given = _flag_object(payload, CONFIGURABLE_FLAG) or {}
    return {k: v for k, v in given.items() if k not in _OWN_CONFIGURABLE}


def client_context(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's context from a LangGraph API client (LangGraph coerces it to the graph's
    context_schema), or None."""
    return _flag_object(payload, CONTEXT_FLAG)


def breakpoints(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The run's interrupt_before / interrupt_after ("*" or node names), as astream takes them."""
    meta = payload.get("metadata")
    out: dict[str, Any] = {}
    for arg, key in BREAKPOINT_FLAGS.items():
        raw = meta.get(key) if isinstance(meta, Mapping) else None
        if not isinstance(raw, str):
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if value == "*" or (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
            out[arg] = value
    return out


def _breakpoint(snapshot: Any) -> intr.Approval:
    """The approval a run stopped at a static breakpoint pauses on."""
    nodes = [str(n) for n in snapshot.next]
    checkpoint = str(snapshot.config["configurable"].get("checkpoint_id") or uuid.uuid4().hex)
    bid = f"bp_{checkpoint}"
    return intr.Approval(
        id=bid,
        interrupt_id=bid,
        kind="breakpoint",
        name="breakpoint",
        arguments={"next": nodes},
        message=f"paused before {', '.join(nodes)}",
        detail={"interrupt_id": bid, "kind": "breakpoint", "node": nodes[0], "next": nodes},
    )


def _at_breakpoint(request: RunRequest) -> bool:
    """True when the run answers a breakpoint's approval."""
    for resume in res.host_resumes(request.payload):
        detail = resume.get("detail")
        if isinstance(detail, str):
            try:
                detail = json.loads(detail)
            except ValueError:
                continue
        if isinstance(detail, Mapping) and detail.get("kind") == "breakpoint":
            return True
    return False


def command_extras(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A LangGraph API resume's Command update and goto (its first answer carries them as
    langgraph_update / langgraph_goto)."""
    raw = payload.get("input")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    out: dict[str, Any] = {}
    for item in raw if isinstance(raw, list) else [raw]:
        if isinstance(item, Mapping):
            for key, arg in (("langgraph_update", "update"), ("langgraph_goto", "goto")):
                if item.get(key) is not None and arg not in out:
                    out[arg] = item[key]
    return out


def state_update(payload: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The state update a run carries as its input item (STATE_UPDATE), or None."""
    for item in payload.get("input_items") or ():
        if isinstance(item, Mapping) and item.get("type") == STATE_UPDATE:
            return item
    return None


def given_history(graph_in: Any, writer: EventWriter) -> None:
    """Marks the earlier conversation a fresh run's thread is given as reported: a node
    returning the whole message list (a subgraph node does) must not report it again.
    Messages without an id get one first, which the graph's reducer keeps."""
    given = graph_in.get("messages") if isinstance(graph_in, Mapping) else None
    if not isinstance(given, list):
        return
    for message in given:
        if isinstance(message, BaseMessage) and not message.id:
            message.id = str(uuid.uuid4())
    writer.already_reported([m for m in given if isinstance(m, BaseMessage)])


def extra_modes(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The stream modes beyond the bridge's own that a LangGraph API client asked for."""
    meta = payload.get("metadata")
    raw = meta.get(MODES_FLAG) if isinstance(meta, Mapping) else None
    if not isinstance(raw, str):
        return ()
    asked = {m.strip() for m in raw.split(",")}
    return tuple(m for m in EXTRA_MODES if m in asked)


def api_input(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The LangGraph API run's input keys other than messages (INPUT_FLAG), or {}."""
    meta = payload.get("metadata")
    raw = meta.get(INPUT_FLAG) if isinstance(meta, Mapping) else None
    if not isinstance(raw, str):
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def public_thread(value: Any, thread: str, public: str) -> Any:
    """value with the graph's thread id (a run's own thread) named as its clients know the
    thread; checkpoint configs in stream parts carry it."""
    if not thread or thread == public:
        return value
    if isinstance(value, Mapping):
        return {
            k: public if k == "thread_id" and v == thread else public_thread(v, thread, public)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [public_thread(v, thread, public) for v in value]
    return value


def continue_thread(payload: Mapping[str, Any], session_thread: str) -> str | None:
    """The thread a run continues in place (payload continue_from), or None. It must be
    one of this session's threads: the session's own or one of its runs'."""
    ref = payload.get("continue_from")
    if not isinstance(ref, Mapping):
        return None
    thread = ref.get("thread_id")
    if not isinstance(thread, str) or not (
        thread == session_thread or thread.startswith(session_thread + RUN_THREAD)
    ):
        raise RunnerError(f"checkpoint thread {thread!r} is not this session's", code="invalid_request")
    return thread


def has_own_checkpointer(obj: Any, kind: str) -> bool:
    """True for a compiled graph the project gave a checkpointer (a saver, not a flag)."""
    if kind != "graph":
        return False
    saver = getattr(obj, "checkpointer", None)
    return saver is not None and not isinstance(saver, bool)


def final_answer(values: Mapping[str, Any]) -> str:
    """A graph's answer in its final state, as KsADK reads it: `output`, else `answer`,
    else the last AI message's text."""
    for key in ANSWER_KEYS:
        value = values.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, BaseMessage):
            return value.text
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    messages = values.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, AIMessage):
            return message.text
    return ""


def _detail_thread(resume: Any) -> str:
    detail = resume.get("detail") if isinstance(resume, Mapping) else None
    if isinstance(detail, str):
        try:
            detail = json.loads(detail)
        except ValueError:
            return ""
    value = detail.get("thread_id") if isinstance(detail, Mapping) else None
    return value if isinstance(value, str) else ""


async def _delete_thread(graph: Any, thread: str) -> None:
    saver = getattr(graph, "checkpointer", None)
    delete = getattr(saver, "adelete_thread", None)
    if delete is None:
        return
    try:
        await delete(thread)
    except NotImplementedError:
        pass
    except Exception:  # a finished run's leftovers must not fail the run
        log.warning("cannot delete checkpoint thread %s", thread, exc_info=True)


def in_tool(ns: Sequence[str]) -> bool:
    """True for namespaces under a tool node (agents that tools run)."""
    return any(part.split(":", 1)[0] == "tools" for part in ns)


def node_messages(value: Any) -> list[BaseMessage]:
    if value is None:
        return []
    value = getattr(value, "value", value)  # langgraph.types.Overwrite
    items = value if isinstance(value, list | tuple) else [value]
    out: list[BaseMessage] = []
    for item in items:
        if isinstance(item, BaseMessage):
            out.append(item)
        else:
            try:
                out.extend(convert_to_messages([item]))
            except Exception:  # RemoveMessage markers and other reducer inputs
                continue
    return out


def _brief(message: BaseMessage, ns: tuple[str, ...], node: str) -> dict[str, Any]:
    out: dict[str, Any] = {"ns": list(ns), "node": node, "type": message.type, "text": message.text}
    calls = getattr(message, "tool_calls", None)
    if calls:
        out["tool_calls"] = [{"id": c.get("id"), "name": c["name"], "args": c["args"]} for c in calls]
    if getattr(message, "tool_call_id", None):
        out["tool_call_id"] = message.tool_call_id  # type: ignore[attr-defined]
    return out


async def _state(graph: Any, config: dict[str, Any]) -> Any:
    if not getattr(graph, "checkpointer", None):
        return None
    return await graph.aget_state(config)


def _messages(snapshot: Any) -> list[Any]:
    values = getattr(snapshot, "values", None)
    if isinstance(values, Mapping):
        found = values.get("messages")
        return list(found) if isinstance(found, list) else []
    return []


def _input_keys(graph: Any) -> list[str] | None:
    builder = getattr(graph, "builder", None)
    schemas = getattr(builder, "schemas", None)
    if isinstance(schemas, Mapping):
        channels = schemas.get(getattr(builder, "input_schema", None))
        if isinstance(channels, Mapping):
            return list(channels)
    return None


def _stored_partial(request: RunRequest) -> dict[str, Any]:
    state = request.session_context.get("state")
    value = state.get(res.PARTIAL_KEY) if isinstance(state, Mapping) else None
    return dict(value) if isinstance(value, Mapping) else {}


def _stored_values(request: RunRequest) -> dict[str, Any]:
    """The channels a LangGraph API run reported last (VALUES_KEY of session state)."""
    state = request.session_context.get("state")
    value = state.get(VALUES_KEY) if isinstance(state, Mapping) else None
    return {k: v for k, v in value.items() if k != "messages"} if isinstance(value, Mapping) else {}


def _passthrough(value: Any, payload: Mapping[str, Any]) -> bool:
    """True when a hook returned the resume payload unchanged (KsADK's advice for
    is_resume): the bridge then maps it to what the pending interrupts expect."""
    original = payload.get("input")
    return value is original or value == original or value is None


def _keyed(value: Any, pending: Sequence[intr.Approval]) -> Any:
    ids = {a.interrupt_id for a in pending}
    if isinstance(value, Mapping) and value and set(value) <= ids:
        return dict(value)
    if len(ids) == 1:
        return {next(iter(ids)): value}
    return value
