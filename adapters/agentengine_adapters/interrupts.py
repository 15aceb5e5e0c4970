"""Pending LangGraph interrupts as approval requests.

Every pending interrupt becomes at least one approval request (KsADK surfaces only the
first). LangChain's HumanInTheLoopMiddleware packs several tool calls into one interrupt
(`action_requests`); each becomes its own approval, carrying the real tool call id so the
host can tie it to the tool call it guards.

Approval ids: the interrupt id, or "<interrupt id>:<action index>" when one HITL interrupt
holds several actions.

Framework-free on purpose (messages are read by their `type`, not by class): the ADK
bridge shares the resume parsing built on these shapes and must not need LangChain.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["hitl", "hitl_call", "interrupt", "breakpoint"]
ALL_DECISIONS = ("approve", "edit", "reject", "respond")


@dataclass(frozen=True)
class Approval:
    id: str
    interrupt_id: str
    kind: Kind
    index: int = 0
    count: int = 1
    call_id: str = ""
    name: str = ""
    arguments: Any = field(default_factory=dict)
    message: str = ""
    allowed: tuple[str, ...] = ALL_DECISIONS
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Pending:
    """One pending interrupt: its id, value, the node that raised it."""

    id: str
    value: Any
    node: str
    schema: Any = None  # Interrupt.response_schema: what the answer must look like


def pending_interrupts(snapshot: Any) -> list[Pending]:
    """Unanswered interrupts of a thread, in task order, with the node that raised them."""
    out: list[Pending] = []
    seen: set[str] = set()
    tasks = getattr(snapshot, "tasks", ()) or ()
    for task in tasks:
        if getattr(task, "result", None) is not None:
            # A task that finished after its interrupt was answered: LangGraph 0.6 still
            # lists the answered interrupt on it (and in snapshot.interrupts).
            seen.update(i.id for i in getattr(task, "interrupts", ()) or ())
            continue
    for task in tasks:
        if getattr(task, "result", None) is not None:
            continue
        for intr in getattr(task, "interrupts", ()) or ():
            if intr.id not in seen:
                seen.add(intr.id)
                out.append(Pending(intr.id, intr.value, task.name, _schema(intr)))
    for intr in getattr(snapshot, "interrupts", ()) or ():
        if intr.id not in seen:
            seen.add(intr.id)
            out.append(Pending(intr.id, intr.value, "", _schema(intr)))
    return out


def _schema(interrupt: Any) -> Any:
    return getattr(interrupt, "response_schema", None)


def _allowed(schema: Any, name: str, args: Any) -> tuple[str, ...]:
    """The decision types a per-call HITL interrupt's response_schema accepts (LangGraph
    validates the answer against it; knowing it up front gives a clear error instead)."""
    if schema is None:
        return ALL_DECISIONS
    if isinstance(schema, Mapping):  # the JSON Schema a checkpointed interrupt carries
        return _allowed_in_json_schema(schema)
    from pydantic import TypeAdapter

    samples = {
        "approve": {"type": "approve"},
        "edit": {"type": "edit", "edited_action": {"name": name, "args": dict(args)}},
        "reject": {"type": "reject", "message": "x"},
        "respond": {"type": "respond", "message": "x"},
    }
    try:
        adapter = TypeAdapter(schema)
    except Exception:  # not a Python type pydantic understands
        return ALL_DECISIONS
    allowed = []
    for kind, sample in samples.items():
        try:
            adapter.validate_python(sample)
        except Exception:
            continue
        allowed.append(kind)
    return tuple(allowed) or ALL_DECISIONS


def _allowed_in_json_schema(schema: Mapping[str, Any]) -> tuple[str, ...]:
    mapping = (schema.get("discriminator") or {}).get("mapping")
    found = list(mapping) if isinstance(mapping, Mapping) else []
    if not found:
        candidates = [schema, *((schema.get("$defs") or {}).values())]
        for item in candidates:
            const = ((item.get("properties") or {}).get("type") or {}).get("const") if isinstance(item, Mapping) else None
            if isinstance(const, str):
                found.append(const)
    allowed = tuple(d for d in ALL_DECISIONS if d in found)
    return allowed or ALL_DECISIONS


def open_tool_calls(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Tool calls of the latest model turn that have no ToolMessage yet."""
    answered = {getattr(m, "tool_call_id", None) for m in messages if _kind(m) == "tool"}
    for message in reversed(messages):
        calls = getattr(message, "tool_calls", None) if _kind(message) == "ai" else None
        if calls:
            return [dict(c) for c in calls if c.get("id") not in answered]
        if _kind(message) == "human":
            break
    return []


def _kind(message: Any) -> str:
    """A LangChain message's role ("ai", "tool", "human", ...); chunks count as their role."""
    kind = str(getattr(message, "type", "") or "")
    return "ai" if kind == "AIMessageChunk" else kind


def is_hitl_request(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("action_requests"), list)


