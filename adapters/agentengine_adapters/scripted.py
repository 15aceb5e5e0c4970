"""ScriptedChatModel: a deterministic, offline chat model for examples and tests.

It behaves like a small tool-calling LLM so real agent frameworks (create_agent,
create_deep_agent, hand-written LangGraph graphs) run end to end without a key:

- For a new user turn it calls the bound tools the user asks for (a tool's full name as a
  word, or all the words of its name but generic verbs: "weather" -> get_weather, "send
  an email" -> send_email), with arguments from `key=value` pairs in the text or made up
  from the tool's JSON schema. Otherwise it answers in text.
- Once the tools answered, it summarises their results (or their rejection) in text.
- Text streams word by word; tool calls stream as tool_call_chunks with stable ids.

The policy is a pure function of the conversation, so a run resumed in a new process
continues exactly as it would have in the old one. `responses` switches to a fixed script
(one AIMessage or string per model call, cycling) for tests that need exact turns.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

# Verbs too generic to require in the user's text when matching a tool by its name parts.
_GENERIC_WORDS = {"get", "set", "do", "run", "make", "fetch", "lookup", "call", "use", "tool"}
_KV = re.compile(r"""(\w+)=("([^"]*)"|'([^']*)'|(\S+))""")
_WORD = re.compile(r"[a-z0-9]+")


class ScriptedChatModel(BaseChatModel):
    """Offline tool-calling chat model; see the module docstring for its behaviour."""

    tools: list[dict[str, Any]] = Field(default_factory=list)
    """OpenAI-format tool schemas, set by bind_tools."""
    responses: list[Any] | None = None  # AIMessage or str items (Any: pydantic would try to coerce str into AIMessage)
    """A fixed script instead of the heuristic policy: the i-th model call of a thread
    (counted by the AI messages already in the conversation) gets responses[i % len]."""
    reasoning: bool = False
    """Stream a short reasoning block before each answer (to exercise reasoning events)."""
    delay: float = 0.0
    """Seconds to sleep before each streamed chunk (model_options.delay_ms overrides)."""
    fail_with: str | None = None
    """Raise RuntimeError(fail_with) after streaming the first chunk (error-path tests)."""

    @property
    def _llm_type(self) -> str:
        return "agentengine-scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        # Agent factories require bind_tools; keep the schemas so the policy can call them.
        schemas: list[dict[str, Any]] = []
        for tool in tools:
            try:
                schemas.append(convert_to_openai_tool(tool))
            except Exception:  # provider built-in tools have no schema we can use
                continue
        return self.model_copy(update={"tools": schemas})

    # -- generation ------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._respond(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        delay = self._delay()
        for i, chunk in enumerate(self._chunks(self._respond(messages))):
            if delay:
                time.sleep(delay)
            if run_manager and isinstance(chunk.content, str):
                run_manager.on_llm_new_token(chunk.content, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)
            if i == 0 and self.fail_with:
                raise RuntimeError(self.fail_with)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        delay = self._delay()
        for i, chunk in enumerate(self._chunks(self._respond(messages))):
            # Always yield to the loop: a cancelled run must stop between tokens.
            await asyncio.sleep(delay)
            gen = ChatGenerationChunk(message=chunk)
            if run_manager and isinstance(chunk.content, str):
                await run_manager.on_llm_new_token(chunk.content, chunk=gen)
            yield gen
            if i == 0 and self.fail_with:
                raise RuntimeError(self.fail_with)

    def _delay(self) -> float:
        options = _request_model_options()
        ms = options.get("delay_ms")
        if isinstance(ms, int | float) and ms >= 0:
            return float(ms) / 1000
        return self.delay

    # -- policy ----------------------------------------------------------------------

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        if self.responses:
            done = sum(1 for m in messages if isinstance(m, AIMessage))
            item = self.responses[done % len(self.responses)]
            message = AIMessage(content=item) if isinstance(item, str) else item.model_copy()
        else:
            message = self._decide(messages)
        message.usage_metadata = _usage(messages, message)
        return message

    def _decide(self, messages: list[BaseMessage]) -> AIMessage:
        last_human = max(
            (i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1
        )
        question = messages[last_human].text if last_human >= 0 else ""
        tail = messages[last_human + 1 :]
        if not any(isinstance(m, AIMessage) and m.tool_calls for m in tail):
            calls = _pick_tools(question, self.tools, salt=f"{len(messages)}:{question}")
            if calls:
                return AIMessage(content="", tool_calls=calls)
            return AIMessage(content=self._with_reasoning(_answer(question, messages), question))
        results = [m for m in tail if isinstance(m, ToolMessage)]
        return AIMessage(content=self._with_reasoning(_summary(results), question))

    def _with_reasoning(self, text: str, question: str) -> str | list[str | dict[str, Any]]:
        if not (self.reasoning or _request_model_options().get("reasoning")):
            return text
        thought = f"The user asked: {question[:80]}. I will answer briefly."
        return [{"type": "reasoning", "reasoning": thought}, {"type": "text", "text": text}]

    def _chunks(self, message: AIMessage) -> list[AIMessageChunk]:
        # No ids: LangChain stamps each chunk with the run's unique message id.
        mid = message.id
        out: list[AIMessageChunk] = []
        content = message.content
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "reasoning":
                out.append(AIMessageChunk(content=[block], id=mid))
                continue
            text = block if isinstance(block, str) else str(block.get("text", ""))
            out.extend(AIMessageChunk(content=tok, id=mid) for tok in _tokens(text))
        for index, call in enumerate(message.tool_calls):
            args = json.dumps(call["args"], ensure_ascii=False)
            half = len(args) // 2
            out.append(
                AIMessageChunk(
                    content="",
                    id=mid,
                    tool_call_chunks=[
                        {"name": call["name"], "args": args[:half], "id": call["id"], "index": index}
                    ],
                )
            )
            out.append(
                AIMessageChunk(
                    content="",
                    id=mid,
                    tool_call_chunks=[{"name": None, "args": args[half:], "id": None, "index": index}],
                )
            )
        out.append(
            AIMessageChunk(content="", id=mid, usage_metadata=message.usage_metadata, chunk_position="last")
        )
        return out


# -- helpers ---------------------------------------------------------------------------


def _request_model_options() -> dict[str, Any]:
    # Per-request knobs travel in the run's invocation context (payload.model_options).
    try:
        from agentengine_runner import get_current_invocation_context
    except ImportError:  # the model is usable without the runner SDK
        return {}
    ctx = get_current_invocation_context()
    return dict(ctx.model_options) if ctx else {}


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*|\s+", text) or ([text] if text else [])


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _words(text: str) -> set[str]:
    words = set(_WORD.findall(text.lower()))
    return words | {w[:-1] for w in words if w.endswith("s") and len(w) > 3}


def _pick_tools(question: str, tools: list[dict[str, Any]], *, salt: str) -> list[dict[str, Any]]:
    words = _words(question)
    lowered = question.lower()
    calls: list[dict[str, Any]] = []
    for tool in tools:
        fn = tool.get("function", {})
        name = str(fn.get("name", ""))
        if not name:
            continue
        parts = [p for p in name.lower().split("_") if p and p not in _GENERIC_WORDS]
        named = re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered) is not None
        if not named and not (parts and all(p in words for p in parts)):
            continue
        args = _make_args(fn.get("parameters") or {}, question)
        calls.append(
            {
                "name": name,
                "args": args,
                "id": f"call_{_digest(salt + name)}_{len(calls)}",
                "type": "tool_call",
            }
        )
    return calls


