"""KsADK's runner_class where ksadk is not installed, and the mapping of KsADK's runner
interface (payload in, chunks out). Serving a runner class with the real ksadk is the
project matrix's ksadk-runner-class sample (conformance/projects)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentengine_runner import Capabilities, Description, Emitter, Runner, RunRequest
from agentengine_runner.testing import make_request
from conftest import errors, kinds, make_runner, of, run, text, turn

from agentengine_adapters import doctor
from agentengine_adapters.ksadk_bridge import _ChunkWriter, ksadk_history, ksadk_installed, ksadk_payload

LONG_TASK = """
from ksadk.runners.langgraph_runner import LangGraphRunner

class LongTaskRunner(LangGraphRunner):
    async def stream(self, input_data):
        yield {"type": "final", "output": "started"}

root_agent = None
"""


def runner_class_project(project: Any) -> Any:
    import dataclasses

    if ksadk_installed():
        pytest.skip("ksadk is installed here: these tests are about an environment without it")

    settings = project(LONG_TASK, variable="root_agent")
    return dataclasses.replace(settings, runner_class="agent.LongTaskRunner")


def test_without_ksadk_every_run_names_the_field_and_the_fix(project: Any) -> None:
    settings = runner_class_project(project)

    async def go() -> list[Any]:
        return await turn(make_runner(settings), "hello")

    (error,) = errors(run(go))
    for want in ("field 'runner_class'", "agent.LongTaskRunner", "ksadk is not installed", "fix: add ksadk to"):
        assert want in error.message, error.message
    assert "root_agent" not in error.message


def test_doctor_checks_the_runner_class_not_root_agent(project: Any) -> None:
    settings = runner_class_project(project)
    checks = doctor.run_checks(settings)
    names = [c.name for c in checks]
    assert "agent_variable" not in names and "hook" not in names
    (check,) = [c for c in checks if c.name == "runner_class"]
    assert not check.ok
    assert "ksadk is not installed" in check.detail
    assert check.fix.startswith(f"add ksadk to {settings.project_dir / 'requirements.txt'}")
    assert not any("root_agent =" in c.fix for c in checks)


def test_payload_in_ksadk_shape() -> None:
    history = [
        {"role": "user", "type": "user_message", "content": "my name is Ada"},
        {"role": "assistant", "type": "tool_call", "name": "lookup", "arguments": {"q": "Ada"}, "call_id": "c1"},
        {"role": "user", "type": "tool_result", "content": "[tool_result] lookup: found", "call_id": "c1"},
        {"role": "assistant", "type": "assistant_message", "content": "Nice to meet you."},
    ]
    ctx = {"history": history, "platform_context": {"user_id": "u1"}, "kb_context": "kb", "is_resume": False}
    request = make_request("who am I?", payload={"model": "the-agent", "instructions": "be brief"},
                           session_context=ctx, session_id="s1", invocation_id="inv1")
    payload = ksadk_payload(request)
    assert payload["input"] == "who am I?" and payload["instructions"] == "be brief"
    assert payload["session_id"] == "s1" and payload["invocation_id"] == "inv1"
    assert payload["platform_context"] == {"user_id": "u1"} and payload["kb_context"] == "kb"
    assert "model" not in payload and "resume" not in payload
    assert payload["history"] == [
        {"role": "user", "content": "my name is Ada"},
        {"role": "model", "content": '[tool_call] lookup: {"q": "Ada"}'},
        {"role": "user", "content": "[tool_result] lookup: found"},
        {"role": "model", "content": "Nice to meet you."},
        {"role": "user", "content": "who am I?"},
    ]


def test_resume_payload_carries_the_answer() -> None:
    answer = {"type": "mcp_approval_response", "approval_request_id": "a1", "approve": False, "reason": "no"}
    request = make_request([answer], session_context={"is_resume": True}, session_id="s1")
    payload = ksadk_payload(request)
    assert payload["resume"] is True
    assert payload["input"]["approval_request_id"] == "a1"
    assert payload["input"]["approve"] is False and payload["input"]["approval"] == "reject"
    assert payload["input"]["reason"] == "no"


def test_consecutive_turns_of_one_role_are_merged() -> None:
    assert ksadk_history([
        {"role": "user", "type": "user_message", "content": "a"},
        {"role": "user", "type": "user_message", "content": "b"},
    ]) == [{"role": "user", "content": "a\nb"}]


class Chunks(Runner):
    """Feeds a KsADK chunk sequence through the runner-class bridge's writer."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks

    def describe(self) -> Description:
        return Description(framework="langgraph", agent_name="t", description="", capabilities=Capabilities())

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        writer = _ChunkWriter(emit, "langgraph")
        for chunk in self.chunks:
            await writer.chunk(chunk)
        await writer.finish()


