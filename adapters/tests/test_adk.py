"""The ADK bridge with the real google-adk and the scripted BaseLlm (offline)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentengine_runner import NATIVE_CALL
from agentengine_runner.testing import collect, make_request
from conftest import errors, kinds, make_runner, natives, of, run, text

from agentengine_adapters import adk_bridge
from agentengine_adapters.adk_bridge import AdkRunner
from agentengine_adapters.broken import BrokenRunner

AGENT = """
from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, LongRunningFunctionTool, ToolContext
from agentengine_adapters.adk_scripted import ScriptedAdkLlm

RAN = []
SEEN = []

def get_weather(city: str, tool_context: ToolContext) -> dict:
    \"\"\"The forecast for a city.\"\"\"
    SEEN.append({"user": tool_context.user_id, "state": tool_context.state.to_dict()})
    tool_context.state["user:last_city"] = city
    tool_context.state["app:lookups"] = 1
    tool_context.state["temp:scratch"] = "gone"
    tool_context.state["last_forecast"] = "sunny"
    return {"city": city, "forecast": "sunny"}

def delete_file(path: str) -> dict:
    \"\"\"Deletes a file.\"\"\"
    RAN.append(path)
    return {"deleted": path}

def start_export(table: str) -> dict:
    \"\"\"Starts a long export of a table; the result arrives later.\"\"\"
    STARTED.append(table)
    return INTERIM

STARTED = []
INTERIM = None  # what start_export answers at first: nothing, or an interim status

