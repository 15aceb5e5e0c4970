"""The LangGraph bridge: runs a LangGraph graph (also create_agent / create_deep_agent
graphs) as an agentengine runner.

A turn: read the thread's checkpoint (thread id = session id), build the input (hook or
default mapping) or, on a resume, the Command answering the pending interrupts; stream the
graph once with typed v2 parts (messages + updates + custom, subgraphs included); then
report every interrupt still pending as approval requests and end. The graph is never run
a second time to look for text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from agentengine_runner import (
    Capabilities,
    Description,
    Emitter,
    Runner,
    RunnerError,
    RunRequest,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_messages
from langgraph.types import Command

from . import interrupts as intr
from . import resume as res
from .checkpoint import DurableCheckpointer, attach
from .config import Settings
from .hooks import PREPARE_INPUT, PREPARE_STATE, call_hook, find_hook
from .inputs import graph_input
from .loader import LoadedEntry, kind_of, module_description
from .runconfig import graph_context, invocation_context, run_config
from .stream import EventWriter

log = logging.getLogger("agentengine_runner.adapters")

STREAM_MODES = ["messages", "updates", "custom"]


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
        self.checkpointer = checkpointer or DurableCheckpointer(settings.checkpoint_path)
        self.hook = find_hook(entry.module, PREPARE_STATE, PREPARE_INPUT)
        self._graph: Any = None
        self._lock = asyncio.Lock()

    def describe(self) -> Description:
        return Description(
            framework=self.framework,
            agent_name=self.settings.agent_name,
            description=module_description(self.entry.module),
            capabilities=Capabilities(streaming=True, resume=True, multimodal_input=True),
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
        writer = EventWriter(emit, self.framework)
        snapshot = await _state(graph, config)
        messages = _messages(snapshot)
        pending = intr.approvals(intr.pending_interrupts(snapshot), messages)
        stored = _stored_partial(request)
        writer.already_reported(messages)

        if request.is_resume:
            started = await self._resume_input(request, pending, stored, writer)
            if started is None:
                return
            graph_in, saved = started
        else:
            graph_in, saved = await self._fresh_input(request, graph, snapshot, messages), stored

        seen: list[Any] = []
        async for part in graph.astream(
            graph_in,
            config,
            context=graph_context(getattr(graph, "context_schema", None), ictx),
            stream_mode=STREAM_MODES,
            subgraphs=True,
            version="v2",
        ):
            await self.on_part(part, writer, seen)
        await writer.finish()
        await self._report_interrupts(graph, config, writer, seen, saved)

    async def _fresh_input(
        self, request: RunRequest, graph: Any, snapshot: Any, messages: Sequence[Any]
    ) -> Any:
        if self.hook is not None:
            return await call_hook(self.hook[1], request.payload, request.session_context)
        return graph_input(
            request.payload,
            request.session_context,
            input_keys=_input_keys(graph),
            existing=messages,
        )

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
                await _send_approval(writer, approval)
            return None
        return Command(resume=plan.values), plan.partial

    # -- stream parts ----------------------------------------------------------------

    async def on_part(self, part: Mapping[str, Any], writer: EventWriter, seen: list[Any]) -> None:
        kind, ns, data = part["type"], tuple(part.get("ns") or ()), part["data"]
        if kind == "messages":
            message, _meta = data
            # Tokens of agents running inside a tool (DeepAgents' task subagents) are not
            # this agent's answer; their complete messages surface through updates.
            if isinstance(message, AIMessageChunk) and not in_tool(ns):
                await writer.chunk(message)
        elif kind == "updates":
            for node, update in data.items():
                if node == "__interrupt__":
                    seen.extend(update)
                elif not node.startswith("__"):
                    for item in update if isinstance(update, list) else [update]:
                        if isinstance(item, Mapping):
                            await self.on_update(node, item, ns, writer)
        elif kind == "custom":
            await writer.custom(data)

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
        seen: list[Any],
        saved: dict[str, Any],
    ) -> None:
        """Sends an approval request per pending interrupt (per action for HITL ones) and
        drops saved partial HITL decisions whose interrupt is gone. saved: what session
        state holds under PARTIAL_KEY now."""
        snapshot = await _state(graph, config)
        if snapshot is not None:
            pending = intr.pending_interrupts(snapshot)
        else:  # no checkpointer: only what the stream showed
            pending = [intr.Pending(i.id, i.value, "") for i in seen]
        approvals = intr.approvals(pending, _messages(snapshot))
        live = {p.id for p in pending}
        kept = {iid: d for iid, d in saved.items() if iid in live}
        if kept != saved:
            await writer.state_delta({res.PARTIAL_KEY: kept or None})
        for approval in approvals:
            decided = kept.get(approval.interrupt_id) or {}
            if approval.kind == "hitl" and str(approval.index) in decided:
                continue
            await _send_approval(writer, approval)


async def _send_approval(writer: EventWriter, approval: intr.Approval) -> None:
    await writer.end_message()
    await writer.emit.approval_request(
        approval.id,
        call_id=approval.call_id,
        name=approval.name,
        arguments=approval.arguments if approval.arguments is not None else {},
        message=approval.message,
        detail=approval.detail,
    )


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
    """True when a hook returned the resume payload unchanged (seed 003's advice for
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
