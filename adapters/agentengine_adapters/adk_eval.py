"""ADK's evaluation, run on the loaded agent: the methods of the Call RPC the ADK-web
surface uses for the dev UI's Eval tab. The host stores eval sets and results; this
module only computes, with google-adk's own code, what `adk web` computes:

- `adk.eval.metrics` (`{}`): `{"metricsInfo": [...]}`, the registered metrics (ADK's
  metrics-info).
- `adk.eval.case` (`{"app_name", "user_id", "eval_id", "session"}`, ADK's session JSON):
  the EvalCase of the session, its invocations as ADK converts a session.
- `adk.eval.run` (`{"app_name", "eval_set", "eval_case_ids", "eval_metrics"}`):
  `{"run_eval_results": [...], "eval_set_result": {...}, "sessions": [...]}`.
- `adk.eval.files` (`{}`): `{"eval_sets": {id: EvalSet}}`, the eval sets of the agent's
  directory (`<id>.evalset.json`, ADK's file convention, old formats converted as ADK does).

A run's `sessions` are the sessions ADK's inference ran the agent in (`{"user_id",
"session_id", "events"}`, ADK's events): `adk web` keeps them in its session service,
where the dev UI opens them from a result, so the host stores them as sessions too.

Shapes are ADK's models dumped as its FastAPI server answers them (camelCase aliases,
no nulls). ADK's evaluator needs its eval extras (pandas, rouge-score, ...): without
them the run is refused with the install command. Metrics judged by a language model
or by Vertex AI are refused, with the reason, when the runner has no Google credentials.
"""

from __future__ import annotations

import inspect
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentengine_runner import CallError
from google.adk.agents import BaseAgent
from google.adk.apps import App

log = logging.getLogger("agentengine_runner.adapters.adk")

METRICS = "adk.eval.metrics"
CASE = "adk.eval.case"
RUN = "adk.eval.run"
FILES = "adk.eval.files"
METHODS = (METRICS, CASE, RUN, FILES)

EVAL_SET_SUFFIX = ".evalset.json"

INSTALL = 'pip install "google-adk[eval]"'

# Metrics ADK computes locally (tool calls compared, ROUGE, counts and durations); every
# other registered metric asks a judge model or Vertex AI.
LOCAL_METRICS = frozenset(
    {
        "tool_trajectory_avg_score",
        "response_match_score",
        "tool_call_count_v1",
        "inference_call_count_v1",
        "token_usage_v1",
        "invocation_duration_v1",
    }
)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _missing(exc: ModuleNotFoundError) -> CallError:
    return CallError(
        f"ADK's evaluation needs google-adk's eval extras in the agent's environment "
        f"(missing module {exc.name!r}): install them with `{INSTALL}`",
        "failed_precondition",
    )


def _object(arg: Any, method: str) -> Mapping[str, Any]:
    if not isinstance(arg, Mapping):
        raise CallError(f"{method}: the argument must be a JSON object")
    return arg


def _str(arg: Mapping[str, Any], key: str, method: str) -> str:
    v = arg.get(key)
    if not isinstance(v, str) or not v:
        raise CallError(f"{method}: {key} must be a non-empty string")
    return v


def _has_judge() -> bool:
    # What google-genai reads to reach Gemini (API key) or Vertex AI.
    env = os.environ
    return bool(env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY")) or env.get(
        "GOOGLE_GENAI_USE_VERTEXAI", ""
    ).lower() in ("1", "true")


async def call(method: str, arg: Any, obj: BaseAgent | App, agent: BaseAgent, project_dir: Path) -> Any:
    if method == FILES:
        return eval_set_files(project_dir)
    if method == METRICS:
        return metrics_info()
    if method == CASE:
        return eval_case(_object(arg, method), agent)
    if method == RUN:
        return await run_eval(_object(arg, method), obj, agent)
    raise NotImplementedError(method)