def _make_args(schema: dict[str, Any], question: str) -> dict[str, Any]:
    given = {m.group(1): next(g for g in m.groups()[2:] if g is not None) for m in _KV.finditer(question)}
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    numbers = [float(n) if "." in n else int(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", question)]
    args: dict[str, Any] = {}
    for key, prop in props.items():
        if key in given:
            args[key] = _coerce(given[key], prop)
        elif key in required:
            args[key] = _invent(key, prop, question, numbers)
    return args


def _coerce(raw: str, prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            return raw.lower() in {"1", "true", "yes"}
        if kind in ("array", "object"):
            return json.loads(raw)
    except ValueError:
        pass
    return raw


def _subject(question: str) -> str:
    cleaned = _KV.sub("", question).strip()
    # The first clause: "weather in Paris? also email Bob" -> "weather in Paris".
    cleaned = re.split(r"[?!.;:,\n]|\b(?:and|also|then)\b", cleaned)[0].strip() or cleaned
    for word in ("about", "regarding", "in", "for", "on", "to"):
        match = re.search(rf"\b{word}\s+(.+)$", cleaned, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return cleaned or "the request"


def _recipient(question: str) -> str:
    match = re.search(r"\bto\s+([\w.@+-]+)", question, re.IGNORECASE)
    name = match.group(1) if match else "alice"
    return name if "@" in name else f"{name.lower()}@example.com"


def _invent(key: str, prop: dict[str, Any], question: str, numbers: list[float | int]) -> Any:
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return numbers.pop(0) if numbers else 1
    if kind == "boolean":
        return True
    if kind == "array":
        item = prop.get("items") or {"type": "string"}
        return [_invent(key, item, question, numbers)]
    if kind == "object" or "properties" in prop:
        inner: dict[str, Any] = {}
        for sub, sub_prop in (prop.get("properties") or {}).items():
            inner[sub] = _invent(sub, sub_prop, question, numbers)
        return inner
    lowered = key.lower()
    if lowered == "subagent_type":  # DeepAgents' task tool: the built-in subagent
        return "general-purpose"
    if "path" in lowered or "file" in lowered:
        slug = re.sub(r"[^a-z0-9]+", "-", _subject(question).lower()).strip("-")[:40] or "notes"
        return f"/{slug}.md"
    if lowered in {"to", "recipient", "email", "address"}:
        return _recipient(question)
    if lowered in {"content", "text", "body", "message"}:
        return f"Notes on {_subject(question)}.\n"
    return _subject(question)


def _answer(question: str, messages: list[BaseMessage]) -> str:
    for message in messages:
        if isinstance(message, SystemMessage | HumanMessage):
            match = re.search(r"context:\s*(.+)", message.text, re.IGNORECASE | re.DOTALL)
            if match and match.group(1).strip():
                context = " ".join(match.group(1).split())[:160]
                return f"Based on the provided context: {context}"
    if not question:
        return "Hello! How can I help?"
    return f"You said: {question}"


def _summary(results: list[ToolMessage]) -> str:
    if not results:
        return "Done."
    parts = []
    for result in results:
        text = " ".join(result.text.split())[:200]
        if result.status == "error":
            parts.append(f"{result.name or 'the tool'} did not run ({text})")
        else:
            parts.append(f"{result.name or 'tool'} returned: {text}")
    return "Done. " + "; ".join(p.rstrip(".") for p in parts) + "."


def _usage(messages: list[BaseMessage], message: AIMessage) -> Any:
    prompt = sum(len(_tokens(m.text)) for m in messages)
    out = len(_tokens(message.text)) + sum(len(json.dumps(c["args"])) // 4 for c in message.tool_calls)
    return {"input_tokens": prompt, "output_tokens": out, "total_tokens": prompt + out}
