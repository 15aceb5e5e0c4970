"""An offline stand-in for a chat model, so this project runs without an API key.

OfflineChatModel is a LangChain chat model with a few fixed rules instead of a language
model. It is part of this project, not of any library: change it, or delete this file once
agent.py uses a real model (agent.py imports it only when OPENAI_API_KEY is unset).

The rules, for the latest user message:
- If it names one of the bound tools ("weather" -> get_weather, "send an email" ->
  send_email, or the tool's full name), call those tools. Arguments come from key=value
  pairs in the message, else are made up from the tool's schema ("weather in Paris" ->
  city="Paris").
- Once the tools have answered, summarise their results: "Done. get_weather returned: ...".
- Otherwise answer "You said: <message>", or quote the text after "Context:" if the
  message has one.
Text streams word by word. The rules depend only on the conversation, so a run resumed
later (after an approval, say) continues the same way.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

# Words too common to count when matching a tool by the parts of its name.
GENERIC_WORDS = {"get", "set", "do", "run", "make", "fetch", "lookup", "call", "use", "tool"}
KEY_VALUE = re.compile(r"""(\w+)=("([^"]*)"|'([^']*)'|(\S+))""")


class OfflineChatModel(BaseChatModel):
    """A tool-calling chat model that follows the rules in this module's docstring."""

    tools: list[dict[str, Any]] = []
    """The bound tools as OpenAI function schemas (set by bind_tools)."""

    @property
    def _llm_type(self) -> str:
        return "offline"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineChatModel:
        schemas = []
        for tool in tools:
            try:
                schemas.append(convert_to_openai_tool(tool))
            except Exception:  # a provider's built-in tool has no schema to follow
                continue
        return self.model_copy(update={"tools": schemas})

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in _chunks(self.reply(messages)):
            if run_manager and chunk.content:
                run_manager.on_llm_new_token(chunk.content, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in _chunks(self.reply(messages)):
            await asyncio.sleep(0)  # a cancelled run stops between words
            if run_manager and chunk.content:
                await run_manager.on_llm_new_token(chunk.content, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        """The next message of the conversation, by the rules above."""
        last_user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        question = _text(messages[last_user]) if last_user >= 0 else ""
        since = messages[last_user + 1 :]
        if any(isinstance(m, AIMessage) and m.tool_calls for m in since):
            message = AIMessage(content=_summary([m for m in since if isinstance(m, ToolMessage)]))
        else:
            calls = _tool_calls(question, self.tools, seed=f"{len(messages)}:{question}")
            message = AIMessage(content="", tool_calls=calls) if calls else AIMessage(content=_answer(question))
        asked, said = len(question.split()), len(_text(message).split()) + len(message.tool_calls)
        message.usage_metadata = {"input_tokens": asked, "output_tokens": said, "total_tokens": asked + said}
        return message


def _chunks(message: AIMessage) -> list[AIMessageChunk]:
    chunks = [AIMessageChunk(content=word) for word in re.findall(r"\s*\S+\s*", _text(message))]
    for index, call in enumerate(message.tool_calls):
        args = json.dumps(call["args"])
        chunks.append(AIMessageChunk(content="", tool_call_chunks=[
            {"name": call["name"], "args": args, "id": call["id"], "index": index}]))
    chunks.append(AIMessageChunk(content="", usage_metadata=message.usage_metadata))
    return chunks


def _text(message: BaseMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in message.content)


def _tool_calls(question: str, tools: list[dict[str, Any]], seed: str) -> list[dict[str, Any]]:
    lowered = question.lower()
    words = set(re.findall(r"[a-z0-9]+", lowered))
    words |= {w[:-1] for w in words if w.endswith("s") and len(w) > 3}  # "emails" -> "email"
    calls = []
    for tool in tools:
        function = tool.get("function", {})
        name = str(function.get("name", ""))
        parts = [p for p in name.lower().split("_") if p and p not in GENERIC_WORDS]
        named = re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered)
        if name and (named or (parts and all(p in words for p in parts))):
            call_id = "call_" + hashlib.sha1(f"{seed}:{name}".encode()).hexdigest()[:12]
            args = _arguments(function.get("parameters") or {}, question)
            calls.append({"name": name, "args": args, "id": call_id, "type": "tool_call"})
    return calls


def _arguments(schema: dict[str, Any], question: str) -> dict[str, Any]:
    given = {m.group(1): next(g for g in m.groups()[2:] if g is not None) for m in KEY_VALUE.finditer(question)}
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        if key in given:
            args[key] = _convert(given[key], prop)
        elif key in required:
            args[key] = _make_up(key, prop, question)
    return args


def _convert(raw: str, prop: dict[str, Any]) -> Any:
    try:
        if prop.get("type") == "integer":
            return int(raw)
        if prop.get("type") == "number":
            return float(raw)
        if prop.get("type") in ("array", "object"):
            return json.loads(raw)
    except ValueError:
        pass
    if prop.get("type") == "boolean":
        return raw.lower() in ("1", "true", "yes")
    return raw


def _make_up(key: str, prop: dict[str, Any], question: str) -> Any:
    """A plausible value for a required argument the user did not give."""
    kind = prop.get("type")
    if prop.get("enum"):
        return prop["enum"][0]
    if kind in ("integer", "number"):
        numbers = re.findall(r"(?<![\w.])-?\d+", question)
        return int(numbers[0]) if numbers else 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [_make_up(key, prop.get("items") or {"type": "string"}, question)]
    if kind == "object" or "properties" in prop:
        return {k: _make_up(k, p, question) for k, p in (prop.get("properties") or {}).items()}
    key = key.lower()
    subject = _subject(question)
    if key == "subagent_type":  # DeepAgents' task tool: its built-in subagent
        return "general-purpose"
    if "path" in key or "file" in key:
        return "/" + (re.sub(r"[^a-z0-9]+", "-", subject.lower()).strip("-")[:40] or "notes") + ".md"
    if key in ("to", "recipient", "email", "address"):
        match = re.search(r"\bto\s+([\w.@+-]+)", question, re.IGNORECASE)
        name = match.group(1) if match else "alice"
        return name if "@" in name else f"{name.lower()}@example.com"
    if key in ("content", "text", "body", "message"):
        return f"Notes on {subject}.\n"
    return subject


def _subject(question: str) -> str:
    """What the first clause is about: "the weather in Paris? and ..." -> "Paris"."""
    clause = KEY_VALUE.sub("", question).strip()
    clause = re.split(r"[?!.;:,\n]|\b(?:and|also|then)\b", clause)[0].strip() or clause
    for word in ("about", "regarding", "in", "for", "on", "to"):
        match = re.search(rf"\b{word}\s+(.+)$", clause, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return clause or "the request"


def _answer(question: str) -> str:
    match = re.search(r"context:\s*(.+)", question, re.IGNORECASE | re.DOTALL)
    if match and match.group(1).strip():
        return "Based on the provided context: " + " ".join(match.group(1).split())[:160]
    return f"You said: {question}" if question else "Hello! How can I help?"


def _summary(results: list[ToolMessage]) -> str:
    parts = []
    for result in results:
        text = " ".join(_text(result).split())[:200].rstrip(".")
        if result.status == "error":
            parts.append(f"{result.name or 'the tool'} did not run ({text})")
        else:
            parts.append(f"{result.name or 'the tool'} returned: {text}")
    return "Done. " + "; ".join(parts) + "." if parts else "Done."
