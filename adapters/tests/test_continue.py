"""Continuing a failed run in place (payload continue_from): the LangGraph bridge runs the
thread on from its checkpoint, so the nodes that already ran do not run again, in the
same runner process and in a new one handed the host's checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import close, errors, make_runner, reduce, run, text, turn

FLAKY = (Path(__file__).parent / "graphs" / "flaky_graph.py").read_text()

SESSION_THREAD = "2:u1/s1"


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
            first = await turn(runner, "paris", invocation="inv1")
            (root / "FAIL").unlink()
            thread = SESSION_THREAD + "/run:inv1"
            second = await turn(runner, "", invocation="inv2", continue_from={"thread_id": thread})
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
            first = await turn(first_runner, "lyon", invocation="inv1")
        finally:
            await close(first_runner)
        assert errors(first)
        handed = reduce(first, [])
        assert any(c.thread_id == SESSION_THREAD + "/run:inv1" for c in handed)
        (root / "FAIL").unlink()
        second_runner = make_runner(settings)  # nothing in memory but what the host hands it
        try:
            return await turn(second_runner, "", invocation="inv2", checkpoints=handed,
                              continue_from={"thread_id": SESSION_THREAD + "/run:inv1"})
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
            foreign = await turn(runner, "", invocation="inv1", continue_from={"thread_id": "2:u2/s1/run:x"})
            done = await turn(runner, "rome", invocation="inv2")
            assert text(done) == "solved ROME"
            finished = await turn(runner, "", invocation="inv3", continue_from={"thread_id": SESSION_THREAD + "/run:inv2"})
            return foreign, finished
        finally:
            await close(runner)

    foreign, finished = run(go)
    assert "is not this session's" in errors(foreign)[0].message
    assert errors(foreign)[0].code == "invalid_request"
    assert "nothing left to run" in errors(finished)[0].message
