"""Continuing a failed run in place (payload continue_from): the LangGraph bridge runs the
thread on from its checkpoint, so the nodes that already ran do not run again, in the
same runner process and in a new one handed the host's checkpoints."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agentengine_runner.testing import collect, make_request
from conftest import close, errors, make_runner, reduce, run, text

FLAKY = (Path(__file__).parent / "graphs" / "flaky_graph.py").read_text()

SESSION_THREAD = "2:u1/s1"


def request(input: Any, invocation: str, **payload: Any) -> Any:
    ctx = {
        "platform_context": {"app_name": "app", "user_id": "u1", "session_id": "s1", "invocation_id": invocation},
        "history": [],
        "is_resume": False,
        "state": {},
    }
    return make_request(input, payload=payload, session_context=ctx, session_id="s1", user_id="u1",
                        invocation_id=invocation)


def failed_first_run(project: Any) -> tuple[Any, Path, list[Any]]:
    settings = project(FLAKY)
    root = Path(settings.project_dir)
    (root / "FAIL").write_text("")
    return settings, root, []


def test_a_failed_run_continues_in_place_without_rerunning_its_done_nodes(project: Any) -> None:
    settings, root, _ = failed_first_run(project)

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await collect(runner, request("paris", "inv1"))
            (root / "FAIL").unlink()
            thread = SESSION_THREAD + "/run:inv1"
            second = await collect(runner, request("", "inv2", continue_from={"thread_id": thread}))
            return first, second
        finally:
            await close(runner)

    first, second = run(go)
    assert [e.message for e in errors(first)] and "solve failed" in errors(first)[0].message
    assert not errors(second), [e.message for e in errors(second)]
    assert text(second) == "solved PARIS"
    assert (root / "fetch-runs").read_text() == "x", "fetch ran again"


def test_a_new_process_continues_from_the_hosts_checkpoints(project: Any) -> None:
    settings, root, _ = failed_first_run(project)

    async def go() -> list[Any]:
        first_runner = make_runner(settings)
        try:
            first = await collect(first_runner, request("lyon", "inv1"))
        finally:
            await close(first_runner)
        assert errors(first)
        handed = reduce(first, [])
        assert any(c.thread_id == SESSION_THREAD + "/run:inv1" for c in handed)
        (root / "FAIL").unlink()
        second_runner = make_runner(settings)  # nothing in memory but what the host hands it
        try:
            req = request("", "inv2", continue_from={"thread_id": SESSION_THREAD + "/run:inv1"})
            return await collect(second_runner, dataclasses.replace(req, checkpoints=handed))
        finally:
            await close(second_runner)

    second = run(go)
    assert not errors(second), [e.message for e in errors(second)]
    assert text(second) == "solved LYON"
    assert (root / "fetch-runs").read_text() == "x", "fetch ran again"


def test_continue_from_refuses_another_sessions_thread_and_a_finished_one(project: Any) -> None:
    settings = project(FLAKY)

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            foreign = await collect(runner, request("", "inv1", continue_from={"thread_id": "2:u2/s1/run:x"}))
            done = await collect(runner, request("rome", "inv2"))
            assert text(done) == "solved ROME"
            finished = await collect(runner, request("", "inv3", continue_from={"thread_id": SESSION_THREAD + "/run:inv2"}))
            return foreign, finished
        finally:
            await close(runner)

    foreign, finished = run(go)
    assert "is not this session's" in errors(foreign)[0].message
    assert errors(foreign)[0].code == "invalid_request"
    assert "nothing left to run" in errors(finished)[0].message
