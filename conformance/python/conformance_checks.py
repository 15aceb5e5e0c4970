"""Checks a Responses event stream against the order and field rules real clients rely on
(those of the OpenAI Python and Node SDKs' stream helpers). Events are the SDK's typed models; the checks
run on their JSON form. Every failure names the event."""

from __future__ import annotations

import json
import time
from typing import Any

LIFECYCLE = {
    "response.created",
    "response.queued",
    "response.in_progress",
    "response.completed",
    "response.failed",
    "response.incomplete",
}
TERMINAL = {"response.completed": "completed", "response.failed": "failed", "response.incomplete": "incomplete"}
STANDARD_EVENTS = LIFECYCLE | {
    "response.output_item.added",
    "response.output_item.done",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.delta",
    "response.refusal.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.mcp_call_arguments.delta",
    "response.mcp_call_arguments.done",
    "response.mcp_call.in_progress",
    "response.mcp_call.completed",
    "response.mcp_call.failed",
    "response.mcp_list_tools.in_progress",
    "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
    "error",
}
ITEM_EVENT_TYPE = {
    "response.output_text.delta": "message",
    "response.output_text.done": "message",
    "response.output_text.annotation.added": "message",
    "response.refusal.delta": "message",
    "response.refusal.done": "message",
    "response.function_call_arguments.delta": "function_call",
    "response.function_call_arguments.done": "function_call",
    "response.reasoning_text.delta": "reasoning",
    "response.reasoning_text.done": "reasoning",
    "response.reasoning_summary_part.added": "reasoning",
    "response.reasoning_summary_part.done": "reasoning",
    "response.reasoning_summary_text.delta": "reasoning",
    "response.reasoning_summary_text.done": "reasoning",
}


