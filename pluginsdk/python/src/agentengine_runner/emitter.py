"""Emitter: how a run reports what happens, one typed runnerv1.RunEvent per call.

Each method awaits the transport (gRPC flow control), so a fast producer is slowed to the
host's pace instead of buffering without bound. The server's emitter (batches=True)
coalesces: what a run emits while a write is in flight goes out with the next write, as
one RunEventBatch message, and the producer waits only when that backlog is large.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import dataclasses
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ._proto.runner.v1 import runner_pb2 as pb
from .runner import Artifact, Checkpoint, CheckpointWrite

Sink = Callable[[pb.RunEvent], Awaitable[None]]


def unbatch(event: pb.RunEvent) -> list[pb.RunEvent]:
    """The events one message carries: a batch's members, else the event itself (for code
    that reads a runner's stream directly)."""
    if event.WhichOneof("event") == "batch":
        return list(event.batch.events)
    return [event]


# A run may get this far ahead of the transport (events, bytes) before send waits.
MAX_BACKLOG_EVENTS = 256
MAX_BACKLOG_BYTES = 1 << 20


class Emitter:
    """With batches (the server's emitter), each message carries everything the run emitted
    while the previous message was being written (the first event of a burst goes out at
    once, the rest of the burst as one RunEventBatch), deferred events go out with the next
    message, and usage is deferred too (it only adds up): a turn's burst of events costs
    the transport a message or two, not one each. Python's gRPC server spends about 0.15 ms
    per message."""

    def __init__(self, sink: Sink, *, batches: bool = False) -> None:
        self._sink = sink
        self._batches = batches
        self._closed = False
        self._deferred: list[pb.RunEvent] = []
        self.count = 0
        # batches only: events waiting for the writer, their size, the writer task (one
        # write at a time, as gRPC requires) and the error a write ended with.
        self._backlog: list[pb.RunEvent] = []
        self._backlog_bytes = 0
        self._writer: asyncio.Task[None] | None = None
        self._taken = asyncio.Event()  # set each time the writer takes the backlog
        self._error: BaseException | None = None

    def close(self) -> None:
        self._closed = True
        if self._writer is not None and not self._writer.done():
            self._writer.cancel()  # the run is over (or cancelled): nothing more goes out

    async def send(self, event: pb.RunEvent) -> None:
        """Sends a prebuilt event (escape hatch; prefer the typed methods)."""
        if self._closed:
            raise RuntimeError("run already finished: events after the end are not delivered")
        if self._batches:
            await self._enqueue(event)
            return
        await self.flush()
        await self._sink(event)
        self.count += 1

    def defer(self, event: pb.RunEvent) -> None:
        """Queues an event without waiting: it goes out before the next event sent, or when
        the run ends. For code that cannot await the transport (a checkpoint saver's sync
        methods, background tasks that must not write to the stream concurrently)."""
        if self._closed:
            raise RuntimeError("run already finished: events after the end are not delivered")
        self._deferred.append(event)

    async def flush(self) -> None:
        """Sends the deferred events (and, with batches, waits until everything emitted so
        far is written)."""
        if self._batches:
            await self._enqueue(None)
            while self._writer is not None and not self._writer.done():
                await asyncio.shield(self._writer)
            self._raise_write_error()
            return
        while self._deferred:
            event = self._deferred.pop(0)
            await self._sink(event)
            self.count += 1

    # -- batches ---------------------------------------------------------------------

    async def _enqueue(self, event: pb.RunEvent | None) -> None:
        self._raise_write_error()
        events = self._deferred + ([event] if event is not None else [])
        self._deferred = []
        if not events:
            return
        self._backlog.extend(events)
        self._backlog_bytes += sum(e.ByteSize() for e in events)
        self.count += len(events)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write_backlog())
            # Let the writer start the write now: the event goes out while this run goes
            # on, whatever it does before its next await.
            await asyncio.sleep(0)
        while (
            len(self._backlog) > MAX_BACKLOG_EVENTS or self._backlog_bytes > MAX_BACKLOG_BYTES
        ) and self._writer is not None and not self._writer.done():
            self._taken.clear()
            await self._taken.wait()  # the writer took the backlog (or ended)
            self._raise_write_error()

    async def _write_backlog(self) -> None:
        try:
            while self._backlog:
                events, size = self._backlog, self._backlog_bytes
                self._backlog, self._backlog_bytes = [], 0
                self._taken.set()
                if len(events) == 1 or size > MAX_BACKLOG_BYTES:
                    # Large events go one by one: a batch must stay far below the
                    # transport's message limit, which each event is within.
                    for ev in events:
                        await self._sink(ev)
                else:
                    await self._sink(pb.RunEvent(batch=pb.RunEventBatch(events=events)))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the stream broke: the run's next emit raises it
            self._error = exc
            self._backlog, self._backlog_bytes = [], 0
        finally:
            self._taken.set()

    def _raise_write_error(self) -> None:
        if self._error is not None:
            raise self._error

    async def text(self, text: str) -> None:
        await self.send(pb.RunEvent(text_delta=pb.TextDelta(text=text)))

    async def message_done(self, text: str = "") -> None:
        """Ends the current assistant message; text, if given, is its authoritative full text."""
        await self.send(pb.RunEvent(message_done=pb.MessageDone(text=text)))

    async def reasoning(self, text: str) -> None:
        await self.send(pb.RunEvent(reasoning_delta=pb.ReasoningDelta(text=text)))

    async def tool_call_delta(self, call_id: str, arguments_delta: str, name: str = "") -> None:
        """A piece of a call's arguments; give name on the first delta of a call."""
        await self.send(
            pb.RunEvent(
                tool_call_delta=pb.ToolCallDelta(
                    call_id=call_id, name=name, arguments_delta=arguments_delta
                )
            )
        )

    async def tool_call(self, call_id: str, name: str, arguments: str | Mapping[str, Any]) -> None:
        await self.send(
            pb.RunEvent(
                tool_call=pb.ToolCall(call_id=call_id, name=name, arguments=_json_text(arguments))
            )
        )

    async def tool_result(
        self, call_id: str, name: str, output: Any, *, is_error: bool = False, traced: bool = False
    ) -> None:
        """output: text as is, anything else as JSON. traced: the agent's framework made
        this call's execute_tool span itself (see tracing.records_spans), so the host
        makes none (a trace shows one span per tool call)."""
        await self.send(
            pb.RunEvent(
                tool_result=pb.ToolResult(
                    call_id=call_id, name=name, output=_json_text(output), is_error=is_error, traced=traced
                )
            )
        )

    async def approval_request(
        self,
        id: str,
        *,
        call_id: str = "",
        name: str = "",
        arguments: str | Mapping[str, Any] = "",
        message: str = "",
        detail: Any = None,
    ) -> None:
        """Asks for a human decision; end the run after sending the request(s)."""
        await self.send(
            pb.RunEvent(
                approval_request=pb.ApprovalRequest(
                    id=id,
                    call_id=call_id,
                    name=name,
                    arguments=_json_text(arguments),
                    message=message,
                    detail_json=b"" if detail is None else _json_bytes(detail),
                )
            )
        )

    async def state_delta(self, delta: Mapping[str, Any]) -> None:
        """State changes; "app:"/"user:"/"temp:" key prefixes pick the tier, None deletes."""
        await self.send(pb.RunEvent(state_delta=pb.StateDelta(delta_json=_json_bytes(delta))))

    async def usage(
        self,
        input_tokens: int = 0,
        output_tokens: int = 0,
        reasoning_tokens: int = 0,
        cached_tokens: int = 0,
        model: str = "",
    ) -> None:
        """Token usage of a model call (model, when known, labels the host's metrics)."""
        event = pb.RunEvent(
            usage=pb.Usage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                reasoning_tokens=reasoning_tokens,
                cached_tokens=cached_tokens,
                model=model,
            )
        )
        if self._batches:
            self.defer(event)  # goes out with the next event, at the latest the run's end
            return
        await self.send(event)

    async def native(self, framework: str, kind: str, data: Any = None) -> None:
        """A framework-native event, relayed live for debugging only (never stored)."""
        await self.send(
            pb.RunEvent(
                native=pb.Native(
                    framework=framework,
                    kind=kind,
                    data_json=b"" if data is None else _json_bytes(data),
                )
            )
        )


    async def artifact(
        self, name: str, version: int, data: bytes, mime_type: str = "", meta: Mapping[str, Any] | None = None
    ) -> None:
        """The agent saved a version of an artifact (a runner with the artifacts
        capability): the host stores it before it handles the events after this one."""
        await self.send(
            pb.RunEvent(
                artifact=pb.Artifact(
                    name=name,
                    version=version,
                    mime_type=mime_type,
                    data=data,
                    meta_json=b"" if not meta else _json_bytes(dict(meta)),
                )
            )
        )

    async def artifact_deleted(self, name: str) -> None:
        """The agent deleted every version of an artifact."""
        await self.send(pb.RunEvent(artifact=pb.Artifact(name=name, deleted=True)))


