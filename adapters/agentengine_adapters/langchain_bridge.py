"""The LangChain bridge.

- create_agent graphs (LangChain v1) are LangGraph graphs: the LangGraph bridge runs them,
  reporting framework "langchain".
- any other Runnable (LCEL chains, chat models, RunnableLambda...) is streamed once with
  astream_events(version="v2"): chat model tokens -> text/reasoning/tool call deltas,
  model ends -> tool calls and usage, tool start/end -> tool call/result, custom events ->
  text or native. Its input comes from ksadk_prepare_input(payload, session_context)
  when the module defines it (KsADK documents this hook but never calls it), else a
  default (messages for chat models, named fields for prompt chains, else the text).
"""

from __future__ import annotations

import json
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
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .config import Settings
from .hooks import PREPARE_INPUT, PREPARE_STATE, call_hook, find_hook
from .inputs import runnable_input
from .langgraph_bridge import GraphRunner
from .loader import LoadedEntry, module_description
from .runconfig import invocation_context, run_config
from .stream import EventWriter

OUTPUT_KEYS = ("output", "answer", "text", "result", "content", "response")


class LangChainGraphRunner(GraphRunner):
    framework = "langchain"

    def __init__(self, settings: Settings, entry: LoadedEntry, **kwargs: Any) -> None:
        super().__init__(settings, entry, **kwargs)
        # ksadk_prepare_input is the LangChain hook; ksadk_prepare_state is accepted too.
        self.hook = find_hook(entry.module, PREPARE_INPUT, PREPARE_STATE)

    def _hook_input(
        self, value: Any, keys: Sequence[str] | None, request: RunRequest, existing: Sequence[Any]
    ) -> Any:
        # A returned string is the user's message even where the graph's schema is unknown.
        if keys is None and isinstance(value, str):
            keys = ["messages"]
        return super()._hook_input(value, keys, request, existing)


class RunnableRunner(Runner):
    framework = "langchain"

    def __init__(self, settings: Settings, entry: LoadedEntry) -> None:
        self.settings = settings
        self.entry = entry
        self.hook = find_hook(entry.module, PREPARE_INPUT, PREPARE_STATE)

    def describe(self) -> Description:
        return Description(
            framework=self.framework,
            agent_name=self.settings.agent_name,
            description=module_description(self.entry.module),
            capabilities=Capabilities(resume=False),
        )

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        if request.is_resume:
            raise RunnerError(
                "this LangChain runnable cannot be resumed: it has no interrupts "
                "(use create_agent or a LangGraph graph for approvals)",
                code="invalid_resume",
            )
        runnable = self.entry.obj
        if self.hook is not None:
            value = await call_hook(self.hook[1], request.payload, request.session_context)
        else:
            value = runnable_input(runnable, request.payload, request.session_context)
        config = run_config(request, invocation_context(request, self.framework))
        writer = EventWriter(emit, self.framework)
        writer.tools_traced = "callbacks" in config  # run_config's span handler
        calls = _CallIds()
        output: Any = None
        async for ev in runnable.astream_events(value, config, version="v2"):
            kind, data = ev["event"], ev.get("data") or {}
            if kind == "on_chat_model_stream":
                await writer.chunk(data["chunk"])
            elif kind == "on_chat_model_end" and isinstance(data.get("output"), AIMessage):
                calls.add(data["output"])
                await writer.message(data["output"])
            elif kind == "on_llm_stream":
                chunk = data.get("chunk")
                await writer.text(getattr(chunk, "text", "") or "")
            elif kind == "on_tool_start":
                call_id = calls.take(ev["name"], data.get("input"), ev["run_id"])
                calls.by_run[ev["run_id"]] = call_id
                await writer.tool_call(call_id, ev["name"], _args(data.get("input")))
            elif kind == "on_tool_end":
                await self._tool_end(ev, data, calls, writer)
            elif kind == "on_custom_event":
                await writer.custom(data)
            elif kind == "on_chain_end" and not ev.get("parent_ids"):
                output = data.get("output")
        await writer.finish()
        if not writer.any_text and output is not None:
            await writer.text(output_text(output))
            await writer.end_message()

    async def _tool_end(self, ev: Mapping[str, Any], data: Mapping[str, Any], calls: _CallIds, writer: EventWriter) -> None:
        call_id = calls.by_run.get(ev["run_id"], str(ev["run_id"]))
        out = data.get("output")
        if isinstance(out, ToolMessage):
            if not out.tool_call_id:
                out.tool_call_id = call_id
            await writer.tool_result(out)
            return
        message = ToolMessage(content=out if isinstance(out, str) else json.dumps(out, default=str), tool_call_id=call_id, name=ev["name"])
        await writer.tool_result(message)


class _CallIds:
    """Tool call ids for tool callbacks, which do not carry them: the model's call with the
    same name (and args) when there is one, else the callback's run id."""

    def __init__(self) -> None:
        self.open: list[dict[str, Any]] = []
        self.by_run: dict[Any, str] = {}

    def add(self, message: AIMessage) -> None:
        self.open.extend(dict(c) for c in message.tool_calls if c.get("id"))

    def take(self, name: str, raw_input: Any, run_id: Any) -> str:
        if isinstance(raw_input, Mapping) and raw_input.get("type") == "tool_call" and raw_input.get("id"):
            self.open = [c for c in self.open if c["id"] != raw_input["id"]]
            return str(raw_input["id"])
        args = _args(raw_input)
        for exact in (True, False):
            for call in self.open:
                if call["name"] == name and (not exact or call.get("args") == args):
                    self.open.remove(call)
                    return str(call["id"])
        return str(run_id)


def _args(raw: Any) -> Any:
    if isinstance(raw, Mapping):
        if raw.get("type") == "tool_call":
            return dict(raw.get("args") or {})
        return dict(raw)
    if isinstance(raw, str):
        return {"input": raw}
    return {} if raw is None else {"input": raw}


def output_text(output: Any) -> str:
    """The text of a chain's final output (never by running anything again)."""
    if isinstance(output, str):
        return output
    if isinstance(output, BaseMessage):
        return output.text
    if isinstance(output, Mapping):
        for key in OUTPUT_KEYS:
            if isinstance(output.get(key), str):
                return str(output[key])
        messages = output.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], BaseMessage):
            return messages[-1].text
    return json.dumps(output, ensure_ascii=False, default=str)