model = ScriptedAdkLlm(MODEL_KWARGS)
root_agent = LlmAgent(
    name="assistant",
    model=model,
    instruction="Be brief.",
    description="test assistant",
    tools=[get_weather, FunctionTool(delete_file, require_confirmation=True), LongRunningFunctionTool(start_export)],
)
"""


@pytest.fixture
def adk(project: Any) -> Any:
    def make(model_kwargs: str = "") -> AdkRunner:
        settings = project(AGENT.replace("MODEL_KWARGS", model_kwargs), framework="adk", variable="root_agent")
        runner = make_runner(settings)
        assert isinstance(runner, AdkRunner), getattr(runner, "error", runner)
        return runner

    return make


async def turn(
    runner: Any,
    input: Any = "hello",
    *,
    user: str = "u1",
    session: str = "s1",
    is_resume: bool = False,
    history: list[dict[str, Any]] | None = None,
    tiers: dict[str, Any] | None = None,
    **payload: Any,
) -> list[Any]:
    ctx: dict[str, Any] = {
        "platform_context": {"app_name": "app", "user_id": user, "session_id": session, "invocation_id": "inv"},
        "history": history or [],
        "is_resume": is_resume,
        "state": {},
        "state_tiers": tiers or {"app": {}, "user": {}, "session": {}},
    }
    payload = {"history": history or [], **payload}
    request = make_request(input, payload=payload, session_context=ctx, session_id=session, user_id=user, invocation_id="inv")
    return await collect(runner, request)


def module(runner: AdkRunner) -> Any:
    return runner.entry.module


def test_describe(adk: Any) -> None:
    d = adk().describe()
    assert (d.framework, d.agent_name, d.description) == ("adk", "proj", "test assistant")
    assert d.capabilities.resume


def test_describe_reports_what_adks_dev_ui_draws(adk: Any) -> None:
    runner = adk()
    # Not at start: a process serving turns never pays for the dev UI's drawing.
    assert runner.describe().native is None
    native = run(lambda: runner.call(NATIVE_CALL, None))
    assert run(lambda: runner.call(NATIVE_CALL, None)) is native  # computed once
    try:
        import google.adk.cli.utils.graph_visualization  # noqa: F401
    except ImportError:
        # google-adk before 2.0: the root agent's graph as 1.x's agent_graph draws it, and
        # the agents by name and description.
        assert native["app_info"]["root_agent"] == {"name": "assistant", "description": "test assistant"}
        for mode in ("light", "dark"):
            dot = native["graphs"][mode][""][""]["dotSrc"]
            assert "digraph" in dot and "get_weather" in dot
        assert native["graphs"]["light"] != native["graphs"]["dark"]
        json.dumps(native)
        return
    assert native["app_info"]["root_agent"]["name"] == "assistant"
    assert {t["name"] for t in native["app_info"]["root_agent"]["tools"]} >= {"get_weather", "delete_file"}
    for mode in ("light", "dark"):
        dot = native["graphs"][mode][""][""]["dotSrc"]
        assert "digraph" in dot and "get_weather" in dot
    assert native["graphs"]["light"] != native["graphs"]["dark"]
    json.dumps(native)  # what the runner sends as native_json


def test_dev_ui_drawing_waits_for_the_hosts_call(adk: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Drawing imports ADK's dev server and Graphviz (~33 MB, about a second): a process
    # that only serves turns must not, so neither its start nor describe() draws.
    drawn: list[Any] = []
    monkeypatch.setattr(adk_bridge, "dev_info", lambda obj, agent: drawn.append(agent) or {"app_info": {}})
    runner = adk()
    runner.describe()
    run(lambda: turn(runner, "hi"))
    assert drawn == []
    assert run(lambda: runner.call(NATIVE_CALL, None)) == {"app_info": {}}
    assert len(drawn) == 1


def test_streamed_text_is_not_counted_twice(adk: Any) -> None:
    events = run(lambda: turn(adk(), "hi there"))
    deltas = of(events, "text_delta")
    assert len(deltas) > 1  # word by word
    assert text(events) == "You said: hi there"
    assert [m.text for m in of(events, "message_done")] == ["You said: hi there"]
    assert of(events, "usage")[0].output_tokens > 0
    assert not errors(events)


def test_each_adk_event_reports_its_own_fields_before_its_items(adk: Any) -> None:
    events = run(lambda: turn(adk(), "weather city=Paris"))
    metas = natives(events, "event.meta")
    # The agent's own name, not the project's; usage with the model's responses; the
    # turn's end with its last one.
    assert metas and {m["author"] for m in metas} == {"assistant"}
    assert metas[0]["usageMetadata"]["totalTokenCount"] > 0
    assert metas[-1]["turnComplete"] is True and metas[-1]["finishReason"] == "STOP"
    kinds_ = kinds(events)
    first_meta = next(i for i, e in enumerate(events) if e.WhichOneof("event") == "native" and e.native.kind == "event.meta")
    assert first_meta < kinds_.index("tool_call")
    # Partials of one response share their meta: not one per token.
    streamed = run(lambda: turn(adk(), "say a few more words please"))
    assert len(natives(streamed, "event.meta")) < len(of(streamed, "text_delta"))


def test_thoughts_become_reasoning(adk: Any) -> None:
    events = run(lambda: turn(adk('reasoning="thinking hard"'), "hi"))
    assert "".join(r.text for r in of(events, "reasoning_delta")) == "thinking hard"
    assert text(events) == "You said: hi"


def test_tool_call_ids_and_state_prefixes(adk: Any) -> None:
    runner = adk()
    tiers = {"app": {"region": "eu"}, "user": {"lang": "fr"}, "session": {"topic": "trip"}}
    events = run(lambda: turn(runner, "weather city=Paris", tiers=tiers))
    calls, results = of(events, "tool_call"), of(events, "tool_result")
    assert [c.name for c in calls] == ["get_weather"]
    assert json.loads(calls[0].arguments) == {"city": "Paris"}
    assert [r.call_id for r in results] == [calls[0].call_id]
    assert json.loads(results[0].output) == {"city": "Paris", "forecast": "sunny"}
    assert "Tool results" in text(events)
    # The tool saw the host's tiers under ADK's prefixes.
    seen = module(runner).SEEN[-1]
    assert seen["user"] == "u1"
    assert {"app:region": "eu", "user:lang": "fr", "topic": "trip"}.items() <= seen["state"].items()
    delta: dict[str, Any] = {}
    for d in of(events, "state_delta"):
        delta.update(json.loads(d.delta_json))
    assert delta == {"user:last_city": "Paris", "app:lookups": 1, "last_forecast": "sunny"}
    kinds_ = kinds(events)
    assert kinds_.index("tool_call") < kinds_.index("tool_result") < kinds_.index("message_done")


def confirm_turn(runner: Any) -> tuple[list[Any], Any]:
    events = run(lambda: turn(runner, "please delete file path=/tmp/a"))
    approvals = of(events, "approval_request")
    assert len(approvals) == 1, kinds(events)
    return events, approvals[0]


def resumed_history(events: list[Any]) -> list[dict[str, Any]]:
    """The history the host would project for the resume turn."""
    call = of(events, "tool_call")[0]
    a = of(events, "approval_request")[0]
    return [
        {"role": "user", "type": "user_message", "content": "please delete file path=/tmp/a", "seq": 1},
        {"role": "assistant", "type": "tool_call", "content": "[tool_call]", "call_id": call.call_id,
         "name": call.name, "arguments": call.arguments, "seq": 2},
        {"role": "assistant", "type": "approval_request", "content": "[approval_request]", "call_id": a.call_id,
         "name": a.name, "arguments": a.arguments, "seq": 3},
    ]


def resume_payload(a: Any, approve: bool, *, detail: bool = True) -> dict[str, Any]:
    resume = {"approval_request_id": a.id, "approve": approve, "call_id": a.call_id, "name": a.name,
              "arguments": a.arguments}
    if detail:
        resume["detail"] = json.loads(a.detail_json)
    return resume


def test_confirmation_asks_then_approve_runs_the_tool(adk: Any) -> None:
    runner = adk()
    events, a = confirm_turn(runner)
    call = of(events, "tool_call")[0]
    assert a.id.startswith("adk-") and a.id != call.call_id
    assert (a.call_id, a.name, json.loads(a.arguments)) == (call.call_id, "delete_file", {"path": "/tmp/a"})
    assert not of(events, "tool_result")  # the placeholder response is not a result
    assert module(runner).RAN == []

    answer = {"type": "mcp_approval_response", "approval_request_id": a.id, "approve": True}
    resumed = run(lambda: turn(runner, answer, is_resume=True, history=resumed_history(events),
                               resume=resume_payload(a, True)))
    assert not errors(resumed), errors(resumed)
    assert module(runner).RAN == ["/tmp/a"]
    results = of(resumed, "tool_result")
    assert [r.call_id for r in results] == [call.call_id]
    assert json.loads(results[0].output) == {"deleted": "/tmp/a"}
    assert "deleted" in text(resumed)
    assert not of(resumed, "approval_request")


def test_confirmation_reject_does_not_run_the_tool(adk: Any) -> None:
    runner = adk()
    events, a = confirm_turn(runner)
    answer = {"type": "mcp_approval_response", "approval_request_id": a.id, "approve": False, "reason": "no"}
    resumed = run(lambda: turn(runner, answer, is_resume=True, history=resumed_history(events),
                               resume=resume_payload(a, False)))
    assert not errors(resumed), errors(resumed)
    assert module(runner).RAN == []
    results = of(resumed, "tool_result")
    assert [r.call_id for r in results] == [a.call_id]
    assert results[0].is_error and "rejected" in results[0].output


@pytest.mark.parametrize("detail", [True, False])
def test_resume_on_a_fresh_runner(adk: Any, detail: bool) -> None:
    """A restarted runner resumes from the approval's detail, or from payload.resume alone."""
    events, a = confirm_turn(adk())
    fresh = adk()
    answer = {"type": "function_call_output", "call_id": a.call_id, "output": json.dumps({"approve": True})}
    resumed = run(lambda: turn(fresh, answer, is_resume=True, history=resumed_history(events),
                               resume=resume_payload(a, True, detail=detail)))
    assert not errors(resumed), errors(resumed)
    assert module(fresh).RAN == ["/tmp/a"]
    assert [r.call_id for r in of(resumed, "tool_result")] == [a.call_id]