class RunCheckpoints:
    """A run's checkpoint exchange with the host: the checkpoints the host handed this run
    (restored) and the way to ask it to keep new ones. A saver finds the current run's
    through run_checkpoints().

    The host keeps only the latest checkpoint of each thread and namespace a run saved, and
    that checkpoint's writes, so that is all that is sent, once, when the run ends
    (flush): a multi-step run costs the transport one checkpoint per thread and namespace.
    """

    def __init__(self, emit: Emitter, restored: tuple[Checkpoint, ...] = ()) -> None:
        self._emit = emit
        self.restored = restored
        # (thread, namespace) pairs of restored the saver has looked at in this run.
        self.adopted: set[tuple[str, str]] = set()
        self._latest: dict[tuple[str, str], Checkpoint] = {}
        self._writes: dict[tuple[str, str, str, str, int], CheckpointWrite] = {}
        self._deleted: set[str] = set()

    def save(self, checkpoint: Checkpoint) -> None:
        self._deleted.discard(checkpoint.thread_id)
        self._latest[(checkpoint.thread_id, checkpoint.namespace)] = checkpoint

    def save_write(self, write: CheckpointWrite) -> None:
        self._deleted.discard(write.thread_id)
        key = (write.thread_id, write.namespace, write.checkpoint_id, write.task_id, write.index)
        self._writes[key] = write

    def delete_thread(self, thread_id: str) -> None:
        """The runner is done with the thread: the host drops its checkpoints."""
        self._latest = {k: v for k, v in self._latest.items() if k[0] != thread_id}
        self._writes = {k: v for k, v in self._writes.items() if k[0] != thread_id}
        self._deleted.add(thread_id)

    async def flush(self) -> None:
        """Sends what the run saved (call when the run ends, before its stream does)."""
        latest, writes, deleted = self._latest, self._writes, self._deleted
        self._latest, self._writes, self._deleted = {}, {}, set()
        # restored is all the host keeps for the session: a thread it does not have (one
        # this run started) needs no delete.
        held = {c.thread_id for c in self.restored}
        for thread_id in sorted(deleted & held):
            self._emit.defer(pb.RunEvent(checkpoint_delete=pb.CheckpointDelete(thread_id=thread_id)))
        for cp in latest.values():
            self._emit.defer(
                pb.RunEvent(
                    checkpoint=pb.Checkpoint(
                        thread_id=cp.thread_id,
                        namespace=cp.namespace,
                        checkpoint_id=cp.checkpoint_id,
                        parent_id=cp.parent_id,
                        data=cp.data,
                    )
                )
            )
        for (thread, ns, checkpoint_id, _, _), w in writes.items():
            kept = latest.get((thread, ns))
            if kept is not None and kept.checkpoint_id != checkpoint_id:
                continue  # to a checkpoint this run replaced: the host would drop it
            self._emit.defer(pb.RunEvent(checkpoint_write=_write_pb(w)))
        await self._emit.flush()


