"""The server's emitter sends what it defers (checkpoints, usage) as one batch message."""

from __future__ import annotations

import asyncio

from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner.emitter import Emitter, unbatch


def sent(batches: bool) -> list[pb.RunEvent]:
    out: list[pb.RunEvent] = []

    async def sink(ev: pb.RunEvent) -> None:
        out.append(ev)

    async def turn() -> None:
        emit = Emitter(sink, batches=batches)
        await emit.text("hi")
        await emit.usage(input_tokens=3, output_tokens=1)
        emit.defer(pb.RunEvent(checkpoint=pb.Checkpoint(thread_id="t", checkpoint_id="c1")))
        emit.defer(pb.RunEvent(checkpoint_write=pb.CheckpointWrite(thread_id="t", checkpoint_id="c1", channel="x")))
        await emit.flush()
        assert emit.count == 4

    asyncio.run(turn())
    return out


def kinds(events: list[pb.RunEvent]) -> list[str | None]:
    return [e.WhichOneof("event") for e in events]


def test_deferred_events_and_usage_go_out_as_one_batch() -> None:
    out = sent(batches=True)
    assert kinds(out) == ["text_delta", "batch"]
    flat = [ev for e in out for ev in unbatch(e)]
    assert kinds(flat) == ["text_delta", "usage", "checkpoint", "checkpoint_write"]


def test_without_batches_every_event_is_its_own_message() -> None:
    assert kinds(sent(batches=False)) == ["text_delta", "usage", "checkpoint", "checkpoint_write"]


def test_a_deferred_event_rides_with_the_next_one() -> None:
    out: list[pb.RunEvent] = []

    async def sink(ev: pb.RunEvent) -> None:
        out.append(ev)

    async def turn() -> None:
        emit = Emitter(sink, batches=True)
        await emit.usage(output_tokens=1)
        await emit.text("after")

    asyncio.run(turn())
    assert kinds(out) == ["batch"]
    assert kinds(list(out[0].batch.events)) == ["usage", "text_delta"]


def test_a_burst_written_while_a_write_is_in_flight_goes_out_as_one_message() -> None:
    out: list[pb.RunEvent] = []

    async def slow_sink(ev: pb.RunEvent) -> None:
        await asyncio.sleep(0.005)  # a write in flight
        out.append(ev)

    async def turn() -> int:
        emit = Emitter(slow_sink, batches=True)
        for i in range(10):
            await emit.text(str(i))
        await emit.flush()
        return emit.count

    assert asyncio.run(turn()) == 10
    assert len(out) < 10  # the first went alone, the rest together
    flat = [ev.text_delta.text for e in out for ev in unbatch(e)]
    assert flat == [str(i) for i in range(10)]


def test_a_failed_write_is_raised_by_the_next_emit() -> None:
    async def broken_sink(ev: pb.RunEvent) -> None:
        await asyncio.sleep(0)
        raise ConnectionError("host went away")

    async def turn() -> None:
        emit = Emitter(broken_sink, batches=True)
        await emit.text("a")
        await asyncio.sleep(0.01)
        await emit.text("b")

    try:
        asyncio.run(turn())
    except ConnectionError as exc:
        assert "host went away" in str(exc)
    else:
        raise AssertionError("the write error was swallowed")


def test_a_backlog_over_its_bound_waits_for_the_writer() -> None:
    from agentengine_runner import emitter as emitter_mod

    written: list[int] = []

    async def sink(ev: pb.RunEvent) -> None:
        await asyncio.sleep(0.001)
        written.append(len(unbatch(ev)))

    async def turn() -> int:
        emit = Emitter(sink, batches=True)
        most = 0
        for _ in range(3 * emitter_mod.MAX_BACKLOG_EVENTS):
            await emit.text("x")
            most = max(most, len(emit._backlog))
        await emit.flush()
        return most

    most = asyncio.run(turn())
    assert most <= emitter_mod.MAX_BACKLOG_EVENTS + 1
    assert sum(written) == 3 * emitter_mod.MAX_BACKLOG_EVENTS


def test_large_events_are_not_batched() -> None:
    from agentengine_runner import emitter as emitter_mod

    out: list[pb.RunEvent] = []

    async def slow_sink(ev: pb.RunEvent) -> None:
        await asyncio.sleep(0.002)
        out.append(ev)

    big = "x" * (emitter_mod.MAX_BACKLOG_BYTES // 2 + 1)

    async def turn() -> None:
        emit = Emitter(slow_sink, batches=True)
        await emit.text("first")
        for _ in range(3):
            await emit.text(big)
        await emit.flush()

    asyncio.run(turn())
    assert all(e.WhichOneof("event") != "batch" or e.ByteSize() <= emitter_mod.MAX_BACKLOG_BYTES for e in out)
    assert [len(ev.text_delta.text) for e in out for ev in unbatch(e)] == [5, len(big), len(big), len(big)]
