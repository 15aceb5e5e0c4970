"""An offline stand-in for a model, so this project runs without an API key.

OfflineAdkModel is a google-adk BaseLlm with a few fixed rules instead of a language
model. It is part of this project, not of any library: change it, or delete this file once
agent.py uses a real model (agent.py imports it only when OPENAI_API_KEY is unset).

The rules, for the latest user message:
- If it names one of the agent's tools ("weather" -> get_weather, "delete file" ->
  delete_file, or the tool's full name), call those tools. Arguments come from key=value
  pairs in the message ("path=/tmp/x"), else are made up ("weather in Paris" -> city="Paris").
- Once the tools have answered, list their results: "Tool results:\\nget_weather: {...}".
- Otherwise answer "You said: <message>".
When the runner streams (RunConfig(streaming_mode=StreamingMode.SSE)) text comes word by
word as partial responses, then once whole, as Gemini models do.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

# Words too common to count when matching a tool by the parts of its name.
GENERIC_WORDS = {"get", "set", "do", "run", "make", "fetch", "call", "use", "tool"}
KEY_VALUE = re.compile(r"(\w+)=(\"[^\"]*\"|'[^']*'|\S+)")


class OfflineAdkModel(BaseLlm):
    """A tool-calling model that follows the rules in this module's docstring."""

    model: str = "offline"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        contents = llm_request.contents
        question = _last_user_text(contents)
        results = [p.function_response for p in (contents[-1].parts or [])] if contents else []
        results = [r for r in results if r is not None]
        calls = [] if results else _tool_calls(question, llm_request.tools_dict, seed=f"{len(contents)}:{question}")
        if calls:
            parts = [types.Part(function_call=call) for call in calls]
            yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=_usage(question, len(calls)))
            return
        if results:
            answer = "Tool results:\n" + "\n".join(
                f"{r.name}: {json.dumps(r.response, sort_keys=True, default=str)}" for r in results
            )
        else:
            answer = f"You said: {question}"
        if stream:
            for word in re.findall(r"\S+\s*|\s+", answer):
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=word)]), partial=True)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=answer)]),
            usage_metadata=_usage(question, len(answer.split())),
            turn_complete=True,
            finish_reason=types.FinishReason.STOP,
        )


def _usage(question: str, output_tokens: int) -> types.GenerateContentResponseUsageMetadata:
    prompt = len(question.split())
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=output_tokens, total_token_count=prompt + output_tokens
    )


def _last_user_text(contents: list[types.Content]) -> str:
    for content in reversed(contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text and not p.thought]
            if texts:
                return " ".join(texts)
    return ""


def _tool_calls(question: str, tools: dict[str, Any], seed: str) -> list[types.FunctionCall]:
    lowered = question.lower()
    words = set(re.findall(r"[a-z0-9]+", lowered))
    words |= {w[:-1] for w in words if w.endswith("s") and len(w) > 3}  # "files" -> "file"
    calls = []
    for name, tool in tools.items():
        if name.startswith("adk_") or name == "transfer_to_agent":
            continue  # ADK's own tools
        parts = [p for p in name.lower().split("_") if p and p not in GENERIC_WORDS]
        named = re.search(rf"\b{re.escape(name.lower())}\b", lowered)
        if named or (parts and all(p in words for p in parts)):
            call_id = "call_" + hashlib.sha256(f"{seed}|{name}".encode()).hexdigest()[:16]
            calls.append(types.FunctionCall(id=call_id, name=name, args=_arguments(tool, question)))
    return calls


def _arguments(tool: Any, question: str) -> dict[str, Any]:
    given = {k: v.strip("\"'") for k, v in KEY_VALUE.findall(question)}
    args: dict[str, Any] = {}
    for key, kind in _parameters(tool).items():
        raw = given.get(key)
        if kind == "integer":
            args[key] = int(raw) if raw and raw.lstrip("-").isdigit() else 1
        elif kind == "number":
            args[key] = float(raw) if raw and re.fullmatch(r"-?\d+(\.\d+)?", raw) else 1.0
        elif kind == "boolean":
            args[key] = (raw or "true").lower() in ("1", "true", "yes")
        else:
            args[key] = raw if raw is not None else _subject(question)
    return args


def _parameters(tool: Any) -> dict[str, str]:
    """A tool's parameters: name -> JSON type ("string", "integer", ...)."""
    declaration = tool._get_declaration() if hasattr(tool, "_get_declaration") else None
    if declaration is None:
        return {}
    schema = getattr(declaration, "parameters_json_schema", None)
    if isinstance(schema, dict):
        return {k: str((v or {}).get("type") or "string").lower() for k, v in (schema.get("properties") or {}).items()}
    props = dict(declaration.parameters.properties or {}) if declaration.parameters else {}
    return {k: str(getattr(v.type, "value", v.type) or "string").lower() for k, v in props.items()}


def _subject(question: str) -> str:
    """What the first clause is about: "the weather in Paris? and ..." -> "Paris"."""
    clause = KEY_VALUE.sub("", question).strip()
    clause = re.split(r"[?!.;:,\n]|\b(?:and|also|then)\b", clause)[0].strip() or clause
    for word in ("about", "regarding", "in", "for", "on", "to"):
        match = re.search(rf"\b{word}\s+(.+)$", clause, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return clause or "example"
