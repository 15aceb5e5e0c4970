"""Shared helpers: throwaway projects on disk, runners driven in-process, event filters.

Every test is offline: OPENAI_API_KEY is removed, so chat_model() is the scripted model.

Each test belongs to one framework (marker `core`, `langgraph`, `langchain`, `deepagents`
or `adk`: its file's entry in FILE_FRAMEWORK, or its own marker), because each bridge must
work in an environment holding only its framework. CI runs the suite once per framework
environment (tests/run_matrix.sh):

    AGENTENGINE_TEST_FRAMEWORK=adk python -m pytest tests -m "core or adk"

There a missing framework is an error. Without AGENTENGINE_TEST_FRAMEWORK (a developer's
environment), tests of frameworks the environment lacks are skipped as belonging to
another environment.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import os
import sys
import textwrap
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner.emitter import checkpoints_from_pb
from agentengine_runner.runner import Checkpoint
from agentengine_runner.testing import collect, make_request

from agentengine_adapters.bridges import make_runner
from agentengine_adapters.config import Settings

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]

# What each framework's tests import (a framework environment holds at least these).
FRAMEWORK_MODULES = {
    "core": (),
    "langgraph": ("langgraph",),
    "langchain": ("langchain", "langchain_openai"),
    "deepagents": ("deepagents",),
    "adk": ("google.adk", "openai"),
    # OpenTelemetry's traces of LangGraph and ADK runs: the full environment only.
    "otel": ("opentelemetry.sdk", "langgraph", "google.adk"),
}
FILE_FRAMEWORK = {
    "test_adk.py": "adk",
    "test_answer_once.py": "langgraph",
    "test_adk_eval.py": "adk",
    "test_adk_graph.py": "adk",
    "test_adk_openai.py": "adk",
    "test_adk_resume.py": "adk",
    "test_checkpoint.py": "langgraph",
    "test_missing.py": "core",
    "test_continue.py": "langgraph",
    "test_deepagents.py": "deepagents",
    "test_deepagents_resume.py": "deepagents",
    "test_examples.py": "langchain",
    "test_adk_artifacts.py": "adk",
    "test_adk_history.py": "adk",
    "test_isolation.py": "core",
    "test_ksadk_runner_class.py": "core",
    "test_ksadk_patterns.py": "langgraph",
    "test_langchain.py": "langchain",
    "test_langgraph.py": "langgraph",
    "test_process.py": "langgraph",
    "test_resume.py": "core",
    "test_runconfig.py": "core",
    "test_traces.py": "otel",
    "test_units.py": "langgraph",
}
REQUIRED = os.environ.get("AGENTENGINE_TEST_FRAMEWORK", "").strip()


def pytest_configure(config: pytest.Config) -> None:
    for name in FRAMEWORK_MODULES:
        config.addinivalue_line("markers", f"{name}: needs the {name} environment (see conftest.py)")


def has_framework(name: str) -> bool:
    try:
        return all(importlib.util.find_spec(m) is not None for m in FRAMEWORK_MODULES[name])
    except ModuleNotFoundError:  # a missing parent package ("google")
        return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # A file of another framework cannot even be imported here; in that framework's own
    # environment (REQUIRED) it is always collected, so a missing package fails loudly.
    framework = FILE_FRAMEWORK.get(collection_path.name)
    if framework and framework != REQUIRED and not has_framework(framework):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        marked = [m.name for m in item.iter_markers() if m.name in FRAMEWORK_MODULES]
        if not marked:
            default = FILE_FRAMEWORK.get(item.path.name)
            if default is None:
                raise pytest.UsageError(f"{item.path.name}: add it to FILE_FRAMEWORK in tests/conftest.py")
            item.add_marker(getattr(pytest.mark, default))
            marked = [default]
        framework = marked[0]
        if framework != REQUIRED and not has_framework(framework):
            item.add_marker(pytest.mark.skip(reason=f"a {framework} test: run it in the {framework} environment"))


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AGENTENGINE_MODEL", raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Callable[..., Settings]]:
    """project(source, framework=..., entry=..., variable=...) -> Settings of a new project
    whose agent.py is source. Imported project modules are forgotten afterwards, so the
    next test's "agent" module is its own."""
    made: list[Path] = []

    def make(
        source: str,
        *,
        framework: str = "langgraph",
        entry: str = "agent.py",
        variable: str = "graph",
        files: dict[str, str] | None = None,
        name: str = "proj",
    ) -> Settings:
        root = tmp_path / f"{name}{len(made)}"
        root.mkdir()
        (root / "agent.py").write_text(textwrap.dedent(source))
        for rel, text in (files or {}).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        made.append(root)
        return Settings(
            project_dir=root,
            agent_name=name,
            framework=framework,
            entry_point=entry,
            agent_variable=variable,
            state_dir=root / ".agentengine",
        )

    yield make
    for name, module in list(sys.modules.items()):
        if any(str(getattr(module, "__file__", "") or "").startswith(str(p)) for p in made):
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not any(p.startswith(str(r)) for r in made)]


