"""What a runner rebuilds of a compact run request before its code sees it.

The host sends each part of a request once to a runner that reports the expands_payload
capability (this SDK always does): the payload's input (the input's text; a resume turn's
is always sent), input_messages and input_parts, derived from input_items and
input_content, and the session context's history, the payload's, are left out.
expand_request puts them back exactly as the host would have sent them (the Go SDK's
wire.Expand does the same), so hooks and bridges see the documents in full.
"""

from __future__ import annotations

from typing import Any

JSON = Any


def expand_request(payload: dict[str, JSON], session_context: dict[str, JSON]) -> None:
    """Fills in, in place, the derived fields a compact request leaves out; a request sent
    in full is left as it is."""
    content = payload.get("input_content") or []
    if payload.get("input") is None:  # a resume turn's input is always sent
        payload["input"] = input_text(content)
    if payload.get("input_messages") is None:
        payload["input_messages"] = input_messages(payload.get("input_items") or [], content)
    if payload.get("input_parts") is None:
        payload["input_parts"] = input_parts(content)
    if session_context.get("history") is None:
        session_context["history"] = list(payload.get("history") or [])


def input_text(blocks: list[JSON]) -> str:
    """The text of a turn's input: its text blocks, one per line."""
    texts = [
        b.get("text") or "" for b in blocks if isinstance(b, dict) and b.get("type") == "input_text"
    ]
    out = ""
    for t in texts:
        if out:
            out += "\n"
        out += t
    return out


def input_messages(items: list[JSON], content: list[JSON]) -> list[JSON]:
    """The earlier items a client sent, as sent, then one user message with the content."""
    out = list(items)
    if content:
        out.append({"content": content, "role": "user", "type": "message"})
    return out


def input_parts(blocks: list[JSON]) -> list[JSON]:
    """KsADK's legacy parts list: {text}, {inline_data} for a data URL, else {file_data}."""
    out: list[JSON] = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "input_text":
            out.append({"text": b.get("text") or ""})
        elif kind == "input_image":
            out.append(_part(b.get("image_url") or "", b.get("filename") or ""))
        elif kind == "input_file":
            out.append(_part(b.get("file_data") or b.get("file_url") or "", b.get("filename") or ""))
    return out


def _part(url: str, name: str) -> dict[str, JSON]:
    if url.startswith("data:"):
        meta, sep, data = url[len("data:"):].partition(",")
        if sep:
            return {"inline_data": {"mime_type": meta.partition(";")[0], "data": data, "display_name": name}}
    return {"file_data": {"file_uri": url, "display_name": name}}
