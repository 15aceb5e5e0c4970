"""The Google ADK bridge: serves an ADK root agent (or App) as an agentengine runner.

Per turn (see adk_session.py for the projection):

1. A fresh InMemorySessionService with one session keyed by the run's real app / user /
   session ids, rebuilt from the host's history and state tiers. agentengine's store stays
   the only source of truth; no two users or sessions ever share an ADK session.
2. One `Runner.run_async(user_id=<user>, session_id=<session>, new_message=...,
   run_config=RunConfig(streaming_mode=SSE))`, its events mapped. payload.instructions (the
   request's system/developer instruction) is appended to each model call's system
   instruction by a plugin registered on that turn's Runner only.

   | ADK event | runner event |
   |---|---|
   | partial text / thought parts | `text_delta` / `reasoning_delta` |
   | final (non-partial) model text | `message_done` with the full text (sent as deltas only when no partials came) |
   | `function_call` | `tool_call` with ADK's call id |
   | `function_response` | `tool_result` with the same id |
   | `actions.state_delta` | `state_delta` (app:/user: prefixes kept, temp: dropped) |
   | `usage_metadata` (final events) | `usage` |
   | the event's own fields (author, turn_complete, usage_metadata, ...) | native `event.meta`, before the event's items |
   | `adk_request_confirmation` call / long-running tool call | `approval_request`, and the run ends |
   | `error_code` on a model response | Error (RunnerError `model_error`) |

3. Resume: each answer (payload.input `mcp_approval_response` / `function_call_output`,
   payload.resume) is matched to its pending approval (by approval id, else call id); the
   pending call's ADK events (approval detail, or rebuilt from payload.resume) are put
   back in the session, and the new message is a function_response answering it —
   `{"confirmed": approve}` for a confirmation, the output for a long-running tool — so
   ADK runs (or rejects) the tool and continues.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentengine_runner import NATIVE_CALL, Capabilities, Description, Emitter, Runner, RunnerError, RunRequest
from agentengine_runner.tracing import records_spans
from google.adk.agents import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.run_config import RunConfig, StreamingMode  # type: ignore[attr-defined]
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner as AdkRunnerCore
from google.adk.sessions import InMemorySessionService
from google.genai import types

from . import adk_session as proj
from .adk_artifacts import HostArtifactService

# ADK records message contents on its spans unless told not to (its own knob defaults on);
# the OpenTelemetry GenAI conventions record none unless the user opts in with
# OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: its value decides, unless the
# project set ADK's knob itself.
os.environ.setdefault(
    "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS",
    "true" if os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").lower() == "true" else "false",
)
from .config import Settings
from .loader import EntryPointError, get_attr, import_module, module_description, parse_entry, prepare_sys_path
from .missing import remember_missing
from .resume import Answer, host_resumes, parse_answers

log = logging.getLogger("agentengine_runner.adapters.adk")

# ADK's build_node imports its A2A agent at every call (see missing.py).
remember_missing("google.adk.agents.remote_a2a_agent", "a2a")

INVALID_RESUME = "invalid_resume"
CONFIRMATION = "confirmation"
LONG_RUNNING = "long_running"

# The native event kind whose data the host stores with the items that follow it (see
# host.NativeEventMeta): ADK's own fields of the event those items come from, so that the
# ADK-web surface writes events as ADK does (the agent's name as author, usage, finish
# reason, turn completion).
EVENT_META = "event.meta"
# Event fields relayed in event.meta (those of the ADK version at hand; content, ids,
# times and the state and confirmation actions travel as runner events already).
META_FIELDS = (
    "author",
    "branch",
    "partial",
    "turn_complete",
    "finish_reason",
    "usage_metadata",
    "model_version",
    "interrupted",
    "custom_metadata",
    "grounding_metadata",
    "citation_metadata",
    "cache_metadata",
    "avg_logprobs",
    "input_transcription",
    "output_transcription",
    "node_info",
    "long_running_tool_ids",
)
META_ACTIONS = ("transfer_to_agent", "escalate", "skip_summarization", "end_of_agent", "artifact_delta")


# -- loading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdkEntry:
    module: Any
    attr: str
    obj: BaseAgent | App


def is_adk_agent(obj: Any) -> bool:
    return isinstance(obj, BaseAgent | App)


def load_adk_entry(settings: Settings) -> AdkEntry:
    """Imports the entry module and returns its ADK root agent or App (a zero-argument
    factory returning one is called once)."""
    prepare_sys_path(settings.project_dir)
    spec = parse_entry(settings.entry_point, settings.agent_variable, settings.project_dir)
    module = import_module(spec)
    obj = get_attr(module, spec.attr)
    if callable(obj) and not is_adk_agent(obj) and not isinstance(obj, type):
        try:
            obj = obj()
        except TypeError as exc:
            raise EntryPointError(f"{module.__name__}.{spec.attr} is not an ADK agent and cannot be called without arguments: {exc}") from exc
    if not is_adk_agent(obj):
        raise EntryPointError(
            f"{module.__name__}.{spec.attr} is a {type(obj).__name__}, not a google-adk agent "
            "(LlmAgent / BaseAgent) or App; assign the root agent to root_agent or set agent_variable"
        )
    return AdkEntry(module=module, attr=spec.attr, obj=obj)


# -- pending approvals ---------------------------------------------------------------------


@dataclass
class Pending:
    """An approval the ADK run is paused on."""

    kind: str  # CONFIRMATION or LONG_RUNNING
    approval_id: str  # adk_request_confirmation call id, or the long-running call id
    call: types.FunctionCall  # the original tool call
    events: list[dict[str, Any]] = field(default_factory=list)  # ADK events to restore
    hint: str = ""
    payload: Any = None  # the ToolConfirmation payload the tool asked with

    def detail(self) -> dict[str, Any]:
        return {
            "framework": "adk",
            "kind": self.kind,
            "approval_id": self.approval_id,
            "original_call": self.call.model_dump(mode="json", exclude_none=True),
            "hint": self.hint,
            "payload": self.payload,
            "adk_events": self.events,
        }

    @classmethod
    def from_resume(cls, resume: Mapping[str, Any]) -> Pending | None:
        detail = resume.get("detail")
        if isinstance(detail, str):
            try:
                detail = json.loads(detail)
            except ValueError:
                detail = None
        approval_id = str(resume.get("approval_request_id") or "")
        if isinstance(detail, Mapping) and detail.get("framework") == "adk":
            call = types.FunctionCall.model_validate(detail.get("original_call") or {})
            events = detail.get("adk_events")
            return cls(
                kind=str(detail.get("kind") or CONFIRMATION),
                approval_id=str(detail.get("approval_id") or approval_id),
                call=call,
                events=list(events) if isinstance(events, list) else [],
                hint=str(detail.get("hint") or ""),
            )
        call_id = str(resume.get("call_id") or "")
        if not approval_id or not call_id:
            return None
        call = types.FunctionCall(id=call_id, name=str(resume.get("name") or ""), args=proj._args(resume.get("arguments")))
        return cls(kind=CONFIRMATION if approval_id != call_id else LONG_RUNNING, approval_id=approval_id, call=call)

    def restore(self, agent_name: str) -> list[Event]:
        if self.events:
            return proj.load_events(self.events)
        if self.kind == CONFIRMATION:
            return proj.confirmation_events(agent_name, self.approval_id, self.call, self.hint)
        return proj.long_running_events(agent_name, self.call)


# -- the runner ----------------------------------------------------------------------------


class AdkRunner(Runner):
    framework = "adk"

    def __init__(self, settings: Settings, entry: AdkEntry) -> None:
        self.settings = settings
        self.entry = entry
        obj = entry.obj
        self.agent: BaseAgent = obj.root_agent if isinstance(obj, App) else obj  # type: ignore[assignment]
        # Pending approvals per (app, user, session); the approval detail carries the same
        # data, so a restarted runner resumes too.
        self._pending: dict[tuple[str, str, str], dict[str, Pending]] = {}
        # What ADK's dev UI draws, computed on the host's first NATIVE_CALL and kept: the
        # drawing imports ADK's dev server and Graphviz (~330 modules, ~33 MB and about a
        # second), which a process that only serves turns never needs.
        self._dev_info: dict[str, Any] | None = None
        self._dev_info_ready = False
        self._dev_info_lock = threading.Lock()

    def describe(self) -> Description:
        description = str(getattr(self.agent, "description", "") or "") or module_description(self.entry.module)
        return Description(
            framework=self.framework,
            agent_name=self.settings.agent_name,
            description=description,
            capabilities=Capabilities(resume=True, artifacts=True),
        )

    async def native(self) -> dict[str, Any] | None:
        """The dev UI's app info and graphs (dev_info), computed once on a worker thread so
        that runs in flight on this process's event loop are not held up meanwhile."""
        return await asyncio.to_thread(self._dev_info_once)

    def _dev_info_once(self) -> dict[str, Any] | None:
        with self._dev_info_lock:
            if not self._dev_info_ready:
                self._dev_info = dev_info(self.entry.obj, self.agent)
                self._dev_info_ready = True
            return self._dev_info

    async def call(self, method: str, arg: Any) -> Any:
        from . import adk_graph

        if method == NATIVE_CALL:
            return await self.native()
        if method == adk_graph.GRAPH:
            return await adk_graph.agent_graph(self.agent, arg)
        # ADK's evaluation (the dev UI's Eval tab), imported on first use: its imports
        # are heavy and may be missing from the project (adk_eval.py says what to install).
        from . import adk_eval

        if method not in adk_eval.METHODS:
            raise NotImplementedError(method)
        return await adk_eval.call(method, arg, self.entry.obj, self.agent, self.settings.project_dir)

    def _key(self, request: RunRequest) -> tuple[str, str, str]:
        platform = request.session_context.get("platform_context") or {}
        app = request.app_name or str(platform.get("app_name") or "") or self.settings.agent_name
        user = request.user_id or str(platform.get("user_id") or "") or "anonymous"
        session = request.session_id or str(platform.get("session_id") or "") or f"invocation-{request.invocation_id}"
        return app, user, session

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        key = self._key(request)
        app_name, user_id, session_id = key
        history = request.payload.get("history")
        if history is None:
            history = request.session_context.get("history")
        restored: list[Event] = []
        if request.is_resume:
            restored, new_message = self._resume(key, request.payload)
        else:
            new_message = proj.user_content(request.payload)
        skip = {fc.id for e in restored for fc in e.get_function_calls() if fc.id}
        skip |= {fr.id for e in restored for fr in e.get_function_responses() if fr.id}

        service = InMemorySessionService()
        session = await service.create_session(
            app_name=app_name, user_id=user_id, session_id=session_id, state=proj.initial_state(request.session_context)
        )
        for event in [*proj.history_events(history, self.agent.name, skip_call_ids=skip), *restored]:
            await service.append_event(session, event)
        artifacts = HostArtifactService(emit, app_name, user_id, session_id, request.artifacts)
        runner = self._adk_runner(app_name, service, artifacts)
        instructions = request.payload.get("instructions")
        if isinstance(instructions, str) and instructions.strip():
            # Per-run plugin on this turn's own Runner: the agent (or App) is untouched.
            runner.plugin_manager.register_plugin(RequestInstructions(instructions.strip()))
        # ADK makes an execute_tool span for every tool it runs, when spans are recorded.
        mapper = EventMapper(emit, self.agent.name, tools_traced=records_spans())
        if request.is_resume:
            # A long-running tool's answer comes from the client, in the new message, so
            # ADK emits no event for it (nor a span): report it as the call's result here.
            for part in new_message.parts or []:
                fr = part.function_response
                if fr is not None and fr.name != proj.CONFIRMATION_CALL:
                    await mapper._response(fr, {}, ran=False)
        try:
            async for event in runner.run_async(
                user_id=user_id,
                session_id=session_id,
                new_message=new_message,
                run_config=RunConfig(streaming_mode=StreamingMode.SSE),
            ):
                await mapper.on_event(event)
        finally:
            await runner.close()
        await mapper.finish()
        if mapper.pending:
            self._pending[key] = {p.approval_id: p for p in mapper.pending}
            for p in mapper.pending:
                await emit.approval_request(
                    p.approval_id,
                    call_id=p.call.id or "",
                    name=p.call.name or "",
                    arguments=p.call.args or {},
                    message=p.hint,
                    detail=p.detail(),
                )
        else:
            self._pending.pop(key, None)

    def _adk_runner(self, app_name: str, service: InMemorySessionService, artifacts: HostArtifactService) -> AdkRunnerCore:
        if isinstance(self.entry.obj, App):
            return AdkRunnerCore(app=self.entry.obj, app_name=app_name, session_service=service, artifact_service=artifacts)
        return AdkRunnerCore(app_name=app_name, agent=self.agent, session_service=service, artifact_service=artifacts)

    def _resume(self, key: tuple[str, str, str], payload: Mapping[str, Any]) -> tuple[list[Event], types.Content]:
        answers = parse_answers(payload)
        if not answers:
            raise RunnerError("resume without an answer: payload.input holds no mcp_approval_response or function_call_output", INVALID_RESUME)
        pending = dict(self._pending.get(key, {}))
        # A restarted runner knows the pending approvals from the host's descriptions.
        for resume in host_resumes(payload):
            described = Pending.from_resume(resume)
            if described is not None:
                pending.setdefault(described.approval_id, described)
        events: list[Event] = []
        parts: list[types.Part] = []
        seen: set[str] = set()
        for answer in answers:
            match = pending.get(answer.approval_id) or next(
                (p for p in pending.values() if answer.call_id and answer.call_id in (p.call.id, p.approval_id)), None
            )
            if match is None:
                ref = answer.approval_id or answer.call_id or "?"
                raise RunnerError(f"no pending ADK approval matches {ref!r} (pending: {', '.join(pending) or 'none'})", INVALID_RESUME)
            if match.approval_id in seen:
                continue
            seen.add(match.approval_id)
            events.extend(match.restore(self.agent.name))
            parts.append(types.Part(function_response=_answer_response(match, answer)))
        return events, types.Content(role="user", parts=parts)


