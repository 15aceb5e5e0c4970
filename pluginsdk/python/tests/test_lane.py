"""The run lane against a real runner subprocess: what the host sends and reads on it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import struct
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from client import Host, kinds, request
from conftest import Plugin, start_plugin, stop

from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner.emitter import unbatch
from agentengine_runner.lane import end_frame, event_frame

HEADER = struct.Struct(">I")


class Lane:
    """The host's end of a run lane, as the tests drive it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, plugin: Plugin) -> Lane:
        async with Host(plugin.target) as host:
            d = await host.runner.Describe(pb.DescribeRequest(), timeout=5)
        assert d.run_lane.startswith(plugin.socket_dir + "/"), d.run_lane
        return cls(*await asyncio.open_unix_connection(d.run_lane))

    async def send(self, frame: pb.LaneFrame) -> None:
        data = frame.SerializeToString()
        self.writer.write(HEADER.pack(len(data)) + data)
        await self.writer.drain()

    async def start(self, run: int, input: object, **kw: object) -> None:
        await self.send(pb.LaneFrame(run=run, start=request(input, **kw)))

    async def read(self, timeout: float = 10) -> pb.LaneFrame:
        head = await asyncio.wait_for(self.reader.readexactly(4), timeout)
        data = await asyncio.wait_for(self.reader.readexactly(HEADER.unpack(head)[0]), timeout)
        return pb.LaneFrame.FromString(data)

    async def until_end(self, run: int) -> list[pb.RunEvent]:
        events: list[pb.RunEvent] = []
        while True:
            f = await self.read()
            if f.run != run:
                continue
            if f.WhichOneof("body") == "end":
                assert f.end.error == ""
                return events
            events.extend(unbatch(f.event))

    async def text(self, run: int) -> str:
        """The text run streams, read to its end."""
        return "".join(e.text_delta.text for e in await self.until_end(run))

    def close(self) -> None:
        self.writer.close()

    @classmethod
    @contextlib.asynccontextmanager
    async def served(cls, run: Callable[..., Awaitable[Any]], path: str, max_message_bytes: int) -> AsyncIterator[Lane]:
        """A lane to a LaneServer of run at path, in this process; both closed after."""
        from agentengine_runner.lane import LaneServer

        server = LaneServer(run, max_message_bytes=max_message_bytes)
        await server.start(path)
        lane = cls(*await asyncio.open_unix_connection(path))
        try:
            yield lane
        finally:
            lane.close()
            await server.close(0.1)


async def wait_for(path: str, what: str) -> None:
    """Waits up to 10 s for the demo run's marker file at path; fails with what."""
    deadline = time.monotonic() + 10
    while not os.path.exists(path):
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def test_a_run_on_the_lane_streams_its_events_and_ends(plugin: Plugin) -> None:
    async def go() -> list[pb.RunEvent]:
        lane = await Lane.open(plugin)
        try:
            await lane.start(7, "all")
            return await lane.until_end(7)
        finally:
            lane.close()

    events = asyncio.run(go())
    assert kinds(events)[:3] == ["reasoning_delta", "text_delta", "message_done"]
    assert events[1].text_delta.text == "Hello"


def test_runs_on_one_lane_interleave_and_stay_apart(plugin: Plugin) -> None:
    async def go() -> dict[int, str]:
        lane = await Lane.open(plugin)
        try:
            for run in range(1, 11):
                await lane.start(run, f"echo {run}", session_id=f"s{run}", invocation_id=f"i{run}")
            texts: dict[int, str] = {}
            ended: set[int] = set()
            while len(ended) < 10:
                f = await lane.read()
                if f.WhichOneof("body") == "end":
                    ended.add(f.run)
                    continue
                for ev in unbatch(f.event):
                    texts[f.run] = texts.get(f.run, "") + ev.text_delta.text
            return texts
        finally:
            lane.close()

    assert asyncio.run(go()) == {run: f"echo {run}" for run in range(1, 11)}


def test_a_cancel_frame_cancels_that_run_only(plugin: Plugin) -> None:
    marker = os.path.join(plugin.socket_dir, "cancelled")

    async def go() -> None:
        lane = await Lane.open(plugin)
        try:
            await lane.start(1, "sleep", payload={"marker": marker})
            first = await lane.read()
            assert first.run == 1 and first.event.text_delta.text == "sleeping"
            await lane.send(pb.LaneFrame(run=1, cancel=pb.LaneCancel()))
            await wait_for(marker, "the cancelled run still runs")
            await lane.start(2, "still serving")
            assert await lane.text(2) == "still serving"
        finally:
            lane.close()

    asyncio.run(go())
    with open(marker) as f:
        assert f.read().endswith("CancelledError")


