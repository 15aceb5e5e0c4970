"""Default input mapping: the runner payload as LangChain messages / graph input.

Used when the project defines no ksadk_prepare_state / ksadk_prepare_input hook.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from . import history as hist

JSON = Any
# Stable id: add_messages replaces the instructions in place instead of piling them up.
INSTRUCTIONS_ID = "agentengine-instructions"
TEXT_KEYS = ("input", "question", "query", "text", "prompt")
HISTORY_KEYS = ("history", "chat_history")


def input_text(payload: Mapping[str, JSON]) -> str:
    """The current user text: input_content text blocks, else payload.input as text."""
    texts = [
        str(b.get("text", ""))
        for b in _dicts(payload.get("input_content"))
        if b.get("type") in ("input_text", "text")
    ]
    if texts:
        return "\n".join(texts)
    value = payload.get("input")
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def model_accepts(payload: Mapping[str, JSON], capability: str) -> bool:
    """False only when model_metadata says the model lacks the capability."""
    meta = payload.get("model_metadata")
    caps = meta.get("capabilities") if isinstance(meta, Mapping) else None
    if isinstance(caps, Mapping) and capability in caps:
        return bool(caps[capability])
    return True


def content_block(block: Mapping[str, JSON], payload: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """A Responses-style input block as a LangChain standard content block (None: drop)."""
    kind = block.get("type")
    if kind in ("input_text", "text"):
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind in ("input_image", "image"):
        if not model_accepts(payload, "multimodal_input_image"):
            return None
        out = _source(block, "image", block.get("image_url") or block.get("url"))
        if out and block.get("detail"):
            out.setdefault("extras", {})["detail"] = block["detail"]
        return out
    if kind in ("input_file", "file"):
        out = _source(block, "file", block.get("file_data") or block.get("file_url") or block.get("url"))
        if out and block.get("filename"):
            out["filename"] = str(block["filename"])
            if "base64" in out and out.get("mime_type") == "application/octet-stream":
                out["mime_type"] = mimetypes.guess_type(str(block["filename"]))[0] or out["mime_type"]
        if out is None or not _sends_file(out, payload):
            return None  # the model gets the extracted text (attachment results) instead
        return out
    return None


def _sends_file(block: Mapping[str, JSON], payload: Mapping[str, JSON]) -> bool:
    """Raw files go to the model only when it says it takes them, or for PDFs (which chat
    APIs broadly accept) unless it says it does not; chat APIs reject most other types."""
    meta = payload.get("model_metadata")
    caps = meta.get("capabilities") if isinstance(meta, Mapping) else None
    if isinstance(caps, Mapping) and "multimodal_input_file" in caps:
        return bool(caps["multimodal_input_file"])
    mime = block.get("mime_type") or mimetypes.guess_type(str(block.get("filename") or block.get("url") or ""))[0]
    return mime == "application/pdf"


def _source(block: Mapping[str, JSON], kind: str, ref: JSON) -> dict[str, JSON] | None:
    if isinstance(ref, str) and ref.startswith("data:"):
        header, _, data = ref.partition(",")
        mime = header[5:].split(";")[0] or "application/octet-stream"
        return {"type": kind, "base64": data, "mime_type": mime}
    if isinstance(ref, str) and ref.startswith(("http://", "https://")):
        return {"type": kind, "url": ref}
    if isinstance(ref, str) and ref and _is_base64(ref):
        return {"type": kind, "base64": ref, "mime_type": "application/octet-stream"}
    if block.get("file_id"):
        return {"type": kind, "file_id": str(block["file_id"])}
    return None


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text[:64] + "=" * (-len(text[:64]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def attachment_texts(results: JSON) -> list[str]:
    out = []
    for item in _dicts(results):
        text = item.get("text") or item.get("content")
        if isinstance(text, str) and text.strip():
            name = item.get("filename") or item.get("name") or item.get("id") or "attachment"
            out.append(f"[Attachment {name}]\n{text}")
    return out


def human_message(payload: Mapping[str, JSON]) -> HumanMessage:
    """The current turn: its text plus image/file blocks and extracted attachment text."""
    blocks: list[dict[str, JSON]] = []
    has_text = False
    for raw in _dicts(payload.get("input_content")):
        block = content_block(raw, payload)
        if block is None:
            continue
        has_text = has_text or block["type"] == "text"
        blocks.append(block)
    if not has_text:
        text = input_text(payload)
        if text:
            blocks.insert(0, {"type": "text", "text": text})
    blocks.extend({"type": "text", "text": t} for t in attachment_texts(payload.get("current_attachment_results")))
    if all(b["type"] == "text" for b in blocks):
        return HumanMessage(content="\n\n".join(str(b["text"]) for b in blocks))
    return HumanMessage(content_blocks=blocks)  # type: ignore[arg-type]


def with_text(payload: Mapping[str, JSON], text: str) -> dict[str, JSON]:
    """The payload with text as the current user text (a hook's rewrite); its image and
    file blocks stay."""
    blocks = [b for b in _dicts(payload.get("input_content")) if b.get("type") not in ("input_text", "text")]
    return {**payload, "input": text, "input_content": blocks}


def system_message(payload: Mapping[str, JSON], session_context: Mapping[str, JSON]) -> SystemMessage | None:
    """Request instructions plus knowledge-base / memory context, if any."""
    parts = []
    if isinstance(payload.get("instructions"), str) and payload["instructions"].strip():
        parts.append(payload["instructions"].strip())
    for key, title in (("kb_context", "Knowledge base context"), ("memory_context", "Memory")):
        value = session_context.get(key)
        if value:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(f"{title}:\n{text}")
    if not parts:
        return None
    return SystemMessage(content="\n\n".join(parts), id=INSTRUCTIONS_ID)


def history_messages(history: JSON) -> list[BaseMessage]:
    """Projected host history (session.Message dicts) as LangChain messages.

    Tool calls become AIMessage.tool_calls and results ToolMessages only when both halves
    are present (a dangling call breaks most chat APIs); otherwise their text stays.
    """
    items = _dicts(history)
    names = hist.call_names(items)
    results = {m.get("call_id") for m in items if m.get("type") == "tool_result" and m.get("call_id")}
    calls = {m.get("call_id") for m in items if m.get("type") == "tool_call" and m.get("call_id")}
    out: list[BaseMessage] = []
    for m in items:
        kind, role, text = m.get("type"), m.get("role"), str(m.get("content") or "")
        call_id = m.get("call_id") or ""
        if kind == "tool_call" and call_id in results:
            call = {"id": call_id, "name": str(m.get("name") or ""), "args": _args(m.get("arguments")), "type": "tool_call"}
            prev = out[-1] if out else None
            # Parallel calls of one model turn share one AIMessage.
            if isinstance(prev, AIMessage) and prev.tool_calls and not prev.text:
                prev.tool_calls.append(call)  # type: ignore[arg-type]
            else:
                out.append(AIMessage(content="", tool_calls=[call]))
        elif kind == "tool_result" and call_id in calls:
            content = hist.output_text(hist.result_output(m))
            out.append(ToolMessage(content=content, tool_call_id=call_id, name=hist.result_name(m, names) or None))
        elif kind == "context_checkpoint":
            out.append(SystemMessage(content=f"Summary of the earlier conversation:\n{text}"))
        elif role == "user" and kind == "user_message":
            blocks = [b for b in (content_block(b, {}) for b in _dicts(m.get("blocks"))) if b]
            if not text and not blocks:
                continue  # a turn that carried only items (a state update) said nothing
            if blocks:
                out.append(HumanMessage(content_blocks=[{"type": "text", "text": text}, *blocks]))  # type: ignore[list-item]
            else:
                out.append(HumanMessage(content=text))
        elif role == "user":
            out.append(HumanMessage(content=text))
        elif role == "assistant":
            out.append(AIMessage(content=text))
    return out


def _args(raw: JSON) -> dict[str, JSON]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def dangling_tool_patches(messages: Sequence[Any]) -> list[ToolMessage]:
    """ToolMessages closing tool calls the thread left unanswered (a cancelled run, or a
    new message instead of an approval): without them the next model call is rejected."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            return [
                ToolMessage(
                    content="Not executed: the run ended before this tool call completed.",
                    tool_call_id=c["id"],
                    name=c["name"],
                    status="error",
                )
                for c in message.tool_calls
                if c.get("id") and c["id"] not in answered
            ]
        if isinstance(message, HumanMessage):
            break
    return []