class RequestInstructions(BasePlugin):
    """Appends the request's `instructions` (payload.instructions) to every model call's
    system instruction, after the agent's own instruction."""

    def __init__(self, instructions: str) -> None:
        super().__init__(name="agentengine_request_instructions")
        self.instructions = instructions

    async def before_model_callback(self, *, callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
        llm_request.append_instructions([self.instructions])
        return None


def _answer_response(pending: Pending, answer: Answer) -> types.FunctionResponse:
    if pending.kind == CONFIRMATION:
        return types.FunctionResponse(id=pending.approval_id, name=proj.CONFIRMATION_CALL, response={"confirmed": answer.approve})
    if answer.output is not None:
        value = _output_value(answer.output)
        response = dict(value) if isinstance(value, Mapping) else {"result": value}
    else:
        response = {"approved": answer.approve, **({"reason": answer.reason} if answer.reason else {})}
    return types.FunctionResponse(id=pending.call.id, name=pending.call.name, response=response)


def _output_value(output: str) -> Any:
    """A tool output as ADK's function response wants it: decoded when it is JSON (the
    shared answer parser keeps outputs as text)."""
    try:
        return json.loads(output)
    except ValueError:
        return output


class EventMapper:
    """ADK events -> runner events for one run (see the module docstring's table)."""

    def __init__(self, emit: Emitter, agent_name: str, *, tools_traced: bool = False) -> None:
        self.emit = emit
        self.agent_name = agent_name
        self.tools_traced = tools_traced  # ADK makes the execute_tool spans of the tools it runs
        self.streamed_text: list[str] = []
        self.streamed_reasoning: list[str] = []
        self.pending: list[Pending] = []
        self._calls: dict[str, types.FunctionCall] = {}
        self._long_running: set[str] = set()
        self._answered: set[str] = set()
        self._events: list[Event] = []
        self._meta: dict[str, Any] | None = None

    async def on_event(self, event: Event) -> None:
        if event.author == "user":
            return
        if event.error_code and not (event.content and event.content.parts):
            message = event.error_message or "the model returned no content"
            raise RunnerError(f"ADK model error {event.error_code}: {message}", "model_error")
        parts = list(event.content.parts or []) if event.content else []
        meta = event_meta(event)
        if meta != self._meta:
            # Partials of one response share theirs: sent once, not per token.
            self._meta = meta
            await self.emit.native("adk", EVENT_META, meta)
        if event.partial:
            for part in parts:
                if part.text and part.thought:
                    self.streamed_reasoning.append(part.text)
                    await self.emit.reasoning(part.text)
                elif part.text:
                    self.streamed_text.append(part.text)
                    await self.emit.text(part.text)
            return
        self._events.append(event)
        await self._final_text(parts)
        confirmations = event.actions.requested_tool_confirmations or {}
        for part in parts:
            if part.function_call is not None:
                await self._call(event, part.function_call)
            elif part.function_response is not None:
                await self._response(part.function_response, confirmations)
        delta = proj.host_state_delta(event.actions.state_delta)
        if delta:
            await self.emit.state_delta(delta)
        usage = event.usage_metadata
        if usage is not None:
            await self.emit.usage(
                input_tokens=usage.prompt_token_count or 0,
                output_tokens=usage.candidates_token_count or 0,
                reasoning_tokens=usage.thoughts_token_count or 0,
                cached_tokens=usage.cached_content_token_count or 0,
                model=event.model_version or "",
            )

    async def _final_text(self, parts: Sequence[types.Part]) -> None:
        thoughts = "".join(p.text for p in parts if p.text and p.thought)
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if thoughts and not self.streamed_reasoning:
            await self.emit.reasoning(thoughts)
        if text:
            if not self.streamed_text:
                await self.emit.text(text)
            await self.emit.message_done(text)
        elif self.streamed_text:
            # Partials without an aggregated final event: close the message ourselves.
            await self.emit.message_done("".join(self.streamed_text))
        self.streamed_text, self.streamed_reasoning = [], []

    async def _call(self, event: Event, call: types.FunctionCall) -> None:
        call_id = call.id or ""
        if call.name == proj.CONFIRMATION_CALL:
            args = call.args or {}
            original = args.get("originalFunctionCall") or {}
            confirmation = args.get("toolConfirmation") or {}
            original_call = types.FunctionCall.model_validate(original) if isinstance(original, Mapping) else types.FunctionCall()
            self.pending.append(
                Pending(
                    kind=CONFIRMATION,
                    approval_id=call_id,
                    call=original_call,
                    hint=str(confirmation.get("hint") or "") if isinstance(confirmation, Mapping) else "",
                    payload=confirmation.get("payload") if isinstance(confirmation, Mapping) else None,
                )
            )
            return
        self._calls[call_id] = call
        if call_id in (event.long_running_tool_ids or set()):
            self._long_running.add(call_id)
        await self.emit.tool_call(call_id, call.name or "", call.args or {})

    async def _response(
        self, response: types.FunctionResponse, confirmations: Mapping[str, Any], *, ran: bool = True
    ) -> None:
        """ran: ADK ran the tool (and traced it), as opposed to a client's answer."""
        call_id = response.id or ""
        if call_id in confirmations:
            return  # the "requires confirmation" placeholder: the call is pending, not done
        if call_id in self._long_running and _is_interim(response.response):
            return  # a long-running tool's interim answer: still pending
        self._answered.add(call_id)
        result = response.response or {}
        is_error = isinstance(result, Mapping) and set(result) == {"error"}
        await self.emit.tool_result(
            call_id, response.name or "", result, is_error=is_error, traced=ran and self.tools_traced
        )

    async def finish(self) -> None:
        if self.streamed_text:
            await self.emit.message_done("".join(self.streamed_text))
            self.streamed_text = []
        for call_id in sorted(self._long_running - self._answered):
            call = self._calls[call_id]
            self.pending.append(Pending(kind=LONG_RUNNING, approval_id=call_id, call=call, hint=f"{call.name} is running"))
        for pending in self.pending:
            ids = {pending.approval_id, pending.call.id}
            pending.events = proj.dump_events(
                [e for e in self._events if ids & _ids(e)]
            )


def dev_info(obj: BaseAgent | App, agent: BaseAgent) -> dict[str, Any] | None:
    """What ADK's dev UI draws the agent from, computed by the installed google-adk as its
    dev server does: the app info (build_graph) and, for the root and every agent below it,
    the DOT graphs of its workflows in light and dark mode (build_graph_image ?node=).
    None when this google-adk has no such helpers (before 2.0) or they fail."""
    try:
        from google.adk.cli.dev_server import DevServer
        from google.adk.cli.utils.graph_serialization import serialize_app_info
        from google.adk.cli.utils.graph_visualization import plot_workflow_graph
    except ImportError:
        return _dev_info_1x(agent)
    try:

        app = obj if isinstance(obj, App) else App(name=_identifier(agent.name), root_agent=agent)
        app_info: dict[str, Any] = serialize_app_info(app)
        graphs: dict[str, dict[str, Any]] = {"light": {}, "dark": {}}
        class Navigation:
            # The dev server's own navigation: functions of the app info that call each
            # other through self (an agent with sub-agents recurses), nothing else of it.
            navigate_to_node = DevServer._navigate_to_node
            _get_all_sub_workflows = DevServer._get_all_sub_workflows

        nav: Any = Navigation()
        for node in _node_paths(app_info.get("root_agent") or {}):
            target = nav.navigate_to_node(app_info, node)
            if target is None:
                continue
            scope = {"root_agent": target} if node else app_info
            workflows = nav._get_all_sub_workflows(scope, node)
            workflows.setdefault(node, target)
            for mode, dark in (("light", False), ("dark", True)):
                dots = {}
                for path, info in workflows.items():
                    dot = plot_workflow_graph({"root_agent": info}, format="dot", dark_mode=dark)
                    if dot:
                        dots[path] = {"dotSrc": dot}
                graphs[mode][node] = dots
        return {"app_info": json.loads(json.dumps(app_info, default=str)), "graphs": graphs}
    except Exception:  # an ADK without these helpers, or an agent they cannot draw
        log.debug("no dev UI graph for the agent", exc_info=True)
        return None


def _dev_info_1x(agent: BaseAgent) -> dict[str, Any] | None:
    """google-adk 1.x's dev UI draws the root agent's graph (agent_graph.get_agent_graph,
    Graphviz DOT without highlights) and reads the app info of its build_graph route:
    the agents by name and description."""
    try:
        from google.adk.cli.agent_graph import get_agent_graph

        def dot(dark: bool) -> str:
            # get_agent_graph is a coroutine, and a thread with a running event loop
            # cannot run another: it gets a loop of its own.
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                graph = pool.submit(asyncio.run, get_agent_graph(agent, [], dark_mode=dark)).result(timeout=30)
            return str(getattr(graph, "source", "") or "")

        def info(a: BaseAgent) -> dict[str, Any]:
            out: dict[str, Any] = {"name": a.name, "description": a.description or ""}
            if a.sub_agents:
                out["sub_agents"] = [info(s) for s in a.sub_agents]
            return out

        graphs = {mode: {"": {"": {"dotSrc": dot(dark)}}} for mode, dark in (("light", False), ("dark", True))}
        return {"app_info": {"name": _identifier(agent.name), "root_agent": info(agent)}, "graphs": graphs}
    except Exception:  # no Graphviz bindings, or an agent the helper cannot draw
        log.debug("no dev UI graph for the agent", exc_info=True)
        return None


def _node_paths(agent: Mapping[str, Any], prefix: str = "") -> list[str]:
    """"" (the root) and the "a/b" path of every agent or node below it."""
    paths = [prefix]
    children = [*(agent.get("sub_agents") or []), *(agent.get("nodes") or []), *((agent.get("graph") or {}).get("nodes") or [])]
    for child in children:
        name = child.get("name") if isinstance(child, Mapping) else None
        if name:
            paths += _node_paths(child, f"{prefix}/{name}" if prefix else str(name))
    return paths


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "app"


@functools.cache
def _present(model: type, names: tuple[str, ...]) -> frozenset[str]:
    """The names among names that model has as fields (they vary across ADK versions)."""
    return frozenset(n for n in names if n in model.model_fields)  # type: ignore[attr-defined]


def event_meta(event: Event) -> dict[str, Any]:
    """The event's own fields, as ADK serialises them (camelCase, no nulls)."""
    fields = _present(type(event), META_FIELDS)
    meta: dict[str, Any] = event.model_dump(mode="json", by_alias=True, exclude_none=True, include=set(fields))
    actions_fields = _present(type(event.actions), META_ACTIONS)
    actions = event.actions.model_dump(mode="json", by_alias=True, exclude_none=True, include=set(actions_fields))
    if not actions.get("artifactDelta"):
        actions.pop("artifactDelta", None)  # ADK's default {}: nothing saved
    # The state delta as the host stores it (temp: keys dropped, as ADK's session drops
    # them), so that it is shown on this event, where ADK writes it.
    delta = proj.host_state_delta(event.actions.state_delta)
    if delta:
        actions["stateDelta"] = json.loads(json.dumps(delta, default=str))
    if actions:
        meta["actions"] = actions
    return meta


def _ids(event: Event) -> set[str | None]:
    return {c.id for c in event.get_function_calls()} | {r.id for r in event.get_function_responses()}


def _is_interim(response: Any) -> bool:
    # ADK long-running tools return None (or a status) until the real result is sent back.
    if not response:
        return True
    return isinstance(response, Mapping) and str(response.get("status", "")).lower() in ("pending", "running", "started", "in_progress")
