"""Resume turns: the client's answers (payload.input) as a LangGraph Command.

payload.input holds what the client sent: one item, or a list when several approvals are
answered at once (payload.resume describes only the first):

- {"type": "mcp_approval_response", "approval_request_id", "approve", "reason"?}
- {"type": "function_call_output", "call_id", "output"}; an output that is a verdict
  ({"approve"|"approved": bool, "reason"?}) approves or rejects, any other output answers
  on the tool's behalf.
- either may carry "arguments" (object or JSON text) to edit the call before it runs.

Each answer is matched to a pending approval (by approval id, else by call id) and turned
into the value its interrupt expects: a HITL decision ({"type": "approve"} / "reject" /
"edit" / "respond") for LangChain's HumanInTheLoopMiddleware, else the answer as a dict
({**item, "approve", "approved", "reason", "output"}). Values are keyed by interrupt id,
so several pending interrupts resume together.

A HITL interrupt holding several tool calls needs one decision per call before it can
resume; answers that arrive in separate turns are kept in session state (PARTIAL_KEY)
until the set is complete.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentengine_runner import RunnerError

from .interrupts import Approval

PARTIAL_KEY = "agentengine_hitl_decisions"
INVALID_RESUME = "invalid_resume"
# The key of an answer item holding a LangGraph Command's resume value, which interrupt()
# returns unchanged.
LANGGRAPH_RESUME = "langgraph_resume"


@dataclass(frozen=True)
class Answer:
    approval_id: str = ""
    call_id: str = ""
    approve: bool = True
    reason: str = ""
    output: str | None = None
    edited_args: dict[str, Any] | None = None
    raw: Any = None

    @property
    def ref(self) -> str:
        return self.approval_id or self.call_id


@dataclass
class ResumePlan:
    values: dict[str, Any] = field(default_factory=dict)
    """Resume value per interrupt id, for Command(resume=...)."""
    waiting: list[Approval] = field(default_factory=list)
    """Approvals still unanswered in partially answered HITL interrupts."""
    partial: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Decisions of partially answered HITL interrupts, to keep in session state."""


def parse_answers(payload: Mapping[str, Any]) -> list[Answer]:
    raw = payload.get("input")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            pass
    items = raw if isinstance(raw, list) else [raw]
    answers = [a for a in (_answer(item) for item in items) if a is not None]
    described = host_resumes(payload)
    if not answers:
        return [_from_resume(r) for r in described]
    for i, answer in enumerate(answers):
        if answer.approval_id:
            continue
        # The host matched a function_call_output to its approval for us: by call id, or
        # (answers the host described one each, in order) by position.
        found = next((r for r in described if answer.call_id and str(r.get("call_id") or "") == answer.call_id), None)
        if found is None and len(described) == len(answers):
            found = described[i]
        if found is not None and found.get("approval_request_id"):
            answers[i] = replace(answer, approval_id=str(found["approval_request_id"]))
    return answers


