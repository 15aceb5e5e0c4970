"""Resume answers (framework-free: the ADK and LangGraph bridges share them)."""

from __future__ import annotations

from agentengine_adapters import resume


def test_every_described_answer_gets_its_approval_id() -> None:
    payload = {
        "input": [
            {"type": "function_call_output", "call_id": "c2", "output": '{"approved": false, "reason": "no"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "done"},
        ],
        "resume": {"approval_request_id": "a1", "call_id": "c1"},
        "resumes": [{"approval_request_id": "a1", "call_id": "c1"}, {"approval_request_id": "a2", "call_id": "c2"}],
    }
    first, second = resume.parse_answers(payload)
    assert (first.approval_id, first.call_id, first.approve, first.reason) == ("a2", "c2", False, "no")
    assert (second.approval_id, second.call_id, second.output) == ("a1", "c1", "done")


def test_answers_come_from_the_descriptions_when_input_has_none() -> None:
    payload = {"input": None, "resumes": [{"approval_request_id": "a1", "approve": True},
                                          {"approval_request_id": "a2", "approve": False, "reason": "later"}]}
    answers = resume.parse_answers(payload)
    assert [(a.approval_id, a.approve, a.reason) for a in answers] == [("a1", True, ""), ("a2", False, "later")]
    # An older host describes only the first answer.
    (only,) = resume.parse_answers({"input": None, "resume": {"approval_request_id": "a1", "approve": True}})
    assert only.approval_id == "a1"