def long_running_turn(runner: Any, interim: Any = None) -> tuple[list[Any], Any]:
    module(runner).INTERIM = interim
    events = run(lambda: turn(runner, "please start export table=orders"))
    approvals = of(events, "approval_request")
    assert len(approvals) == 1, kinds(events)
    return events, approvals[0]


@pytest.mark.parametrize(("fresh", "interim"), [(False, None), (True, None), (False, {"status": "pending"})])
def test_long_running_tool_asks_then_resumes_with_its_output(adk: Any, fresh: bool, interim: Any) -> None:
    runner = adk()
    events, a = long_running_turn(runner, interim)
    assert not errors(events), errors(events)
    calls = of(events, "tool_call")
    assert [c.name for c in calls] == ["start_export"]
    call = calls[0]
    assert (a.id, a.call_id, a.name, json.loads(a.arguments)) == (call.call_id, call.call_id, "start_export", {"table": "orders"})
    assert json.loads(a.detail_json)["kind"] == "long_running"
    assert module(runner).STARTED == ["orders"]  # the tool started; its interim answer is no result
    assert not of(events, "tool_result")
    assert kinds(events)[-1] == "approval_request"  # the run ends on the approval
    if interim is None:
        assert not of(events, "message_done")  # ADK paused on the call
    else:
        # ADK shows the model the interim status; its reply is text, the call stays pending.
        assert [m.text for m in of(events, "message_done")] == ['Tool results:\nstart_export: {"status": "pending"}']

    if fresh:
        runner = adk()  # a restarted runner resumes from the approval's detail
    output = json.dumps({"rows": 42, "status": "done"})
    answer = {"type": "function_call_output", "call_id": a.call_id, "output": output}
    resume = {"approval_request_id": a.id, "approve": True, "output": output, "call_id": a.call_id, "name": a.name,
              "arguments": a.arguments, "detail": json.loads(a.detail_json)}
    history = [
        {"role": "user", "type": "user_message", "content": "please start export table=orders", "seq": 1},
        {"role": "assistant", "type": "tool_call", "content": "[tool_call]", "call_id": call.call_id,
         "name": call.name, "arguments": call.arguments, "seq": 2},
        {"role": "assistant", "type": "approval_request", "content": "[approval_request]", "call_id": a.call_id,
         "name": a.name, "arguments": a.arguments, "seq": 3},
    ]
    started = list(module(runner).STARTED)
    resumed = run(lambda: turn(runner, answer, is_resume=True, history=history, resume=resume))
    assert not errors(resumed), errors(resumed)
    assert not of(resumed, "approval_request")
    assert module(runner).STARTED == started  # not run again on resume
    results = of(resumed, "tool_result")
    assert [r.call_id for r in results] == [call.call_id]
    assert json.loads(results[0].output) == {"rows": 42, "status": "done"}
    # ADK handed the tool's response to the model, which answered with it.
    last = module(runner).model.requests[-1].contents[-1]
    responses = [p.function_response for p in last.parts if p.function_response]
    assert [(r.id, r.name, r.response) for r in responses] == [(call.call_id, "start_export", {"rows": 42, "status": "done"})]
    done = [m.text for m in of(resumed, "message_done")]
    assert done == ['Tool results:\nstart_export: {"rows": 42, "status": "done"}']
    assert kinds(resumed).index("tool_result") < kinds(resumed).index("message_done")


