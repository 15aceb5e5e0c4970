"""OpenAiAdkLlm: a google-adk BaseLlm on any OpenAI-compatible Chat Completions endpoint.

google-adk ships no native OpenAI model; its LiteLlm needs the unpinned `litellm`, so
models.adk_model() uses this instead, built on the pinned `openai` package.

    from agentengine_adapters.adk_openai import OpenAiAdkLlm
    root_agent = LlmAgent(name="assistant", model=OpenAiAdkLlm(), ...)

- Key / endpoint / model: the fields, else OPENAI_API_KEY, OPENAI_BASE_URL and
  OPENAI_MODEL_NAME (default gpt-4o-mini), as models.chat_model() does.
- Request: config.system_instruction -> one system message; user / model contents -> user /
  assistant messages (text, images; function_call parts -> assistant tool_calls with their
  ADK ids; function_response parts -> tool messages with the same tool_call_id);
  config.tools function declarations -> OpenAI function tools (JSON schema). Generation
  settings of the config (temperature, max_output_tokens, ...) apply, then the run's
  payload.model_options (as chat_model()), then `request_options`.
- stream=True (RunConfig(streaming_mode=SSE)): text (and `reasoning_content` of servers that
  send it, as thought parts) as partial LlmResponses, then one aggregated non-partial
  response with the full text and the tool calls (deltas accumulated by index) as
  function_call parts, plus usage. stream=False: that final response alone.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field, PrivateAttr

from .models import DEFAULT_OPENAI_MODEL, _request_overrides

if TYPE_CHECKING:
    from openai import AsyncOpenAI

FINISH_REASONS = {
    "stop": types.FinishReason.STOP,
    "tool_calls": types.FinishReason.STOP,
    "function_call": types.FinishReason.STOP,
    "length": types.FinishReason.MAX_TOKENS,
    "content_filter": types.FinishReason.SAFETY,
}

# GenerateContentConfig field -> Chat Completions parameter.
CONFIG_OPTIONS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "stop_sequences": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}

# google.genai Schema keys JSON Schema does not know; strict servers reject them.
GENAI_ONLY_KEYS = {"property_ordering", "propertyOrdering"}


class OpenAiAdkLlm(BaseLlm):
    model: str = Field(default_factory=lambda: os.environ.get("OPENAI_MODEL_NAME") or DEFAULT_OPENAI_MODEL)
    # exclude/repr: the key must not end up in logs, traces or a dumped agent config.
    api_key: str | None = Field(default=None, exclude=True, repr=False)
    base_url: str | None = None
    request_options: dict[str, Any] = Field(default_factory=dict)
    _client: tuple[asyncio.AbstractEventLoop, AsyncOpenAI] | None = PrivateAttr(default=None)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        params = self._params(llm_request)
        client = self._client_for_loop()
        if not stream:
            completion = await client.chat.completions.create(**params)
            choice = completion.choices[0] if completion.choices else None
            message = choice.message if choice else None
            turn = _Turn(finish_reason=choice.finish_reason if choice else None)
            if message is not None:
                turn.text = message.content or ""
                turn.reasoning = getattr(message, "reasoning_content", None) or ""
                for i, call in enumerate(message.tool_calls or []):
                    fn = getattr(call, "function", None)  # custom (non-function) tool calls have none
                    if fn is not None:
                        turn.calls[i] = _Call(call.id or "", fn.name or "", fn.arguments or "")
            yield turn.response(_usage(completion.usage))
            return

        turn = _Turn()
        usage = None
        # include_usage: the last chunk (no choices) carries the token counts.
        chunks = await client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True})
        async for chunk in chunks:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                delta = choice.delta
                if choice.finish_reason:
                    turn.finish_reason = choice.finish_reason
                reasoning = getattr(delta, "reasoning_content", None)
                if reasoning:
                    turn.reasoning += reasoning
                    yield _partial(types.Part(text=reasoning, thought=True))
                if delta.content:
                    turn.text += delta.content
                    yield _partial(types.Part(text=delta.content))
                for tc in delta.tool_calls or []:
                    # Only the first delta of a call has its id and name; later ones append
                    # argument text to the call at the same index.
                    call = turn.calls.setdefault(tc.index, _Call())
                    call.id = call.id or tc.id or ""
                    if tc.function is not None:
                        call.name = call.name or tc.function.name or ""
                        call.arguments += tc.function.arguments or ""
        yield turn.response(_usage(usage))

    def _params(self, request: LlmRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": to_messages(request)}
        tools = to_tools(request.config.tools)
        if tools:
            params["tools"] = tools
        config = request.config
        for name, option in CONFIG_OPTIONS.items():
            value = getattr(config, name, None)
            if value is not None:
                params[option] = value
        params.update(_request_overrides())
        params.update(self.request_options)
        return params

    def _client_for_loop(self) -> AsyncOpenAI:
        # httpx connections belong to the event loop that opened them: reuse the client
        # within a loop (one per runner process), make a new one when the loop changes
        # (asyncio.run per call in tests and scripts).
        from openai import AsyncOpenAI

        loop = asyncio.get_running_loop()
        if self._client is None or self._client[0] is not loop:
            client = AsyncOpenAI(
                api_key=self.api_key or os.environ.get("OPENAI_API_KEY"),
                base_url=self.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            )
            self._client = (loop, client)
        return self._client[1]


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""

    def part(self) -> types.Part:
        try:
            args = json.loads(self.arguments) if self.arguments.strip() else {}
        except json.JSONDecodeError:
            args = None
        if not isinstance(args, dict):
            # Keep a malformed call visible (the tool then reports the bad arguments)
            # rather than dropping it and leaving the model's turn without its call.
            args = {"_raw_arguments": self.arguments}
        return types.Part(function_call=types.FunctionCall(id=self.id or None, name=self.name, args=args))


@dataclass
class _Turn:
    text: str = ""
    reasoning: str = ""
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None

    def response(self, usage: types.GenerateContentResponseUsageMetadata | None) -> LlmResponse:
        parts: list[types.Part] = []
        if self.reasoning:
            parts.append(types.Part(text=self.reasoning, thought=True))
        if self.text:
            parts.append(types.Part(text=self.text))
        parts.extend(self.calls[i].part() for i in sorted(self.calls))
        return LlmResponse(
            content=types.Content(role="model", parts=parts),
            partial=False,
            turn_complete=True,
            finish_reason=FINISH_REASONS.get(self.finish_reason or "", types.FinishReason.STOP),
            usage_metadata=usage,
        )


def _partial(part: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)


def _usage(usage: Any) -> types.GenerateContentResponseUsageMetadata | None:
    if usage is None:
        return None
    completion = getattr(usage, "completion_tokens_details", None)
    prompt = getattr(usage, "prompt_tokens_details", None)
    # OpenAI counts reasoning inside completion_tokens; both go on as OpenAI reports them.
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=usage.prompt_tokens,
        candidates_token_count=usage.completion_tokens,
        total_token_count=usage.total_tokens,
        thoughts_token_count=getattr(completion, "reasoning_tokens", None),
        cached_content_token_count=getattr(prompt, "cached_tokens", None),
    )


# -- request conversion ------------------------------------------------------------------


def to_messages(request: LlmRequest) -> list[dict[str, Any]]:
    """ADK contents (+ the system instruction) as Chat Completions messages."""
    messages: list[dict[str, Any]] = []
    system = _system_text(request.config.system_instruction)
    if system:
        messages.append({"role": "system", "content": system})
    for content in request.contents:
        messages.extend(_content_messages(content))
    return messages


def _system_text(instruction: Any) -> str:
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "\n".join(p.text for p in instruction.parts or [] if p.text)
    if isinstance(instruction, types.Part):
        return instruction.text or ""
    if isinstance(instruction, list):
        return "\n".join(_system_text(i) for i in instruction if i is not None)
    return str(instruction)


def _content_messages(content: types.Content) -> list[dict[str, Any]]:
    parts = content.parts or []
    if content.role == "model":
        text = "".join(p.text for p in parts if p.text and not p.thought)
        calls = [
            {
                "id": p.function_call.id or p.function_call.name,
                "type": "function",
                "function": {"name": p.function_call.name, "arguments": json.dumps(p.function_call.args or {})},
            }
            for p in parts
            if p.function_call is not None
        ]
        if not text and not calls:
            return []
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        return [message]
    # User contents: tool messages first, since they must directly follow the assistant
    # message whose tool_calls they answer.
    messages: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": p.function_response.id or p.function_response.name,
            "content": json.dumps(p.function_response.response or {}, default=str),
        }
        for p in parts
        if p.function_response is not None
    ]
    blocks = [b for b in (_user_block(p) for p in parts) if b is not None]
    if blocks:
        if all(b["type"] == "text" for b in blocks):
            messages.append({"role": "user", "content": "".join(b["text"] for b in blocks)})
        else:
            messages.append({"role": "user", "content": blocks})
    return messages


def _user_block(part: types.Part) -> dict[str, Any] | None:
    if part.text and not part.thought:
        return {"type": "text", "text": part.text}
    blob = part.inline_data
    if blob is not None and blob.data and (blob.mime_type or "").startswith("image/"):
        url = f"data:{blob.mime_type};base64,{base64.b64encode(blob.data).decode()}"
        return {"type": "image_url", "image_url": {"url": url}}
    return None


def to_tools(tools: Sequence[Any] | None) -> list[dict[str, Any]]:
    """The function declarations of config.tools as OpenAI function tools."""
    result: list[dict[str, Any]] = []
    for tool in tools or []:
        for decl in getattr(tool, "function_declarations", None) or []:
            result.append({
                "type": "function",
                "function": {"name": decl.name, "description": decl.description or "", "parameters": _parameters(decl)},
            })
    return result


def _parameters(decl: types.FunctionDeclaration) -> dict[str, Any]:
    # ADK 2.x FunctionTools declare parameters_json_schema (already JSON Schema); older
    # or hand-written declarations use a genai Schema with upper-case type names.
    schema: Any
    if decl.parameters_json_schema:
        schema = json.loads(json.dumps(decl.parameters_json_schema, default=str))
    elif decl.parameters is not None:
        schema = decl.parameters.to_json_dict()
    else:
        schema = {}
    converted = _json_schema(schema)
    out: dict[str, Any] = converted if isinstance(converted, dict) else {}
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out


def _json_schema(value: Any) -> Any:
    """Lower-cased type names, genai-only keys dropped, recursively."""
    if isinstance(value, list):
        return [_json_schema(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in GENAI_ONLY_KEYS:
            continue
        if key == "type":
            out[key] = [t.lower() for t in item] if isinstance(item, list) else str(item).lower()
        elif key in ("properties", "$defs", "defs", "definitions"):
            out[key] = {k: _json_schema(v) for k, v in (item or {}).items()}
        elif key in ("items", "any_of", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            out["anyOf" if key == "any_of" else key] = _json_schema(item)
        else:
            out[key] = item
    return out