def turn_messages(
    payload: Mapping[str, JSON],
    session_context: Mapping[str, JSON],
    existing: Sequence[Any] | None,
) -> list[BaseMessage]:
    """Messages to add for this turn. A thread with checkpointed messages already holds
    the history, so only the new turn goes in (re-sending it would duplicate it)."""
    system = system_message(payload, session_context)
    out: list[BaseMessage] = [system] if system else []
    if existing:
        out.extend(dangling_tool_patches(existing))
    else:
        history = payload.get("history")
        if history is None:
            history = session_context.get("history")
        out.extend(history_messages(history))
    out.append(human_message(payload))
    return out


def graph_input(
    payload: Mapping[str, JSON],
    session_context: Mapping[str, JSON],
    *,
    input_keys: Sequence[str] | None,
    existing: Sequence[Any] | None,
) -> dict[str, JSON]:
    """Default graph input: messages, plus the payload fields the state schema declares
    (so a KsADK-style state such as {query, history, attachments} works without a hook)."""
    state: dict[str, JSON] = {}
    keys = set(input_keys) if input_keys is not None else {"messages"}
    if "messages" in keys or not keys:
        state["messages"] = turn_messages(payload, session_context, existing)
    text = input_text(payload)
    for key in keys - {"messages"}:
        if key in TEXT_KEYS:
            state[key] = text
        elif key in payload and key != "resume":
            state[key] = payload[key]
        elif key in session_context and key != "is_resume":
            state[key] = session_context[key]
    return state