def test_request_instructions_reach_the_model(adk: Any) -> None:
    runner = adk()
    events = run(lambda: turn(runner, "hi", instructions="Answer in French."))
    assert not errors(events), errors(events)
    requests = module(runner).model.requests
    system = requests[-1].config.system_instruction
    assert "Be brief." in system and "Answer in French." in system
    assert system.index("Be brief.") < system.index("Answer in French.")
    assert text(events) == "You said: hi"  # not mixed into the user's message
    # Per run only: the next turn without instructions does not carry them.
    run(lambda: turn(runner, "again"))
    assert "Answer in French." not in (module(runner).model.requests[-1].config.system_instruction or "")


def test_resume_without_a_pending_approval_is_an_error(adk: Any) -> None:
    answer = {"type": "mcp_approval_response", "approval_request_id": "nope", "approve": True}
    events = run(lambda: turn(adk(), answer, is_resume=True))
    assert kinds(events) == ["error"]
    assert errors(events)[0].code == "invalid_resume"


def test_history_reaches_the_model(adk: Any) -> None:
    runner = adk()
    history = [
        {"role": "user", "type": "user_message", "content": "my name is Bob", "seq": 1},
        {"role": "assistant", "type": "assistant_message", "content": "Hi Bob", "seq": 2},
        {"role": "user", "type": "user_message", "content": "weather city=Rome", "seq": 3},
        {"role": "assistant", "type": "tool_call", "content": "[tool_call] get_weather", "call_id": "c1",
         "name": "get_weather", "arguments": '{"city": "Rome"}', "seq": 4},
        {"role": "user", "type": "tool_result", "content": '[tool_result] get_weather: {"forecast": "rain"}',
         "call_id": "c1", "name": "get_weather", "output": '{"forecast": "rain"}', "seq": 5},
    ]
    events = run(lambda: turn(runner, "what is my name", history=history))
    assert text(events) == "You said: what is my name"
    contents = module(runner).model.requests[-1].contents
    flat = [(c.role, p.text or p.function_call or p.function_response) for c in contents for p in c.parts]
    assert flat[0] == ("user", "my name is Bob")
    assert flat[1] == ("model", "Hi Bob")
    assert flat[3][1].id == "c1" and flat[3][1].name == "get_weather"
    assert flat[4][1].id == "c1" and flat[4][1].response == {"forecast": "rain"}
    assert flat[-1] == ("user", "what is my name")