def is_hitl_call(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "tool_approval" and "tool_call_id" in value


def approvals(pending: Sequence[Pending], messages: Sequence[Any]) -> list[Approval]:
    calls = open_tool_calls(messages)
    used: set[str] = set()
    out: list[Approval] = []
    for p in pending:
        if is_hitl_request(p.value):
            out.extend(_hitl_approvals(p, calls, used))
        elif is_hitl_call(p.value):
            v = p.value
            used.add(str(v["tool_call_id"]))
            allowed = _allowed(p.schema, str(v.get("name", "")), v.get("args") or {})
            out.append(
                Approval(
                    id=p.id,
                    interrupt_id=p.id,
                    kind="hitl_call",
                    call_id=str(v["tool_call_id"]),
                    name=str(v.get("name", "")),
                    arguments=v.get("args") or {},
                    message=str(v.get("description", "")),
                    allowed=allowed,
                    detail={
                        "interrupt_id": p.id,
                        "kind": "hitl_call",
                        "node": p.node,
                        "value": v,
                        "allowed_decisions": list(allowed),
                        "response_schema": p.schema if isinstance(p.schema, Mapping) else None,
                    },
                )
            )
        else:
            out.append(_generic_approval(p, calls, used))
    return out


def _hitl_approvals(p: Pending, calls: list[dict[str, Any]], used: set[str]) -> list[Approval]:
    actions = [a for a in p.value["action_requests"] if isinstance(a, Mapping)]
    configs = {
        c.get("action_name"): c for c in p.value.get("review_configs") or [] if isinstance(c, Mapping)
    }
    out = []
    for i, action in enumerate(actions):
        name = str(action.get("name", ""))
        args = action.get("args") or {}
        cfg = configs.get(name) or {}
        allowed = tuple(cfg.get("allowed_decisions") or ALL_DECISIONS)
        call_id = _match_call(calls, used, name, args)
        out.append(
            Approval(
                id=p.id if len(actions) == 1 else f"{p.id}:{i}",
                interrupt_id=p.id,
                kind="hitl",
                index=i,
                count=len(actions),
                call_id=call_id,
                name=name,
                arguments=args,
                message=str(action.get("description", "")),
                allowed=allowed,
                detail={
                    "interrupt_id": p.id,
                    "kind": "hitl",
                    "node": p.node,
                    "action_index": i,
                    "action": dict(action),
                    "allowed_decisions": list(allowed),
                },
            )
        )
    return out


# Keys user code commonly puts in interrupt() values for a tool approval.
_CALL_ID_KEYS = ("tool_call_id", "call_id")
_NAME_KEYS = ("name", "tool", "tool_name", "action")
_ARGS_KEYS = ("args", "arguments", "tool_args", "tool_input", "input")
_MESSAGE_KEYS = ("message", "description", "question", "prompt", "text", "reason")


def _generic_approval(p: Pending, calls: list[dict[str, Any]], used: set[str]) -> Approval:
    v = p.value
    call_id = name = message = ""
    args: Any = {}
    if isinstance(v, Mapping):
        call_id = _first_str(v, _CALL_ID_KEYS)
        name = _first_str(v, _NAME_KEYS)
        raw_args = next((v[k] for k in _ARGS_KEYS if k in v), None)
        args = raw_args if isinstance(raw_args, Mapping | str) else ({} if raw_args is None else {"value": raw_args})
        message = _first_str(v, _MESSAGE_KEYS)
        if not call_id and name:
            call_id = _match_call(calls, used, name, args if isinstance(args, Mapping) else None)
    elif isinstance(v, str):
        message = v
    else:
        message = json.dumps(v, ensure_ascii=False, default=str)
    if not call_id and not name and _node_is_tools(p.node):
        # interrupt() inside a tool body: the one open call of the tool node.
        open_calls = [c for c in calls if c.get("id") not in used]
        if len(open_calls) == 1:
            call_id, name, args = str(open_calls[0]["id"]), str(open_calls[0]["name"]), open_calls[0]["args"]
    if call_id:
        used.add(call_id)
    return Approval(
        id=p.id,
        interrupt_id=p.id,
        kind="interrupt",
        call_id=call_id,
        name=name or p.node,
        arguments=args,
        message=message,
        detail={"interrupt_id": p.id, "kind": "interrupt", "node": p.node, "value": v},
    )


def _node_is_tools(node: str) -> bool:
    return node == "tools" or node.endswith(".tools")


def _first_str(v: Mapping[str, Any], keys: Sequence[str]) -> str:
    for key in keys:
        value = v.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _match_call(
    calls: list[dict[str, Any]], used: set[str], name: str, args: Mapping[str, Any] | None
) -> str:
    # Exact name+args first, then name alone; each call guards one approval.
    for exact in (True, False):
        for call in calls:
            cid = str(call.get("id") or "")
            if not cid or cid in used or call.get("name") != name:
                continue
            if exact and args is not None and dict(call.get("args") or {}) != dict(args):
                continue
            used.add(cid)
            return cid
    return ""