def test_closing_the_lane_cancels_its_runs(plugin: Plugin) -> None:
    marker = os.path.join(plugin.socket_dir, "closed")

    async def go() -> None:
        lane = await Lane.open(plugin)
        await lane.start(1, "sleep", payload={"marker": marker})
        await lane.read()
        lane.close()
        await wait_for(marker, "a run outlived its lane")

    asyncio.run(go())
    with open(marker) as f:
        assert f.read().endswith("CancelledError")
    assert plugin.proc.poll() is None, "the runner exited with its lane"


def test_a_bad_frame_closes_that_lane_and_the_runner_serves_on(plugin: Plugin) -> None:
    async def go() -> None:
        for bad in (HEADER.pack(3) + b"\xff\xff\xff", HEADER.pack(1 << 31)):
            lane = await Lane.open(plugin)
            lane.writer.write(bad)
            await lane.writer.drain()
            assert await asyncio.wait_for(lane.reader.read(), 10) == b"", "lane not closed"
            lane.close()
        lane = await Lane.open(plugin)
        try:
            await lane.start(1, "fine")
            assert await lane.text(1) == "fine"
        finally:
            lane.close()

    asyncio.run(go())
    assert "closing the lane" in plugin.stderr()


def test_lane_off_offers_none(socket_dir: str) -> None:
    p = start_plugin(socket_dir, AGENTENGINE_RUN_LANE="off")
    try:

        async def describe() -> pb.DescribeResponse:
            async with Host(p.target) as host:
                return await host.runner.Describe(pb.DescribeRequest(), timeout=5)

        assert asyncio.run(describe()).run_lane == ""
    finally:
        stop(p)


def test_frames_decode_as_lane_frames() -> None:
    ev = pb.RunEvent(text_delta=pb.TextDelta(text="hé" * 100))
    for run in (1, 127, 128, 1 << 40):
        raw = event_frame(run, ev.SerializeToString())
        (size,) = HEADER.unpack(raw[:4])
        assert size == len(raw) - 4
        f = pb.LaneFrame.FromString(raw[4:])
        assert (f.run, f.event) == (run, ev)
        f = pb.LaneFrame.FromString(end_frame(run, "boom")[4:])
        assert (f.run, f.end.error) == (run, "boom")


def test_an_event_over_the_limit_fails_its_run_not_the_lane(socket_dir: str) -> None:
    from agentengine_runner.services import RunnerService
    from agentengine_runner.testing.demo import DemoRunner

    path = os.path.join(socket_dir, "t.lane")

    async def go() -> None:
        async with Lane.served(RunnerService(DemoRunner()).run, path, 100_000) as lane:
            await lane.start(1, "count", payload={"n": 1, "size": 200_000})
            events = await lane.until_end(1)
            assert kinds(events)[-1] == "error", kinds(events)
            assert "exceeds the runner protocol's 100000" in events[-1].error.message
            await lane.start(2, "small")
            assert await lane.text(2) == "small"

    asyncio.run(go())


def test_a_host_that_does_not_read_holds_a_busy_run_back(socket_dir: str) -> None:

    path = os.path.join(socket_dir, "slow.lane")
    written = 0
    chunk = pb.RunEvent(text_delta=pb.TextDelta(text="x" * (64 << 10)))

    async def run(request: pb.RunRequest, write: object, *, batches: bool) -> None:
        nonlocal written
        for _ in range(400):  # 25 MiB, never waiting for anything but write
            await write(chunk)  # type: ignore[operator]
            written += 1

    async def go() -> None:
        async with Lane.served(run, path, 1 << 20) as lane:
            await lane.start(1, "busy")
            await asyncio.sleep(0.5)  # the host reads nothing meanwhile
            assert written < 100, f"{written} events of 64 KiB written ahead of the host"
            events = await lane.until_end(1)
            assert len(events) == 400 and written == 400

    asyncio.run(go())


def test_a_stale_socket_file_does_not_stop_the_lane(socket_dir: str) -> None:
    from agentengine_runner.services import RunnerService
    from agentengine_runner.testing.demo import DemoRunner

    path = os.path.join(socket_dir, "stale.lane")
    open(path, "w").close()  # left behind by a dead process with our pid

    async def go() -> None:
        async with Lane.served(RunnerService(DemoRunner()).run, path, 1 << 20) as lane:
            await lane.start(1, "fresh")
            assert await lane.text(1) == "fresh"

    asyncio.run(go())
