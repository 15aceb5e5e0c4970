"""A runner process keeps its lifelong objects out of the cyclic collector's way."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner.lifelong import LifelongObjects
from agentengine_runner.services import RunnerService
from agentengine_runner.testing.demo import DemoRunner


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual


def test_freezes_when_ready_and_at_the_first_idle_moment_after_a_run(unfrozen: None) -> None:
    lifelong = LifelongObjects()
    lifelong.ready()
    assert gc.get_freeze_count() > 0
    gc.unfreeze()

    lifelong.run_started()
    lifelong.run_started()
    lifelong.run_ended()
    assert gc.get_freeze_count() == 0, "froze while a run was in flight"
    lifelong.run_ended()
    assert gc.get_freeze_count() > 0, "no freeze once the first runs were over"
    gc.unfreeze()

    lifelong.run_started()
    lifelong.run_ended()
    assert gc.get_freeze_count() == 0, "froze again after the first idle moment"


def test_every_run_is_counted_out_failed_ones_included(unfrozen: None) -> None:
    service = RunnerService(DemoRunner())
    events: list[pb.RunEvent] = []

    async def write(event: pb.RunEvent) -> None:
        events.append(event)

    async def runs() -> None:
        bad = pb.RunRequest(app_name="app", session_id="s", invocation_id="i1", payload_json=b"[1]")
        await service.run(bad, write)  # an undecodable payload: an error event
        assert gc.get_freeze_count() > 0, "the failed run was not counted out"
        gc.unfreeze()
        good = pb.RunRequest(app_name="app", session_id="s", invocation_id="i2", payload_json=b'{"input":"hi"}')
        await asyncio.gather(service.run(good, write), service.run(good, write))

    asyncio.run(runs())
    assert events[0].HasField("error") and len(events) > 1
    assert gc.get_freeze_count() == 0, "the later runs' idle moment froze again"