def feed(chunks: list[Any]) -> list[Any]:
    from agentengine_runner.testing import collect

    return run(lambda: collect(Chunks(chunks), make_request("x")))


def test_chunks_map_to_runner_events() -> None:
    events = feed([
        {"type": "step_start", "step_id": "s"},
        {"type": "thinking", "delta": "hmm"},
        {"type": "tool_call", "tool_name": "lookup", "tool_args": {"q": 1}, "run_id": "r-1"},
        {"type": "tool_result", "tool_name": "lookup", "tool_output": {"ok": True}, "run_id": "r-1"},
        {"type": "text", "delta": "Hel"},
        {"type": "text", "delta": "lo"},
        {"type": "checkpoint", "metadata": {"agentengine": {"checkpoint_id": "c"}}},
        {"type": "final", "output": "Hello", "usage": {"input_tokens": 3, "output_tokens": 2}},
    ])
    assert not errors(events)
    assert text(events) == "Hello"  # final repeats the streamed text: not sent again
    (call,) = of(events, "tool_call")
    (result,) = of(events, "tool_result")
    assert call.name == "lookup" and json.loads(call.arguments) == {"q": 1} and result.call_id == call.call_id
    assert json.loads(result.output) == {"ok": True}
    assert [u.output_tokens for u in of(events, "usage")] == [2]
    assert [n.kind for n in of(events, "native")] == ["checkpoint"]
    assert of(events, "reasoning_delta")[0].text == "hmm"


def test_objects_in_chunks_travel_as_their_string_form() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque!"

    events = feed([
        {"type": "tool_call", "tool_name": "t", "tool_args": {"when": Opaque()}},
        {"type": "tool_result", "tool_name": "t", "tool_output": {"value": Opaque()}},
        {"type": "final", "output": "ok"},
    ])
    assert not errors(events)
    (call,), (result,) = of(events, "tool_call"), of(events, "tool_result")
    assert json.loads(call.arguments) == {"when": "opaque!"} and json.loads(result.output) == {"value": "opaque!"}
    assert result.call_id == call.call_id


def test_final_output_is_the_answer_when_nothing_streamed() -> None:
    events = feed([{"type": "final", "output": "from final"}])
    assert text(events) == "from final" and kinds(events)[-1] == "message_done"


def test_an_interrupt_is_an_approval_request_and_ends_the_run() -> None:
    events = feed([
        {"type": "interrupt", "interrupt_info": {"approval_request_id": "ap1", "tool_name": "send_email",
                                                 "tool_args": {"to": "bob"}, "tool_call_id": "call_1",
                                                 "description": "Send it?"}},
        {"type": "text", "delta": "never"},
        {"type": "final", "output": "never"},
        {"type": "checkpoint", "metadata": {"agentengine": {"checkpoint_id": "c"}}},
    ])
    (ask,) = of(events, "approval_request")
    assert (ask.id, ask.call_id, ask.name, ask.message) == ("ap1", "call_1", "send_email", "Send it?")
    assert json.loads(ask.arguments) == {"to": "bob"}
    assert text(events) == "" and [n.kind for n in of(events, "native")] == ["checkpoint"]


def test_an_error_chunk_and_an_empty_stream_are_errors() -> None:
    (error,) = errors(feed([{"type": "error", "message": "model down"}]))
    assert "model down" in error.message
    (error,) = errors(feed([{"type": "step_start"}]))
    assert error.code == "runner_stream_ended_without_final_output"