def runnable_input(runnable: Any, payload: Mapping[str, JSON], session_context: Mapping[str, JSON]) -> Any:
    """Default input for a plain Runnable: messages for chat models, a dict for chains
    whose input schema names fields, else the question text."""
    from langchain_core.language_models import BaseChatModel

    if isinstance(_unwrap(runnable), BaseChatModel):
        return turn_messages(payload, session_context, None)
    try:
        schema = runnable.get_input_jsonschema()
    except Exception:  # schemas of arbitrary lambdas may not build
        schema = {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or not props:
        return input_text(payload)
    history = history_messages(payload.get("history") or session_context.get("history"))
    values: dict[str, JSON] = {}
    for key in props:
        if key in TEXT_KEYS:
            values[key] = input_text(payload)
        elif key == "messages":
            values[key] = turn_messages(payload, session_context, None)
        elif key in HISTORY_KEYS:
            values[key] = history
        elif key in ("context", "attachment_texts"):
            texts = attachment_texts(payload.get("attachment_results"))
            values[key] = texts if key == "attachment_texts" else "\n\n".join(texts)
        elif key in ("instructions", "system"):
            values[key] = payload.get("instructions") or ""
        elif key in payload:
            values[key] = payload[key]
        elif key in session_context:
            values[key] = session_context[key]
    return values


def _unwrap(runnable: Any) -> Any:
    # model.bind_tools(...) / .with_config(...) wrap the model in a RunnableBinding.
    while hasattr(runnable, "bound") and not hasattr(runnable, "_generate"):
        runnable = runnable.bound
    return runnable


def _dicts(value: JSON) -> list[dict[str, JSON]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
