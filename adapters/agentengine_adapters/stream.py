"""Translating LangChain/LangGraph output into runner events.

One EventWriter per run. It is fed AIMessageChunks (token streaming), complete messages
(node updates / model ends) and custom writer payloads, and keeps the bookkeeping that
makes the event stream consistent:

- tool calls keep the model's own ids from the first argument delta to the result;
- each tool call / result is sent once even when a message shows up again (a subgraph's
  messages reappear in its parent's update);
- the turn's answer is what streamed, as KsADK reads it: a message whose text never
  streamed (a node that builds an AIMessage itself) is sent whole only while no text has
  streamed in the run and its text is not one already sent — a node that writes the
  streamed answer again (a `finalize_answer` after a specialist) adds no second copy;
- usage is counted once per model message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentengine_runner import Emitter
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

from .interrupts import Approval
from .think import ThinkSplitter


class EventWriter:
    def __init__(self, emit: Emitter, framework: str, *, detail: Mapping[str, Any] | None = None) -> None:
        self.emit = emit
        self.framework = framework
        self.detail = dict(detail or {})  # added to every approval request's detail
        self._text_open = False  # the host holds an open assistant message we can end
        self._current: str | None = None  # id of the message streaming now
        self._streamed: set[str] = set()  # message ids whose text streamed
        self._think: dict[str, ThinkSplitter] = {}
        self._chunk_calls: dict[tuple[str, int], str] = {}  # (message id, index) -> call id
        self._started_calls: set[str] = set()
        self._calls: set[str] = set()
        self._results: set[str] = set()
        self._usage: set[str] = set()
        self._whole: set[str] = set()
        self._sent_whole: set[str] = set()  # texts of messages sent whole (stripped)
        self.any_text = False  # whether this run sent any assistant text
        self.streamed_text = False  # whether answer text streamed (model tokens, custom writer)
        # The run's callbacks make the tool calls' execute_tool spans (otel.GenAISpans):
        # the results say so, and the host makes none of its own.
        self.tools_traced = False

    def already_reported(self, messages: list[Any]) -> None:
        """Marks a thread's checkpointed messages as reported by earlier runs: nodes that
        re-emit them on a resume (HITL's after_model returns the model's message again)
        must not repeat their tool calls, results or usage."""
        for message in messages:
            if isinstance(message, ToolMessage) and message.tool_call_id:
                self._results.add(message.tool_call_id)
            elif isinstance(message, AIMessage):
                if message.id:
                    self._whole.add(message.id)
                    self._usage.add(message.id)
                self._calls.update(str(c.get("id")) for c in message.tool_calls if c.get("id"))

    # -- low level -------------------------------------------------------------------

    async def text(self, text: str, *, streamed: bool = True) -> None:
        """Answer text; streamed: from model tokens or the custom writer (not reasoning,
        not a whole message), which makes it the turn's answer."""
        if text:
            await self.emit.text(text)
            self._text_open = True
            self.any_text = True
            self.streamed_text = self.streamed_text or streamed

    async def reasoning(self, text: str) -> None:
        if text:
            self._text_open = False
            await self.emit.reasoning(text)

    async def end_message(self) -> None:
        if self._text_open:
            self._text_open = False
            await self.emit.message_done()

    async def answer(self, text: str) -> None:
        """A complete answer read from the graph's final state (nothing streamed)."""
        if text:
            await self.text(text, streamed=False)
            await self.end_message()

    async def approval(self, approval: Approval) -> None:
        await self.end_message()
        await self.emit.approval_request(
            approval.id,
            call_id=approval.call_id,
            name=approval.name,
            arguments=approval.arguments if approval.arguments is not None else {},
            message=approval.message,
            detail={**approval.detail, **self.detail},
        )

    async def native(self, kind: str, data: Any) -> None:
        await self.emit.native(self.framework, kind, data)

    async def state_delta(self, delta: Mapping[str, Any]) -> None:
        self._text_open = False
        await self.emit.state_delta(delta)

    # -- model output ----------------------------------------------------------------

    async def chunk(self, chunk: AIMessageChunk) -> None:
        """One streamed token chunk of a model call."""
        mid = chunk.id or "anonymous"
        if self._current != mid:
            await self.end_message()
            self._current = mid
        for piece in _reasoning(chunk):
            await self.reasoning(piece)
        text = chunk.text
        if text:
            self._streamed.add(mid)
            splitter = self._think.setdefault(mid, ThinkSplitter())
            for kind, piece in splitter.feed(text):
                await (self.reasoning(piece) if kind == "reasoning" else self.text(piece))
        for position, tc in enumerate(chunk.tool_call_chunks):
            index = tc.get("index")
            key = (mid, index if isinstance(index, int) else position)
            if tc.get("id"):
                self._chunk_calls[key] = str(tc["id"])
            call_id = self._chunk_calls.get(key)
            if not call_id or call_id in self._calls:
                continue
            args = tc.get("args") or ""
            first = call_id not in self._started_calls
            if first or args:
                self._text_open = False
                self._started_calls.add(call_id)
                await self.emit.tool_call_delta(call_id, args, name=(tc.get("name") or "") if first else "")

    async def message(self, message: BaseMessage) -> None:
        """A complete message (from a node update or a model's end event)."""
        if isinstance(message, ToolMessage):
            await self.tool_result(message)
        elif isinstance(message, AIMessage):
            await self._ai_message(message)

    async def _ai_message(self, message: AIMessage) -> None:
        mid = message.id or f"anon:{id(message)}"
        if mid in self._streamed:
            splitter = self._think.pop(mid, None)
            for kind, piece in splitter.flush() if splitter else []:
                await (self.reasoning(piece) if kind == "reasoning" else self.text(piece))
            if self._current == mid:
                await self.end_message()
        elif mid not in self._whole:
            self._whole.add(mid)
            for piece in _reasoning(message):
                await self.reasoning(piece)
            if message.text and self._answers(message.text):
                await self.end_message()
                splitter = ThinkSplitter()
                for kind, piece in [*splitter.feed(message.text), *splitter.flush()]:
                    await (self.reasoning(piece) if kind == "reasoning" else self.text(piece, streamed=False))
                await self.end_message()
        for call in message.tool_calls:
            await self.tool_call(str(call.get("id") or ""), call["name"], call.get("args") or {})
        for bad in message.invalid_tool_calls:
            await self.tool_call(str(bad.get("id") or ""), str(bad.get("name") or ""), bad.get("args") or "")
        await self.usage(mid, message)

    def _answers(self, text: str) -> bool:
        """Whether a never-streamed message's text is sent as answer text. KsADK's answer
        is the text that streamed (a complete message counts only when nothing streamed),
        so after streamed text a node's own AIMessage is not sent again; nor is a text
        this run already sent word for word."""
        if self.streamed_text:
            return False
        said = text.strip()
        if said in self._sent_whole:
            return False
        self._sent_whole.add(said)
        return True

    async def tool_call(self, call_id: str, name: str, args: Any) -> None:
        if not call_id or call_id in self._calls:
            return
        self._calls.add(call_id)
        self._text_open = False
        await self.emit.tool_call(call_id, name, args if isinstance(args, Mapping | str) else json.dumps(args))

    async def tool_result(self, message: ToolMessage) -> None:
        call_id = message.tool_call_id
        if not call_id or call_id in self._results:
            return
        self._results.add(call_id)
        self._text_open = False
        await self.emit.tool_result(
            call_id,
            message.name or "",
            tool_output(message),
            is_error=message.status == "error",
            traced=self.tools_traced,
        )

    async def usage(self, mid: str, message: AIMessage) -> None:
        u = message.usage_metadata
        if not u or mid in self._usage:
            return
        self._usage.add(mid)
        details_in: Mapping[str, Any] = u.get("input_token_details") or {}
        details_out: Mapping[str, Any] = u.get("output_token_details") or {}
        await self.emit.usage(
            input_tokens=int(u.get("input_tokens") or 0),
            output_tokens=int(u.get("output_tokens") or 0),
            reasoning_tokens=int(details_out.get("reasoning") or 0),
            cached_tokens=int(details_in.get("cache_read") or 0),
            model=model_name(message),
        )

    # -- custom stream writer --------------------------------------------------------

    async def custom(self, data: Any) -> None:
        """get_stream_writer() payloads: text when they carry text, else native."""
        if isinstance(data, str):
            await self.text(data)
            return
        if isinstance(data, Mapping):
            kind = data.get("type")
            text = next((data[k] for k in ("delta", "text", "content") if isinstance(data.get(k), str)), None)
            if kind in ("text", "text_delta", "delta", "token") and text is not None:
                await self.text(text)
                return
            if kind in ("reasoning", "thinking", "reasoning_delta") and text is not None:
                await self.reasoning(text)
                return
        await self.native("custom", data)

    async def finish(self) -> None:
        for mid, splitter in list(self._think.items()):
            for kind, piece in splitter.flush():
                await (self.reasoning(piece) if kind == "reasoning" else self.text(piece))
            del self._think[mid]
        await self.end_message()


def tool_output(message: ToolMessage) -> Any:
    content = message.content
    if isinstance(content, str):
        return content
    texts = [b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
    if texts and len(texts) == len(content):
        return "".join(str(t) for t in texts)
    return content


def model_name(message: AIMessage) -> str:
    """The model that wrote message, as its provider reported it ("" when none did)."""
    meta: Mapping[str, Any] = message.response_metadata or {}
    name = meta.get("model_name") or meta.get("model") or ""
    return name if isinstance(name, str) else ""


def _reasoning(message: AIMessage) -> list[str]:
    """The reasoning a message or a streamed chunk carries. Providers put it in content
    blocks or in additional_kwargs, so a plain string content with no additional_kwargs
    has none; that case skips content_blocks, which translates the whole message (20 to
    30 µs, for every streamed token and every complete message)."""
    if isinstance(message.content, str) and not message.additional_kwargs:
        return []
    return [str(b.get("reasoning") or "") for b in message.content_blocks if b.get("type") == "reasoning"]