def eval_set_files(project_dir: Path) -> dict[str, Any]:
    """The project's eval set files, read as ADK's local eval sets manager reads them; a
    file that is no eval set is logged and left out."""
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

    sets: dict[str, Any] = {}
    for path in sorted(project_dir.glob("*" + EVAL_SET_SUFFIX)):
        set_id = path.name[: -len(EVAL_SET_SUFFIX)]
        try:
            eval_set = load_eval_set_from_file(str(path), set_id)
        except Exception as exc:
            log.warning("%s is not an ADK eval set: %s: %s", path, type(exc).__name__, exc)
            continue
        dumped = _dump(eval_set)
        dumped["eval_set_id"] = set_id  # the file's name is its id, as for ADK
        sets[set_id] = dumped
    return {"eval_sets": sets}


def metrics_info() -> dict[str, Any]:
    try:
        from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY
    except ModuleNotFoundError as exc:
        raise _missing(exc) from exc
    return {"metricsInfo": [_dump(m) for m in DEFAULT_METRIC_EVALUATOR_REGISTRY.get_registered_metrics()]}


def eval_case(arg: Mapping[str, Any], agent: BaseAgent) -> dict[str, Any]:
    """The session as an eval case: ADK's conversion of its events into invocations, and
    the agent's empty state as the case's initial state (as `adk web` adds a session)."""
    from google.adk.cli.utils.evals import convert_session_to_eval_invocations
    from google.adk.cli.utils.state import create_empty_state
    from google.adk.evaluation.eval_case import EvalCase, SessionInput
    from google.adk.sessions.session import Session
    from pydantic import ValidationError

    app_name = _str(arg, "app_name", CASE)
    user_id = _str(arg, "user_id", CASE)
    eval_id = _str(arg, "eval_id", CASE)
    try:
        session = Session.model_validate(arg.get("session"))
    except ValidationError as exc:
        raise CallError(f"{CASE}: the session is not an ADK session: {exc}") from exc
    case = EvalCase(
        eval_id=eval_id,
        conversation=convert_session_to_eval_invocations(session),
        session_input=SessionInput(app_name=app_name, user_id=user_id, state=create_empty_state(agent)),
        creation_timestamp=time.time(),
    )
    out: dict[str, Any] = _dump(case)
    return out


def _run_types() -> Any:
    try:
        from google.adk.cli.dev_server import RunEvalResult
    except ImportError:  # google-adk 1.x: the routes live in adk_web_server
        from google.adk.cli.adk_web_server import RunEvalResult  # type: ignore[attr-defined,no-redef]
    return RunEvalResult