def host_resumes(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The host's description of each answer (payload.resumes; payload.resume is the first)."""
    resumes = payload.get("resumes")
    if isinstance(resumes, list) and resumes:
        return [r for r in resumes if isinstance(r, Mapping)]
    resume = payload.get("resume")
    return [resume] if isinstance(resume, Mapping) else []


def _answer(item: Any) -> Answer | None:
    if not isinstance(item, Mapping):
        return None
    kind = item.get("type")
    if kind == "function_call_output" or ("output" in item and "call_id" in item and kind is None):
        return _from_output(item)
    if kind == "mcp_approval_response" or "approval_request_id" in item or "approve" in item or "approved" in item:
        approve = item.get("approve", item.get("approved", True))
        return Answer(
            approval_id=str(item.get("approval_request_id") or item.get("id") or ""),
            call_id=str(item.get("call_id") or ""),
            approve=bool(approve),
            reason=str(item.get("reason") or ""),
            edited_args=_edited(item),
            raw=dict(item),
        )
    return None


def _from_output(item: Mapping[str, Any]) -> Answer:
    output = item.get("output")
    verdict = output
    if isinstance(output, str):
        try:
            verdict = json.loads(output)
        except ValueError:
            verdict = None
    call_id = str(item.get("call_id") or "")
    if isinstance(verdict, Mapping) and ("approve" in verdict or "approved" in verdict):
        return Answer(
            call_id=call_id,
            approve=bool(verdict.get("approve", verdict.get("approved"))),
            reason=str(verdict.get("reason") or ""),
            edited_args=_edited(verdict),
            raw=dict(item),
        )
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return Answer(call_id=call_id, approve=True, output=text, raw=dict(item))


def _from_resume(resume: Mapping[str, Any]) -> Answer:
    return Answer(
        approval_id=str(resume.get("approval_request_id") or ""),
        call_id=str(resume.get("call_id") or ""),
        approve=bool(resume.get("approve")),
        reason=str(resume.get("reason") or ""),
        output=resume.get("output") or None,
        raw=dict(resume),
    )


def _edited(item: Mapping[str, Any]) -> dict[str, Any] | None:
    for key in ("edited_arguments", "arguments", "args"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, Mapping):
            return dict(value)
    return None


def match(answers: Sequence[Answer], pending: Sequence[Approval]) -> list[tuple[Answer, Approval]]:
    """Pairs each answer with the approval it answers; an unknown one is an error."""
    by_id = {a.id: a for a in pending}
    by_call = {a.call_id: a for a in pending if a.call_id}
    out = []
    for answer in answers:
        approval = by_id.get(answer.approval_id) or by_call.get(answer.call_id) or by_id.get(answer.call_id)
        if approval is None:
            known = ", ".join(a.id for a in pending) or "none"
            raise RunnerError(
                f"no pending interrupt matches approval {answer.ref!r} (pending approvals: {known})",
                code=INVALID_RESUME,
            )
        out.append((answer, approval))
    return out


def plan(
    answers: Sequence[Answer],
    pending: Sequence[Approval],
    stored: Mapping[str, Any] | None = None,
) -> ResumePlan:
    """Resume values for the answered interrupts (stored: PARTIAL_KEY from session state)."""
    if not answers:
        raise RunnerError("the resume input carries no approval decision", code=INVALID_RESUME)
    result = ResumePlan()
    decisions: dict[str, dict[int, Any]] = {}
    for iid, saved in (stored or {}).items():
        if isinstance(saved, Mapping):
            decisions[iid] = {int(k): v for k, v in saved.items() if str(k).isdigit()}
    for answer, approval in match(answers, pending):
        if approval.kind == "interrupt":
            result.values[approval.interrupt_id] = generic_value(answer)
        elif approval.kind == "hitl_call":
            result.values[approval.interrupt_id] = decision(answer, approval)
        else:
            decisions.setdefault(approval.interrupt_id, {})[approval.index] = decision(answer, approval)
    for iid, got in decisions.items():
        actions = [a for a in pending if a.interrupt_id == iid and a.kind == "hitl"]
        if not actions:
            continue  # stale: the interrupt is no longer pending
        missing = [a for a in actions if a.index not in got]
        if missing:
            result.waiting.extend(missing)
            result.partial[iid] = {str(k): v for k, v in sorted(got.items())}
        else:
            result.values[iid] = {"decisions": [got[a.index] for a in sorted(actions, key=lambda a: a.index)]}
    return result


def decision(answer: Answer, approval: Approval) -> dict[str, Any]:
    """A HumanInTheLoopMiddleware decision, checked against the allowed decisions."""
    if not answer.approve:
        out: dict[str, Any] = {"type": "reject"}
        if answer.reason:
            out["message"] = answer.reason
    elif answer.edited_args is not None:
        # Never fall back to approving the original call: that is not what was approved.
        out = {"type": "edit", "edited_action": {"name": approval.name, "args": answer.edited_args}}
    elif answer.output is not None and "respond" in approval.allowed:
        out = {"type": "respond", "message": answer.output}
    else:
        out = {"type": "approve"}
    if out["type"] not in approval.allowed:
        raise RunnerError(
            f"approval {approval.id!r} ({approval.name}) does not allow {out['type']!r}; "
            f"allowed: {', '.join(approval.allowed)}",
            code=INVALID_RESUME,
        )
    return out


def generic_value(answer: Answer) -> Any:
    """What a user's interrupt() gets back: the item as sent, plus normalised fields; or,
    for an answer from LangGraph's API (Command(resume=value)), the value as sent."""
    base = dict(answer.raw) if isinstance(answer.raw, Mapping) else {}
    if LANGGRAPH_RESUME in base:
        return base[LANGGRAPH_RESUME]
    base.update(
        approve=answer.approve,
        approved=answer.approve,
        reason=answer.reason,
        output=answer.output,
    )
    if answer.edited_args is not None:
        base["arguments"] = answer.edited_args
    return base
