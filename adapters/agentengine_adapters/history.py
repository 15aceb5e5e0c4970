"""Host-projected history (session.Message dicts), read the same way by every bridge.

Framework-free: the LangGraph / LangChain bridges build ToolMessages and the ADK bridge
FunctionResponses from what these return.

A tool result carries its output as JSON in `output` (the stored output text as a JSON
string, or what a client's function_call_output carried); `content` is display text only
("[tool_result] name: output") and is never cut apart to find the output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

RESULT_PREFIX = "[tool_result] "


def messages(history: Any) -> list[Mapping[str, Any]]:
    return [m for m in history if isinstance(m, Mapping)] if isinstance(history, list) else []


def call_names(items: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Tool name per call id, from the history's tool calls."""
    return {
        str(m["call_id"]): str(m.get("name") or "")
        for m in items
        if m.get("type") == "tool_call" and m.get("call_id")
    }


def result_name(m: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """A tool result's tool name; a client's function_call_output names none, its call does."""
    return str(m.get("name") or names.get(str(m.get("call_id") or ""), ""))


def result_output(m: Mapping[str, Any]) -> Any:
    """A tool result's output: a string, or the JSON value (object, parts) a client sent.
    Without `output` (an older host), the display text without its exact prefix."""
    if "output" in m and m["output"] is not None:
        return m["output"]
    text = str(m.get("content") or "")
    name = str(m.get("name") or "")
    for prefix in (f"{RESULT_PREFIX}{name}: " if name else None, RESULT_PREFIX):
        if prefix and text.startswith(prefix):
            return text[len(prefix) :]
    return text


def output_text(output: Any) -> str:
    """An output as the text a chat model reads: strings as is, Responses-style text parts
    joined, anything else as JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and output and all(
        isinstance(p, Mapping) and isinstance(p.get("text"), str) for p in output
    ):
        return "".join(str(p["text"]) for p in output)
    return json.dumps(output, ensure_ascii=False)


def output_object(output: Any) -> dict[str, Any]:
    """An output as a function response object (ADK): an object as is; text holding a JSON
    object (what a tool returning a dict was stored as) as that object; else {"result"}."""
    value = output
    if isinstance(output, str):
        try:
            value = json.loads(output)
        except ValueError:
            value = output
    elif isinstance(output, list):
        value = output_text(output)
    return dict(value) if isinstance(value, Mapping) else {"result": value}