def as_dict(obj: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj
    return obj.to_dict(mode="json", exclude_unset=True, warnings=False)


def output_text(output: list[dict[str, Any]]) -> str:
    return "".join(
        p.get("text", "")
        for it in output
        if it.get("type") == "message"
        for p in it.get("content", [])
        if p.get("type") == "output_text"
    )


def reasoning_text(item: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in (item.get("summary") or []) + (item.get("content") or []))


def check_usage(usage: dict[str, Any] | None, where: str) -> None:
    assert isinstance(usage, dict), f"{where}: usage missing ({usage!r})"
    for k in ("input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"):
        assert k in usage, f"{where}: usage.{k} missing in {usage}"
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"], f"{where}: usage.total_tokens != input+output"
    assert isinstance(usage["input_tokens_details"].get("cached_tokens"), int), f"{where}: cached_tokens"
    assert isinstance(usage["input_tokens_details"].get("cache_write_tokens"), int), f"{where}: cache_write_tokens"
    assert isinstance(usage["output_tokens_details"].get("reasoning_tokens"), int), f"{where}: reasoning_tokens"


def check_response_object(r: dict[str, Any], where: str, model: str | None = None) -> None:
    assert r.get("object") == "response", f"{where}: response.object = {r.get('object')!r}"
    rid = r.get("id")
    assert isinstance(rid, str) and rid.startswith("resp_"), f"{where}: response.id = {rid!r}, want 'resp_…'"
    ca = r.get("created_at")
    assert isinstance(ca, (int, float)) and float(ca).is_integer(), f"{where}: created_at = {ca!r}, want integer seconds"
    assert abs(ca - time.time()) < 3600, f"{where}: created_at {ca} is not near now (seconds, not ms?)"
    if model:
        assert r.get("model") == model, f"{where}: model = {r.get('model')!r}"
    assert isinstance(r.get("output"), list), f"{where}: output is not a list"


def check_response_stream(events: list[Any], model: str | None = None, compare_items: bool = True) -> dict[str, Any]:
    """Validate the whole event list; returns {terminal, response, items}.

    compare_items=False skips the deep comparison of terminal output items with their
    output_item.done items (the stream() helper's events carry parsed extras)."""
    evs = [as_dict(e) for e in events]
    types = [e.get("type") for e in evs]
    assert len(evs) >= 3, f"stream too short: {types}"
    assert types[0] == "response.created", f"first event must be response.created, got {types[0]}"
    assert evs[0]["response"].get("output") == [], "response.created: output must be []"

    response_id = None
    added: list[dict[str, Any]] = []
    terminal_index = -1
    saw_output = False

    for i, e in enumerate(evs):
        t = e.get("type")
        w = f"event #{i} ({t})"
        assert t in STANDARD_EVENTS, f"{w}: non-standard event type {t!r}"
        assert e.get("sequence_number") == i, f"{w}: sequence_number = {e.get('sequence_number')!r}, want {i}"
        if t != "error":
            assert "error" not in e, f"{w}: top-level 'error' key on a normal event"
        assert terminal_index < 0, f"{w}: event after the terminal {types[terminal_index]}"

        if t in LIFECYCLE:
            r = e["response"]
            check_response_object(r, w, model)
            if response_id is None:
                response_id = r["id"]
            assert r["id"] == response_id, f"{w}: response.id changed"
            if t == "response.in_progress":
                assert not saw_output, f"{w}: response.in_progress after output started"
            if t in TERMINAL:
                terminal_index = i
                assert r.get("status") == TERMINAL[t], f"{w}: status = {r.get('status')!r}"
            continue
        if t == "error":
            assert isinstance(e.get("message"), str), f"{w}: flat 'message' missing"
            continue

        oi = e.get("output_index")
        assert isinstance(oi, int), f"{w}: output_index = {oi!r}"
        if t == "response.output_item.added":
            saw_output = True
            assert oi == len(added), f"{w}: output_index must append (want {len(added)})"
            it = e["item"]
            assert isinstance(it.get("id"), str) and it["id"], f"{w}: item.id"
            assert all(a["item"]["id"] != it["id"] for a in added), f"{w}: duplicate item id"
            if it["type"] == "message":
                assert it.get("content") == [], f"{w}: added message content must be []"
                assert it.get("status") == "in_progress", f"{w}: added message status"
            elif it["type"] == "function_call":
                assert it.get("call_id"), f"{w}: call_id"
                assert isinstance(it.get("arguments"), str), f"{w}: arguments must be a string"
            elif it["type"] == "reasoning":
                assert isinstance(it.get("summary"), list), f"{w}: reasoning.summary"
            added.append({"item": it, "done": None, "parts": [], "rtext": [], "summary": [], "args": ""})
            continue

        assert oi < len(added), f"{w}: output_index {oi} has no output_item.added"
        slot = added[oi]
        assert slot["done"] is None, f"{w}: event after the item's output_item.done"
        if t == "response.output_item.done":
            it = e["item"]
            assert it["id"] == slot["item"]["id"] and it["type"] == slot["item"]["type"], f"{w}: item identity changed"
            if it["type"] == "message":
                assert it.get("status") == "completed", f"{w}: message status"
                texts = [p.get("text") for p in it.get("content", [])]
                assert texts == [p["text"] for p in slot["parts"]], f"{w}: content != concatenated deltas"
            elif it["type"] == "function_call":
                assert it.get("status") == "completed", f"{w}: function_call status"
                assert it.get("call_id") == slot["item"].get("call_id"), f"{w}: call_id changed"
                if slot["args"]:
                    assert it.get("arguments") == slot["args"], f"{w}: arguments != deltas"
                json.loads(it["arguments"])
            slot["done"] = it
            continue

        assert e.get("item_id") == slot["item"]["id"], f"{w}: item_id {e.get('item_id')!r} != output[{oi}].id {slot['item']['id']!r}"
        if t.startswith("response.content_part."):
            want = "reasoning" if e["part"]["type"] == "reasoning_text" else "message"
        else:
            want = ITEM_EVENT_TYPE.get(t)
        if want:
            assert slot["item"]["type"] == want, f"{w}: targets a {slot['item']['type']} item"
        if t == "response.content_part.added":
            lst = slot["rtext"] if e["part"]["type"] == "reasoning_text" else slot["parts"]
            assert e["content_index"] == len(lst), f"{w}: content_index must append"
            lst.append({"text": "", "done": False})
        elif t in ("response.output_text.delta", "response.reasoning_text.delta"):
            lst = slot["parts"] if t == "response.output_text.delta" else slot["rtext"]
            ci = e["content_index"]
            assert ci < len(lst), f"{w}: delta before content_part.added"
            assert not lst[ci]["done"], f"{w}: delta after content_part.done"
            lst[ci]["text"] += e["delta"]
        elif t in ("response.output_text.done", "response.reasoning_text.done"):
            lst = slot["parts"] if t == "response.output_text.done" else slot["rtext"]
            assert e["text"] == lst[e["content_index"]]["text"], f"{w}: text != concatenated deltas"
        elif t == "response.content_part.done":
            lst = slot["rtext"] if e["part"]["type"] == "reasoning_text" else slot["parts"]
            assert e["part"].get("text") == lst[e["content_index"]]["text"], f"{w}: part.text != deltas"
            lst[e["content_index"]]["done"] = True
        elif t == "response.reasoning_summary_part.added":
            assert e["summary_index"] == len(slot["summary"]), f"{w}: summary_index must append"
            slot["summary"].append("")
        elif t == "response.reasoning_summary_text.delta":
            slot["summary"][e["summary_index"]] += e["delta"]
        elif t == "response.reasoning_summary_text.done":
            assert e["text"] == slot["summary"][e["summary_index"]], f"{w}: summary text != deltas"
        elif t == "response.function_call_arguments.delta":
            slot["args"] += e["delta"]
        elif t == "response.function_call_arguments.done":
            if slot["args"]:
                assert e["arguments"] == slot["args"], f"{w}: arguments != deltas"
            slot["args"] = e["arguments"]

    assert terminal_index >= 0, f"no terminal event; types: {types}"
    assert terminal_index == len(evs) - 1, "terminal event must be last"
    term = evs[terminal_index]
    final = term["response"]
    if term["type"] != "response.failed":
        assert all(a["done"] is not None for a in added), f"{term['type']}: items without output_item.done"
    assert [it["id"] for it in final["output"]] == [a["item"]["id"] for a in added], (
        f"{term['type']}: response.output ids != added item ids"
    )
    for k, it in enumerate(final["output"]):
        if compare_items and added[k]["done"] is not None:
            assert it == added[k]["done"], f"{term['type']}: output[{k}] differs from its output_item.done item"
    if term["type"] == "response.completed":
        check_usage(final.get("usage"), "response.completed")
        assert final.get("error") is None, "response.completed: error must be null"
    if term["type"] == "response.failed":
        assert isinstance((final.get("error") or {}).get("message"), str), "response.failed: error.message"
    return {"terminal": term, "response": final, "items": [a["done"] or a["item"] for a in added]}
