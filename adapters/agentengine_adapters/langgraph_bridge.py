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
from langgraph.types import Command

from . import interrupts as intr
from . import resume as res
from .checkpoint import DurableCheckpointer, attach
from .config import Settings
from .hooks import PREPARE_INPUT, PREPARE_STATE, call_hook, find_hook
from .inputs import graph_input, turn_messages, with_text
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


@dataclass
class _Turn:
    """What one run's stream showed: interrupts and the top-level answer keys written."""

    interrupts: list[Any] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    # Whether node updates go to the host (a run started through LangGraph's API).
    forward_updates: bool = False


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
            capabilities=Capabilities(
                streaming=True, resume=True, multimodal_input=True, checkpoints=True
            ),
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

        if continued is not None:
            if snapshot is None or not snapshot.next:
                raise RunnerError(
                    f"checkpoint thread {thread!r} has nothing left to run", code="invalid_request"
                )
            # None continues the thread from its checkpoint: the nodes it was about to
            # run run now (LangGraph's way to retry a failed or cancelled step).
            graph_in, saved = None, stored
        elif request.is_resume:
            started = await self._resume_input(request, pending, stored, writer)
            if started is None:
                return
            graph_in, saved = started
        else:
            graph_in, saved = await self._fresh_input(request, graph, snapshot, messages), stored

        turn = _Turn(forward_updates=wants_updates(request.payload))
        try:
            async for ns, mode, data in graph.astream(
                graph_in,
                config,
                context=graph_context(getattr(graph, "context_schema", None), ictx),
                stream_mode=STREAM_MODES,
                subgraphs=True,
            ):
                await self.on_part({"type": mode, "ns": ns, "data": data}, writer, turn)
        except BaseException:
            if not self.own_checkpointer:
                # The failed or cancelled run's thread stays until the session's next
                # turn, so that it can be continued in place (payload continue_from).
                self._paused[session_thread] = thread
            raise
        await writer.finish()
        if not request.is_resume and not turn.interrupts and not saved and writer.any_text:
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
        return graph_input(
            request.payload,
            request.session_context,
            input_keys=_input_keys(graph),
            existing=messages,
        )

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
                return Command(resume=_keyed(value, pending)), stored
        plan = res.plan(res.parse_answers(request.payload), pending, stored)
        if plan.partial != stored:
            await writer.state_delta({res.PARTIAL_KEY: plan.partial or None})
        if not plan.values:
            for approval in plan.waiting:
                await writer.approval(approval)
            return None
        return Command(resume=plan.values), plan.partial

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
                    turn.interrupts.extend(update)
                elif not node.startswith("__"):
                    for item in update if isinstance(update, list) else [update]:
                        if isinstance(item, Mapping):
                            if not ns:
                                turn.values.update({k: item[k] for k in ANSWER_KEYS if k in item})
                            await self.on_update(node, item, ns, writer)
        elif kind == "custom":
            await writer.custom(data)

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
        return (values if isinstance(values, Mapping) else None), bool(pending)


def wants_updates(payload: Mapping[str, Any]) -> bool:
    """True for a run whose client asked for node updates (payload.metadata carries
    UPDATES_FLAG): they cost an encoding of each update, which other runs do not need."""
    meta = payload.get("metadata")
    return isinstance(meta, Mapping) and meta.get(UPDATES_FLAG) == "1"


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