NOTE = {"temp": 21, "note": "a: b"}  # its text holds ": ", the display text's separator
STORED_RESULT = {"role": "user", "type": "tool_result", "content": f"[tool_result] get_weather: {json.dumps(NOTE)}",
                 "call_id": "c1", "name": "get_weather", "output": json.dumps(NOTE), "seq": 5}
# A client's function_call_output: no tool name, the output as the client sent it.
CLIENT_RESULT = {"role": "user", "type": "tool_result", "content": f"[tool_result] {json.dumps(NOTE)}",
                 "call_id": "c1", "output": json.dumps(NOTE), "seq": 5}


@pytest.mark.parametrize("result", [STORED_RESULT, CLIENT_RESULT, {**CLIENT_RESULT, "output": NOTE}],
                         ids=["stored", "client", "client-object"])
def test_json_tool_output_reaches_the_model_intact(adk: Any, result: dict[str, Any]) -> None:
    runner = adk()
    history = [
        {"role": "user", "type": "user_message", "content": "weather city=Oslo", "seq": 1},
        {"role": "assistant", "type": "tool_call", "content": "[tool_call] get_weather", "call_id": "c1",
         "name": "get_weather", "arguments": '{"city": "Oslo"}', "seq": 2},
        result,
    ]
    events = run(lambda: turn(runner, "thanks", history=history))
    assert not errors(events)
    contents = module(runner).model.requests[-1].contents
    responses = [p.function_response for c in contents for p in c.parts if p.function_response]
    assert [(r.id, r.name, r.response) for r in responses] == [("c1", "get_weather", NOTE)]


def test_two_users_with_one_session_id_never_share_state(adk: Any) -> None:
    runner = adk()

    async def both() -> tuple[list[Any], list[Any]]:
        a = await turn(runner, "weather city=Oslo", user="alice", session="s1",
                       tiers={"app": {}, "user": {"secret": "alice's"}, "session": {"note": "a"}})
        b = await turn(runner, "weather city=Lima", user="bob", session="s1")
        return a, b

    a, b = run(both)
    assert not errors(a) and not errors(b)
    seen_a, seen_b = module(runner).SEEN
    assert seen_a["user"] == "alice" and seen_b["user"] == "bob"
    assert seen_a["state"]["user:secret"] == "alice's"
    assert "user:secret" not in seen_b["state"] and "note" not in seen_b["state"]
    assert "user:last_city" not in seen_b["state"]  # alice's write did not leak


def test_model_failure_is_an_error_event(adk: Any) -> None:
    events = run(lambda: turn(adk('fail_with="model exploded"'), "hi"))
    errs = errors(events)
    assert len(errs) == 1 and "model exploded" in errs[0].message


def test_not_an_agent_gives_a_broken_runner(project: Any) -> None:
    settings = project("root_agent = 42\n", framework="adk", variable="root_agent")
    runner = make_runner(settings)
    assert isinstance(runner, BrokenRunner)
    events = run(lambda: turn(runner, "hi"))
    assert kinds(events) == ["error"]
    assert "not a google-adk agent" in errors(events)[0].message


def test_the_a2a_agent_is_remembered_missing_only_without_a2a() -> None:
    """ADK's build_node imports its A2A agent at every call; the bridge makes that import
    fail at once when a2a-sdk is not installed, and leaves it alone when it is."""
    import importlib.util
    import sys

    import agentengine_adapters.adk_bridge  # noqa: F401

    name = "google.adk.agents.remote_a2a_agent"
    if importlib.util.find_spec("a2a") is None:
        assert sys.modules.get(name, "absent") is None
    else:
        assert sys.modules.get(name) is not None
