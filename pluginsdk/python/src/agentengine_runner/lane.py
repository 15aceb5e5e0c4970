"""The run lane: runs served as frames on one plain unix socket, beside gRPC.

A gRPC call costs grpc.aio about 0.5 ms of Python work before the run does anything; the
host keeps one connection to the lane open and sends every run of this process on it
(DescribeResponse.run_lane in the runner protocol). Each frame on the socket is its length
(4 bytes, big-endian) and a LaneFrame. The host sends `start` (a RunRequest) and maybe
`cancel`; the runner answers with the run's events and one `end`. A closed connection
cancels the runs on it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import struct
import traceback
from collections.abc import Awaitable, Callable
from typing import Protocol

from google.protobuf.message import DecodeError

from ._proto.runner.v1 import runner_pb2 as pb
from .hclog import get_logger

log = get_logger()

HEADER = struct.Struct(">I")
# A frame wraps one protocol message and a few bytes of its own.
FRAME_OVERHEAD = 64

Write = Callable[[pb.RunEvent], Awaitable[None]]


class RunFn(Protocol):
    """RunnerService.run: one run, its events written with write."""

    def __call__(self, request: pb.RunRequest, write: Write, *, batches: bool) -> Awaitable[None]: ...


# The socket's write buffer may hold this much before a run's next event waits for it.
MAX_BUFFERED_BYTES = 1 << 20

# LaneFrame's field tags: run (1, varint), event (4, bytes), end (5, bytes).
_TAG_RUN = b"\x08"
_TAG_EVENT = b"\x22"
_TAG_END = b"\x2a"


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _frame(run: int, tag: bytes, body: bytes) -> bytes:
    """A whole frame, header included, around an already serialised field: cheaper than
    building a LaneFrame, which would copy the event into it."""
    inner = _TAG_RUN + _varint(run) + tag + _varint(len(body)) + body
    return HEADER.pack(len(inner)) + inner


def event_frame(run: int, event: bytes) -> bytes:
    """The frame of a serialised RunEvent of run."""
    return _frame(run, _TAG_EVENT, event)


def end_frame(run: int, error: str = "") -> bytes:
    return _frame(run, _TAG_END, pb.LaneEnd(error=error).SerializeToString())


class MessageTooLarge(ValueError):
    """A run event over the runner protocol's message size limit."""


class LaneServer:
    """Serves run on a unix socket until close()."""

    def __init__(self, run: RunFn, max_message_bytes: int) -> None:
        self._run = run
        self._max_message = max_message_bytes
        self._max_frame = max_message_bytes + FRAME_OVERHEAD
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # Each open connection's writer and the task that serves it.
        self._conns: dict[asyncio.StreamWriter, asyncio.Task[None] | None] = {}

    async def start(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)  # stale socket of a dead process with our pid
        self._server = await asyncio.start_unix_server(self._serve, path)

    async def close(self, grace: float) -> None:
        """Stops accepting, lets runs finish for up to grace seconds, then cancels the rest
        (with the connections they run on)."""
        if self._server is None:
            return
        self._server.close()
        runs = set(self._tasks)
        if runs:
            await asyncio.wait(runs, timeout=grace)
        for task in list(self._tasks):
            task.cancel()
        conns = dict(self._conns)
        for writer in conns:
            writer.close()
        # Let the connections' handlers see their closed sockets and return: cancelled by
        # the loop's end instead, asyncio's streams log a bogus "Exception in callback".
        handlers = {h for h in conns.values() if h is not None}
        if handlers:
            await asyncio.wait(handlers, timeout=1.0)

    def _spawn(self, coro: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        runs: dict[int, asyncio.Task[None]] = {}
        out = _Output(writer)
        self._conns[writer] = asyncio.current_task()
        try:
            while True:
                try:
                    head = await reader.readexactly(HEADER.size)
                    (size,) = HEADER.unpack(head)
                    if size > self._max_frame:
                        log.error("run lane frame too large; closing the lane", extra={"bytes": size})
                        return
                    data = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the host closed the lane
                try:
                    msg = pb.LaneFrame.FromString(data)
                except DecodeError as exc:
                    log.error("undecodable run lane frame; closing the lane", extra={"error": str(exc)})
                    return
                kind = msg.WhichOneof("body")
                if kind == "start":
                    if msg.run in runs:
                        log.warning("run lane: run id already running; ignored", extra={"run": msg.run})
                        continue
                    # A task of its own per run (with its own contextvars copy): a cancel
                    # frame cancels exactly that run.
                    task = self._spawn(self._one(out, msg.run, msg.start))
                    runs[msg.run] = task
                    task.add_done_callback(functools.partial(_drop, runs, msg.run))
                elif kind == "cancel":
                    running = runs.pop(msg.run, None)
                    if running is not None:
                        running.cancel()
                else:
                    log.warning("unexpected run lane frame from the host; ignored", extra={"kind": kind})
        finally:
            for task in runs.values():
                task.cancel()
            self._conns.pop(writer, None)
            writer.close()

    async def _one(self, out: _Output, run: int, request: pb.RunRequest) -> None:
        async def write(event: pb.RunEvent) -> None:
            data = event.SerializeToString()
            if len(data) > self._max_message:
                # The host would refuse the frame and close the lane with every run on it;
                # this fails only this run, as gRPC fails a call whose message is too big.
                raise MessageTooLarge(
                    f"a run event of {len(data)} bytes exceeds the runner protocol's "
                    f"{self._max_message}"
                )
            await out.send(event_frame(run, data))

        error = ""
        try:
            # No RunEventBatch: the output already joins what a turn emits in one loop
            # iteration into one write, without a writer task per burst.
            await self._run(request, write, batches=False)
        except asyncio.CancelledError:
            raise  # cancelled by the host, which has let go of the run already
        except Exception as exc:  # run() turns the agent's errors into events; not this
            error = f"{type(exc).__name__}: {exc}"
            log.error("run lane: run failed", extra={"error": traceback.format_exc()})
        try:
            await out.send(end_frame(run, error))
        except ConnectionError:
            pass  # the host went away; nothing left to tell it


class _Output:
    """One connection's outgoing frames. What the runs emit during one turn of the event
    loop goes out as one write at the end of it: a burst of events costs one send, and
    no task."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._loop = asyncio.get_running_loop()

    async def send(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(data)
        self._pending_bytes += len(data)
        transport = self._writer.transport
        if transport.is_closing():
            raise ConnectionResetError("run lane closed")
        if self._pending_bytes + transport.get_write_buffer_size() > MAX_BUFFERED_BYTES:
            # A run that emits a lot without waiting for anything, or a host that reads
            # slowly, waits here, as gRPC's flow control would make it.
            self._flush()
            await self._writer.drain()

    def _flush(self) -> None:
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        if pending and not self._writer.transport.is_closing():
            self._writer.write(b"".join(pending))


def _drop(runs: dict[int, asyncio.Task[None]], run: int, task: asyncio.Task[None]) -> None:
    if runs.get(run) is task:
        del runs[run]