def run(coro_fn: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(coro_fn())  # type: ignore[arg-type]


async def turn(runner: Any, input: Any = "hello", *, session: str = "s1", resume: bool = False,
               state: dict[str, Any] | None = None, invocation: str = "inv",
               host_resume: dict[str, Any] | None = None, checkpoints: tuple[Checkpoint, ...] = (),
               **payload: Any) -> list[Any]:
    """One run. host_resume: payload.resume as the host sends it (the first answer with
    the approval request it answers, detail included); checkpoints: what the host hands
    the run (see reduce)."""
    if host_resume is not None:
        payload["resume"] = host_resume
    ctx: dict[str, Any] = {
        "platform_context": {"app_name": "app", "user_id": "u1", "session_id": session, "invocation_id": invocation},
        "history": payload.get("history", []),
        "is_resume": resume,
        "state": state or {},
    }
    request = make_request(input, payload=payload, session_context=ctx, session_id=session, user_id="u1",
                           invocation_id=invocation)
    return await collect(runner, dataclasses.replace(request, checkpoints=checkpoints))


async def close(runner: Any) -> None:
    if hasattr(runner, "aclose"):
        await runner.aclose()


def kinds(events: list[Any]) -> list[str]:
    return [e.WhichOneof("event") for e in events]


def text(events: list[Any]) -> str:
    return "".join(e.text_delta.text for e in events if e.WhichOneof("event") == "text_delta")


def of(events: list[Any], kind: str) -> list[Any]:
    return [getattr(e, kind) for e in events if e.WhichOneof("event") == kind]


def errors(events: list[Any]) -> list[Any]:
    return of(events, "error")


def natives(events: list[Any], kind: str) -> list[Any]:
    return [json.loads(n.data_json) for n in of(events, "native") if n.kind == kind]


def approval(a: Any, approve: bool = True, reason: str = "", **extra: Any) -> dict[str, Any]:
    item = {"type": "mcp_approval_response", "approval_request_id": a.id, "approve": approve, **extra}
    if reason:
        item["reason"] = reason
    return item


def reduce(events: list[pb.RunEvent], kept: list[Checkpoint]) -> tuple[Checkpoint, ...]:
    """What the host hands the next run: its kept checkpoints updated with this run's —
    of a run's checkpoint events the latest checkpoint of each thread and namespace with
    that checkpoint's writes, as the Go host keeps them (host/run.go)."""
    latest: dict[tuple[str, str], pb.Checkpoint] = {
        (c.thread_id, c.namespace): pb.Checkpoint(
            thread_id=c.thread_id, namespace=c.namespace, checkpoint_id=c.checkpoint_id,
            parent_id=c.parent_id, data=c.data,
        )
        for c in kept
    }
    writes: dict[tuple[str, str, str, str, int], pb.CheckpointWrite] = {}
    for ev in events:
        kind = ev.WhichOneof("event")
        if kind == "checkpoint":
            latest[(ev.checkpoint.thread_id, ev.checkpoint.namespace)] = ev.checkpoint
        elif kind == "checkpoint_write":
            w = ev.checkpoint_write
            writes[(w.thread_id, w.namespace, w.checkpoint_id, w.task_id, w.index)] = w
    out = []
    for (thread, ns), c in latest.items():
        c = pb.Checkpoint()
        c.CopyFrom(latest[(thread, ns)])
        c.writes.extend(w for k, w in writes.items() if k[:3] == (thread, ns, c.checkpoint_id))
        out.append(c)
    return checkpoints_from_pb(out)


__all__ = ["REPO", "approval", "close", "errors", "kinds", "make_runner", "natives", "of", "reduce", "run", "text", "turn"]