async def run_eval(arg: Mapping[str, Any], obj: BaseAgent | App, agent: BaseAgent) -> dict[str, Any]:
    """ADK's LocalEvalService on the loaded agent: inference of each case (the agent run
    on the case's user messages, in ADK's in-memory services), then the metrics."""
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
    from pydantic import TypeAdapter, ValidationError

    app_name = _str(arg, "app_name", RUN)
    try:
        eval_set = EvalSet.model_validate(arg.get("eval_set"))
        metrics = TypeAdapter(list[EvalMetric]).validate_python(arg.get("eval_metrics") or [])
    except ValidationError as exc:
        raise CallError(f"{RUN}: {exc}") from exc
    case_ids = arg.get("eval_case_ids") or []
    if not isinstance(case_ids, list) or not all(isinstance(c, str) for c in case_ids):
        raise CallError(f"{RUN}: eval_case_ids must be a list of strings")
    known = {c.eval_id for c in eval_set.eval_cases}
    unknown = [c for c in case_ids if c not in known]
    if unknown:
        raise CallError(f"Eval case `{unknown[0]}` not found in eval set `{eval_set.eval_set_id}`.", "not_found")
    if not metrics:
        raise CallError(f"{RUN}: choose at least one metric (eval_metrics is empty)")
    try:
        from google.adk.cli.cli_eval import _collect_eval_results, _collect_inferences
        from google.adk.evaluation.base_eval_service import InferenceConfig, InferenceRequest
        from google.adk.evaluation.eval_set_results_manager import EvalSetResultsManager
        from google.adk.evaluation.local_eval_service import LocalEvalService
        from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY
    except ModuleNotFoundError as exc:
        raise _missing(exc) from exc

    registered = {m.metric_name for m in DEFAULT_METRIC_EVALUATOR_REGISTRY.get_registered_metrics()}
    for m in metrics:
        if m.metric_name not in registered:
            raise CallError(f"{RUN}: unknown metric {m.metric_name!r} (registered: {', '.join(sorted(registered))})")
        if m.metric_name not in LOCAL_METRICS and not _has_judge():
            judge = getattr(getattr(getattr(m, "criterion", None), "judge_model_options", None), "judge_model", None)
            raise CallError(
                f"the metric {m.metric_name} is judged by a language model"
                f"{f' ({judge})' if judge else ''} or by Vertex AI, and none is available to the agent's runner "
                "(no GOOGLE_API_KEY, GEMINI_API_KEY or GOOGLE_GENAI_USE_VERTEXAI): set one, or choose "
                f"{', '.join(sorted(LOCAL_METRICS & registered))}",
                "failed_precondition",
            )
    try:
        from google.adk.evaluation.eval_config import append_default_efficiency_metrics

        metrics = append_default_efficiency_metrics(metrics)
    except ImportError:  # before 2.x: no efficiency metrics
        pass

    class Captured(EvalSetResultsManager):
        """Keeps the run's EvalSetResult for the host to store."""

        def __init__(self) -> None:
            self.results: list[Any] = []

        def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[Any]) -> None:
            from google.adk.evaluation._eval_set_results_manager_utils import create_eval_set_result

            self.results.append(create_eval_set_result(app_name, eval_set_id, eval_case_results))

        def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> Any:
            return None

        def list_eval_set_results(self, app_name: str) -> list[str]:
            return []

    sets = InMemoryEvalSetsManager()
    sets.create_eval_set(app_name, eval_set.eval_set_id)
    for case in eval_set.eval_cases:
        sets.add_eval_case(app_name, eval_set.eval_set_id, case)
    captured = Captured()
    from google.adk.sessions import InMemorySessionService

    sessions_service = InMemorySessionService()
    kwargs: dict[str, Any] = {
        "root_agent": agent,
        "eval_sets_manager": sets,
        "eval_set_results_manager": captured,
        "session_service": sessions_service,
    }
    if isinstance(obj, App) and "app" in inspect.signature(LocalEvalService.__init__).parameters:
        kwargs["app"] = obj
    service = LocalEvalService(**kwargs)
    inferences = await _collect_inferences(
        inference_requests=[
            InferenceRequest(
                app_name=app_name,
                eval_set_id=eval_set.eval_set_id,
                eval_case_ids=case_ids,
                inference_config=InferenceConfig(),
            )
        ],
        eval_service=service,
    )
    case_results = await _collect_eval_results(inference_results=inferences, eval_service=service, eval_metrics=metrics)

    RunEvalResult = _run_types()
    runs = []
    for r in case_results:
        fields = {
            "eval_set_file": r.eval_set_file,
            "eval_set_id": eval_set.eval_set_id,
            "eval_id": r.eval_id,
            "final_eval_status": r.final_eval_status,
            "overall_eval_metric_results": r.overall_eval_metric_results,
            "eval_metric_result_per_invocation": r.eval_metric_result_per_invocation,
            "user_id": r.user_id,
            "session_id": r.session_id,
        }
        if "eval_metric_results" in RunEvalResult.model_fields and "overall_eval_metric_results" not in RunEvalResult.model_fields:
            fields["eval_metric_results"] = fields.pop("overall_eval_metric_results")
        runs.append(_dump(RunEvalResult(**fields)))
    result = captured.results[0] if captured.results else None
    sessions = []
    for r in case_results:
        if not r.user_id:
            continue
        s = await sessions_service.get_session(app_name=app_name, user_id=r.user_id, session_id=r.session_id)
        if s is not None:
            sessions.append({"user_id": r.user_id, "session_id": r.session_id, "events": [_dump(e) for e in s.events]})
    return {
        "run_eval_results": runs,
        "eval_set_result": _dump(result) if result is not None else None,
        "sessions": sessions,
    }
