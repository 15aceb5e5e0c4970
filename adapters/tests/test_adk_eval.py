"""ADK's evaluation through the ADK bridge's Call methods (adk_eval.py), with the real
google-adk, its eval extras and the scripted BaseLlm."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from agentengine_runner import CallError
from conftest import make_runner, run

from agentengine_adapters.adk_bridge import AdkRunner

AGENT = """
from google.adk.agents import LlmAgent
from agentengine_adapters.adk_scripted import ScriptedAdkLlm

def get_weather(city: str) -> dict:
    \"\"\"The forecast for a city.\"\"\"
    return {"city": city, "forecast": "sunny"}

root_agent = LlmAgent(name="assistant", model=ScriptedAdkLlm(), instruction="Be brief.", tools=[get_weather])
"""

LOCAL = [
    {"metricName": "tool_trajectory_avg_score", "threshold": 1.0},
    {"metricName": "response_match_score", "threshold": 0.8},
]


@pytest.fixture
def adk(project: Any, monkeypatch: pytest.MonkeyPatch) -> AdkRunner:
    for k in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(k, raising=False)
    runner = make_runner(project(AGENT, framework="adk", variable="root_agent"))
    assert isinstance(runner, AdkRunner), getattr(runner, "error", runner)
    return runner


async def session_json(runner: AdkRunner, *texts: str) -> dict[str, Any]:
    """A session of the agent as ADK's API serves it (what the host sends)."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    r = InMemoryRunner(agent=runner.agent, app_name="app")
    s = await r.session_service.create_session(app_name="app", user_id="u1")
    for text in texts:
        async for _ in r.run_async(
            user_id="u1", session_id=s.id, new_message=types.Content(role="user", parts=[types.Part(text=text)])
        ):
            pass
    done = await r.session_service.get_session(app_name="app", user_id="u1", session_id=s.id)
    assert done is not None
    return done.model_dump(mode="json", by_alias=True)


def case_of(runner: AdkRunner, *texts: str) -> dict[str, Any]:
    async def go() -> Any:
        sess = await session_json(runner, *texts)
        return await runner.call("adk.eval.case", {"app_name": "app", "user_id": "u1", "eval_id": "c1", "session": sess})

    case: dict[str, Any] = run(go)
    return case