def _write_pb(w: CheckpointWrite) -> pb.CheckpointWrite:
    return pb.CheckpointWrite(
        thread_id=w.thread_id,
        namespace=w.namespace,
        checkpoint_id=w.checkpoint_id,
        task_id=w.task_id,
        index=w.index,
        channel=w.channel,
        task_path=w.task_path,
        data=w.data,
    )


def checkpoints_from_pb(items: Any) -> tuple[Checkpoint, ...]:
    """RunRequest.checkpoints as plain Checkpoint values."""
    return tuple(
        Checkpoint(
            thread_id=c.thread_id,
            namespace=c.namespace,
            checkpoint_id=c.checkpoint_id,
            parent_id=c.parent_id,
            data=bytes(c.data),
            writes=tuple(
                CheckpointWrite(
                    thread_id=w.thread_id,
                    namespace=w.namespace,
                    checkpoint_id=w.checkpoint_id,
                    task_id=w.task_id,
                    index=int(w.index),
                    channel=w.channel,
                    task_path=w.task_path,
                    data=bytes(w.data),
                )
                for w in c.writes
            ),
        )
        for c in items
    )


_current_checkpoints: contextvars.ContextVar[RunCheckpoints | None] = contextvars.ContextVar(
    "agentengine_run_checkpoints", default=None
)


def run_checkpoints() -> RunCheckpoints | None:
    """The checkpoint exchange of the run this code runs in, if any."""
    return _current_checkpoints.get()


@contextmanager
def checkpoint_scope(exchange: RunCheckpoints | None) -> Iterator[None]:
    """Makes exchange the current run's (None: the run exchanges no checkpoints)."""
    token = _current_checkpoints.set(exchange)
    try:
        yield
    finally:
        _current_checkpoints.reset(token)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=_jsonable, ensure_ascii=False)


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, default=_jsonable, ensure_ascii=False).encode()


def _jsonable(value: Any) -> Any:
    # Framework objects (pydantic models, dataclasses, bytes) reach native/tool events a lot;
    # degrade to something readable rather than failing the run over a debug payload.
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def artifacts_from_pb(items: Any) -> tuple[Artifact, ...]:
    """RunRequest.artifacts as plain Artifact values (meta decoded; a malformed one is {})."""
    out = []
    for a in items:
        try:
            meta = json.loads(a.meta_json) if a.meta_json else {}
        except ValueError:
            meta = {}
        out.append(
            Artifact(
                name=a.name,
                version=int(a.version),
                mime_type=a.mime_type,
                data=bytes(a.data),
                meta=meta if isinstance(meta, dict) else {},
                create_time=float(a.create_time),
                data_omitted=bool(a.data_omitted),
            )
        )
    return tuple(out)
