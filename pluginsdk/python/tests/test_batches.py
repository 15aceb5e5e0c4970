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
