"""A gRPC server on asyncio, for the runner's side of go-plugin.

The runner serves a handful of gRPC methods to one client, the host, over a unix socket:
the runner protocol's Describe, Call, Summarize and (without the run lane) Run, and
go-plugin's health, controller, stdio and broker services. grpcio did this at a price
paid in every runner process: about 13 MB of memory, seven threads and 70 ms of import,
and a compiled dependency in every agent's environment. This module speaks the same wire
protocol (gRPC over HTTP/2, _h2.py) in pure Python: unary and streaming methods, status
codes and messages in trailers, the message size limit, and cancellation when the client
resets a call. Runs themselves go over the run lane (lane.py), not through here.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from . import _h2
from .hclog import get_logger

log = get_logger()


class StatusCode(enum.IntEnum):
    """gRPC status codes (the numbers are the protocol's)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class AbortError(Exception):
    """Raised by ServicerContext.abort: the call ends with this status."""

    def __init__(self, code: StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class Message(Protocol):
    def SerializeToString(self) -> bytes: ...  # noqa: N802 (protobuf's name)


class ServicerContext:
    """What a method handler gets besides its request."""

    def __init__(self, call: _Call) -> None:
        self._call = call

    async def abort(self, code: StatusCode, details: str = "") -> NoReturn:
        raise AbortError(code, details)

    async def write(self, message: Message) -> None:
        """Sends one response message of a server-streaming method."""
        await self._call.send(message)


UNARY_UNARY, UNARY_STREAM, STREAM_UNARY, STREAM_STREAM = "unary_unary", "unary_stream", "stream_unary", "stream_stream"

# A response's headers, before its messages (or with its status, when it has none).
RESPONSE_HEADERS = [(b":status", b"200"), (b"content-type", b"application/grpc")]

# The longest status message sent, in UTF-8 bytes: percent-encoded (at most three times
# as long) the trailers stay under the 8 KiB of metadata grpcio's clients accept.
MAX_DETAILS = 2500


@dataclass(frozen=True)
class Method:
    kind: str
    handler: Callable[..., Any]
    request: Callable[[bytes], Any]  # the request message type's FromString


def _percent_encode(text: str) -> bytes:
    out = bytearray()
    for byte in text.encode("utf-8", "replace"):
        if 0x20 <= byte <= 0x7E and byte != 0x25:
            out.append(byte)
        else:
            out += b"%%%02X" % byte
    return bytes(out)


class _Call:
    """One RPC on one HTTP/2 stream."""

    def __init__(self, stream: _h2.Stream, max_message: int) -> None:
        self.stream = stream
        self._max = max_message
        self._headers_sent = False

    async def read(self) -> bytes | None:
        """The next request message, or None once the client has sent them all."""
        s = self.stream
        while True:
            if s.reset:
                raise asyncio.CancelledError()
            if len(s.inbound) >= 5:
                compressed, length = struct.unpack_from(">BI", s.inbound)
                if compressed:
                    raise AbortError(StatusCode.UNIMPLEMENTED, "compressed messages are not supported")
                if length > self._max:
                    raise AbortError(
                        StatusCode.RESOURCE_EXHAUSTED, f"received message larger than max ({length} vs. {self._max})"
                    )
                if len(s.inbound) >= 5 + length:
                    message = bytes(s.inbound[5 : 5 + length])
                    del s.inbound[: 5 + length]
                    return message
            elif not s.inbound and s.ended:
                return None
            if s.ended:
                raise AbortError(StatusCode.INTERNAL, "the request ended inside a message")
            await s.wait_data()

    def _send_headers(self) -> None:
        if not self._headers_sent:
            self._headers_sent = True
            self.stream.conn.send_headers(self.stream, RESPONSE_HEADERS)

    async def send(self, message: Message) -> None:
        data = message.SerializeToString()
        if len(data) > self._max:
            raise AbortError(StatusCode.RESOURCE_EXHAUSTED, f"sent message larger than max ({len(data)} vs. {self._max})")
        self._send_headers()
        await self.stream.conn.send_data(self.stream, struct.pack(">BI", 0, len(data)) + data)

    def finish(self, code: StatusCode, details: str = "") -> None:
        trailers = [(b"grpc-status", str(int(code)).encode())]
        if details:
            cut = details.encode("utf-8", "replace")[:MAX_DETAILS].decode("utf-8", "ignore")
            trailers.append((b"grpc-message", _percent_encode(cut)))
        if not self._headers_sent:  # trailers-only response
            self._headers_sent = True
            trailers = [*RESPONSE_HEADERS, *trailers]
        self.stream.conn.send_headers(self.stream, trailers, end_stream=True)


class Server:
    """Serves registered methods on a unix socket."""

    def __init__(self, max_message_bytes: int) -> None:
        self._max = max_message_bytes
        self._methods: dict[bytes, Method] = {}
        self._server: asyncio.Server | None = None
        self._conns: dict[_h2.Connection, asyncio.Task[Any] | None] = {}  # each with its serving task

    def add(self, path: str, kind: str, handler: Callable[..., Any], request: Callable[[bytes], Any]) -> None:
        """Registers handler for the method at path ("/package.Service/Method")."""
        self._methods[path.encode()] = Method(kind, handler, request)

    def add_service(self, service: str, methods: dict[str, tuple[str, Callable[..., Any], Callable[[bytes], Any]]]) -> None:
        for name, (kind, handler, request) in methods.items():
            self.add(f"/{service}/{name}", kind, handler, request)

    async def start_unix(self, path: str) -> None:
        self._server = await asyncio.start_unix_server(self._accept, path)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = _h2.Connection(reader, writer, self._stream)
        self._conns[conn] = asyncio.current_task()
        try:
            await conn.serve()
        finally:
            del self._conns[conn]

    async def stop(self, grace: float) -> None:
        """Takes no new calls, lets those in progress finish for up to grace seconds,
        then cancels them and closes the connections."""
        if self._server is not None:
            self._server.close()
        for conn in list(self._conns):
            conn.go_away()
        tasks = [t for conn in list(self._conns) for t in conn.tasks()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.wait(pending, timeout=0.1)
        for conn, task in list(self._conns.items()):
            await conn.close()
            if task is not None:
                task.cancel()

    async def _stream(self, stream: _h2.Stream) -> None:
        call = _Call(stream, self._max)
        path = stream.header(b":path") or b""
        method = self._methods.get(path)
        if method is None:
            call.finish(StatusCode.UNIMPLEMENTED, f"method {path.decode('utf-8', 'replace')} not found")
            return
        if not (stream.header(b"content-type") or b"").startswith(b"application/grpc"):
            call.finish(StatusCode.INTERNAL, "content-type is not application/grpc")
            return
        context = ServicerContext(call)
        try:
            await self._dispatch(call, method, context)
        except AbortError as exc:
            call.finish(exc.code, exc.details)
            return
        except asyncio.CancelledError:
            if stream.reset:
                return  # the client cancelled the call: nothing more to send
            raise
        except ConnectionError:
            return  # the host went away mid-answer: nobody to tell
        except Exception as exc:
            log.error("gRPC method failed", exc_info=True, extra={"method": path.decode("utf-8", "replace")})
            call.finish(StatusCode.UNKNOWN, f"Exception calling application: {exc}")
            return
        call.finish(StatusCode.OK)

    async def _dispatch(self, call: _Call, method: Method, context: ServicerContext) -> None:
        if method.kind in (UNARY_UNARY, UNARY_STREAM):
            raw = await call.read()
            if raw is None:
                raise AbortError(StatusCode.INTERNAL, "no request message")
            try:
                request: Any = method.request(raw)
            except Exception as exc:
                raise AbortError(StatusCode.INTERNAL, f"could not decode the request: {exc}") from None
        else:
            request = _requests(call, method.request)
        result: Any = method.handler(request, context)
        if method.kind in (UNARY_UNARY, STREAM_UNARY):
            await call.send(await result)
        elif inspect.isasyncgen(result):
            messages: AsyncIterator[Any] = result
            async for message in messages:
                await call.send(message)
        elif inspect.isawaitable(result):
            awaited: Any = await result
            if awaited is not None:
                await call.send(awaited)


async def _requests(call: _Call, decode: Callable[[bytes], Any]) -> AsyncIterator[Any]:
    while (raw := await call.read()) is not None:
        yield decode(raw)


__all__ = [
    "STREAM_STREAM",
    "STREAM_UNARY",
    "UNARY_STREAM",
    "UNARY_UNARY",
    "AbortError",
    "Server",
    "ServicerContext",
    "StatusCode",
]
