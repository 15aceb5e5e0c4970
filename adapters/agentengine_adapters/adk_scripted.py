"""ScriptedAdkLlm: an offline, deterministic google-adk BaseLlm for examples and tests.

The ADK twin of scripted.ScriptedChatModel (same rules, ADK types):

- After tool results (the last content holds function responses) it summarises them:
  "name: <response json>" lines.
- Otherwise it calls the agent's tools the user asks for: a tool's full name as a word, or
  all words of its name except generic verbs ("weather" -> get_weather, "send an email" ->
  send_email), with key=value arguments from the text or values made up from the tool's
  declared parameters. Call ids are deterministic ("call_<hash>").
- Otherwise it answers "You said: <text>".

With stream=True (RunConfig(streaming_mode=SSE)) text comes as partial LlmResponses word by
word, then one aggregated non-partial response, as Gemini does. `responses` replaces the
rules with a fixed script (str = text, dict = {"tool": name, "args": {...}}); `reasoning`
adds a thought part first; `fail_with` raises; every request is kept in `requests`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

GENERIC_WORDS = {"get", "set", "do", "run", "make", "fetch", "call", "use", "tool", "the", "a", "an"}
KEY_VALUE = re.compile(r"(\w+)=(\"[^\"]*\"|'[^']*'|\S+)")


class ScriptedAdkLlm(BaseLlm):
    model: str = "scripted"
    responses: list[str | dict[str, Any]] = Field(default_factory=list)
    reasoning: str = ""
    fail_with: str = ""
    requests: list[LlmRequest] = Field(default_factory=list, exclude=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        if self.fail_with:
            raise RuntimeError(self.fail_with)
        step = self._scripted_step(llm_request)
        calls = self._tool_calls(llm_request, step)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=_count_words(llm_request.contents),
            candidates_token_count=0,
            total_token_count=0,
        )
        if calls:
            usage.candidates_token_count = len(calls)
            usage.total_token_count = (usage.prompt_token_count or 0) + len(calls)
            parts = [types.Part(function_call=c) for c in calls]
            yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)
            return
        answer = step if isinstance(step, str) else self._answer(llm_request)
        thought = [types.Part(text=self.reasoning, thought=True)] if self.reasoning else []
        if stream:
            if thought:
                yield LlmResponse(content=types.Content(role="model", parts=thought), partial=True)
            for word in _words(answer):
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=word)]), partial=True)
        usage.candidates_token_count = len(answer.split())
        usage.total_token_count = (usage.prompt_token_count or 0) + usage.candidates_token_count
        parts = [*thought, types.Part(text=answer)]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=usage,
            turn_complete=True,
            finish_reason=types.FinishReason.STOP,
        )

    # -- the rules -------------------------------------------------------------------------

    def _scripted_step(self, request: LlmRequest) -> str | dict[str, Any] | None:
        if not self.responses:
            return None
        index = len(self.requests) - 1
        return self.responses[min(index, len(self.responses) - 1)]

    def _tool_calls(self, request: LlmRequest, step: str | dict[str, Any] | None) -> list[types.FunctionCall]:
        seed = f"{len(request.contents)}:{_last_text(request.contents)}"
        if isinstance(step, dict):
            name = str(step.get("tool") or step.get("name") or "")
            return [types.FunctionCall(id=_call_id(seed, name, 0), name=name, args=dict(step.get("args") or {}))]
        if step is not None or _last_is_tool_response(request.contents):
            return []
        text = _last_text(request.contents)
        words = set(re.findall(r"[a-z0-9]+", text.lower()))
        calls: list[types.FunctionCall] = []
        for name, tool in request.tools_dict.items():
            if name.startswith("adk_") or name == "transfer_to_agent":
                continue
            if not _asked_for(name, text.lower(), words):
                continue
            args = _arguments(tool, text)
            calls.append(types.FunctionCall(id=_call_id(seed, name, len(calls)), name=name, args=args))
        return calls

    def _answer(self, request: LlmRequest) -> str:
        last = request.contents[-1] if request.contents else None
        responses = [p.function_response for p in (last.parts or []) if p.function_response] if last else []
        if responses:
            lines = [f"{r.name}: {json.dumps(r.response, sort_keys=True, default=str)}" for r in responses]
            return "Tool results:\n" + "\n".join(lines)
        return f"You said: {_last_text(request.contents)}"


def _asked_for(name: str, text: str, words: set[str]) -> bool:
    if re.search(rf"\b{re.escape(name.lower())}\b", text):
        return True
    parts = [w for w in name.lower().split("_") if w and w not in GENERIC_WORDS]
    return bool(parts) and all(p in words or p.rstrip("s") in words for p in parts)


def _arguments(tool: Any, text: str) -> dict[str, Any]:
    given = {k: v.strip("\"'") for k, v in KEY_VALUE.findall(text)}
    args: dict[str, Any] = {}
    for key, kind in _parameters(tool).items():
        raw = given.get(key)
        if kind == "integer":
            args[key] = int(raw) if raw and raw.lstrip("-").isdigit() else 1
        elif kind == "number":
            try:
                args[key] = float(raw) if raw else 1.0
            except ValueError:
                args[key] = 1.0
        elif kind == "boolean":
            args[key] = (raw or "true").lower() in ("1", "true", "yes")
        else:
            args[key] = raw if raw is not None else "example"
    return args


def _parameters(tool: Any) -> dict[str, str]:
    """Parameter name -> JSON type ("string", "integer", ...) of a tool's declaration."""
    declaration = tool._get_declaration() if hasattr(tool, "_get_declaration") else None
    if declaration is None:
        return {}
    schema = declaration.parameters_json_schema
    if isinstance(schema, dict):
        props = schema.get("properties") or {}
        return {k: str((v or {}).get("type") or "string").lower() for k, v in props.items()}
    parameters = declaration.parameters
    props_typed = dict(parameters.properties or {}) if parameters is not None else {}
    return {k: str(getattr(v.type, "value", v.type) or "string").lower() for k, v in props_typed.items()}


def _call_id(seed: str, name: str, index: int) -> str:
    digest = hashlib.sha256(f"{seed}|{name}|{index}".encode()).hexdigest()[:16]
    return f"call_{digest}"


def _last_text(contents: Sequence[types.Content]) -> str:
    for content in reversed(contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text and not p.thought]
            if texts:
                return " ".join(texts)
    return ""


def _last_is_tool_response(contents: Sequence[types.Content]) -> bool:
    return bool(contents) and any(p.function_response for p in contents[-1].parts or [])


def _count_words(contents: Sequence[types.Content]) -> int:
    return sum(len((p.text or "").split()) for c in contents for p in c.parts or [])


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)