def test_a_session_becomes_an_eval_case_of_its_invocations(adk: AdkRunner) -> None:
    case = case_of(adk, "weather city=Paris", "hello")
    assert case["evalId"] == "c1"
    conv = case["conversation"]
    assert [i["userContent"]["parts"][0]["text"] for i in conv] == ["weather city=Paris", "hello"]
    calls = [
        p["functionCall"]
        for e in conv[0]["intermediateData"]["invocationEvents"]
        for p in (e.get("content") or {}).get("parts", [])
        if "functionCall" in p
    ]
    assert [(c["name"], c["args"]) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert conv[1]["finalResponse"]["parts"][0]["text"] == "You said: hello"
    assert case["sessionInput"] == {"appName": "app", "userId": "u1", "state": {}}


def test_run_evaluates_the_loaded_agent_with_adks_evaluator(adk: AdkRunner) -> None:
    case = case_of(adk, "weather city=Paris")
    out = run(
        lambda: adk.call(
            "adk.eval.run",
            {"app_name": "app", "eval_set": {"eval_set_id": "s1", "eval_cases": [case]}, "eval_metrics": LOCAL},
        )
    )
    [r] = out["run_eval_results"]
    assert (r["evalSetId"], r["evalId"], r["finalEvalStatus"]) == ("s1", "c1", 1)  # PASSED
    scores = {m["metricName"]: m["score"] for m in r["overallEvalMetricResults"]}
    assert scores["tool_trajectory_avg_score"] == 1.0 and scores["response_match_score"] == 1.0
    result = out["eval_set_result"]
    assert result["evalSetId"] == "s1" and result["evalSetResultId"].startswith("app_s1_")
    assert [c["evalId"] for c in result["evalCaseResults"]] == ["c1"]
    # The session the inference ran in, with the agent's events, for the host to keep.
    [sess] = out["sessions"]
    assert (sess["user_id"], sess["session_id"]) == (r["userId"], r["sessionId"])
    texts = [p.get("text") for e in sess["events"] for p in (e.get("content") or {}).get("parts", [])]
    assert "weather city=Paris" in texts


def test_a_changed_answer_fails_the_case(adk: AdkRunner) -> None:
    case = case_of(adk, "hello")
    case["conversation"][0]["finalResponse"]["parts"][0]["text"] = "something else entirely"
    out = run(
        lambda: adk.call(
            "adk.eval.run",
            {"app_name": "app", "eval_set": {"eval_set_id": "s1", "eval_cases": [case]}, "eval_metrics": LOCAL[1:]},
        )
    )
    assert out["run_eval_results"][0]["finalEvalStatus"] == 2  # FAILED


def test_metrics_info_lists_adks_registered_metrics(adk: AdkRunner) -> None:
    names = {m["metricName"] for m in run(lambda: adk.call("adk.eval.metrics", {}))["metricsInfo"]}
    assert {"tool_trajectory_avg_score", "response_match_score", "final_response_match_v2"} <= names


def test_llm_judged_metrics_need_a_judge_model(adk: AdkRunner) -> None:
    case = case_of(adk, "hello")
    with pytest.raises(CallError) as err:
        run(
            lambda: adk.call(
                "adk.eval.run",
                {
                    "app_name": "app",
                    "eval_set": {"eval_set_id": "s1", "eval_cases": [case]},
                    "eval_metrics": [{"metricName": "final_response_match_v2", "threshold": 0.5}],
                },
            )
        )
    assert err.value.code == "failed_precondition"
    assert "judged by a language model" in str(err.value) and "GOOGLE_API_KEY" in str(err.value)


@pytest.mark.parametrize(
    ("arg", "code", "want"),
    [
        ([], "invalid_argument", "must be a JSON object"),
        ({"app_name": "app", "eval_set": {"eval_cases": []}, "eval_metrics": LOCAL}, "invalid_argument", "eval_set_id"),
        ({"app_name": "app", "eval_set": {"eval_set_id": "s", "eval_cases": []}, "eval_metrics": []}, "invalid_argument", "at least one metric"),
        (
            {"app_name": "app", "eval_set": {"eval_set_id": "s", "eval_cases": []}, "eval_case_ids": ["x"], "eval_metrics": LOCAL},
            "not_found",
            "Eval case `x` not found",
        ),
        (
            {"app_name": "app", "eval_set": {"eval_set_id": "s", "eval_cases": []}, "eval_metrics": [{"metricName": "nope"}]},
            "invalid_argument",
            "unknown metric 'nope'",
        ),
    ],
)
def test_bad_run_arguments_are_refused(adk: AdkRunner, arg: Any, code: str, want: str) -> None:
    with pytest.raises(CallError) as err:
        run(lambda: adk.call("adk.eval.run", arg))
    assert err.value.code == code and want in str(err.value)


def test_the_projects_eval_set_files_are_read_as_adk_reads_them(adk: AdkRunner) -> None:
    case = case_of(adk, "hello")
    root = adk.settings.project_dir
    (root / "greetings.evalset.json").write_text(json.dumps({"eval_set_id": "other", "eval_cases": [case]}))
    (root / "broken.evalset.json").write_text("{")
    sets = run(lambda: adk.call("adk.eval.files", {}))["eval_sets"]
    assert list(sets) == ["greetings"]
    assert sets["greetings"]["eval_set_id"] == "greetings"  # the file's name is its id
    assert [c["evalId"] for c in sets["greetings"]["eval_cases"]] == ["c1"]


def test_unknown_methods_are_not_implemented(adk: AdkRunner) -> None:
    with pytest.raises(NotImplementedError):
        run(lambda: adk.call("adk.nothing", {}))


def test_missing_eval_extras_name_the_fix(adk: AdkRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # As in a project without google-adk[eval]: pandas cannot be imported.
    for name in list(sys.modules):
        if name.startswith(("google.adk.evaluation", "google.adk.cli.cli_eval", "pandas")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(CallError) as err:
        run(lambda: adk.call("adk.eval.metrics", {}))
    assert err.value.code == "failed_precondition"
    assert 'pip install "google-adk[eval]"' in str(err.value) and "pandas" in str(err.value)
