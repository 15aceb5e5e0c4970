"""The server side of an HTTP/2 connection (RFC 9113), as much as gRPC needs.

One Connection per accepted socket: it reads frames, keeps the HPACK state, opens a Stream
for each request and hands it to the gRPC layer (rpc.py), and writes what that layer sends
within the peer's flow-control windows. What HTTP/2 has beyond gRPC's use is refused or
ignored as the RFC allows: no server push, no priorities, no upgrade from HTTP/1.1.

Inbound flow control is generous: the windows we advertise are replenished as data
arrives, since a gRPC message is read whole anyway and its size is bounded by the
runner's message limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Awaitable, Callable

from ._hpack import Decoder, HPACKError, encode

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM = ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY_FLAG = 0x20

SETTINGS_ENABLE_PUSH = 0x2
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_FRAME_SIZE = 0x5

NO_ERROR, PROTOCOL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x3
FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR = 0x6, 0x7, 0x8, 0x9

DEFAULT_WINDOW = 65_535
DEFAULT_FRAME = 16_384
MAX_WINDOW = 2**31 - 1
# What we advertise: frames up to 1 MiB and 16 MiB windows, replenished in 4 MiB steps.
OUR_MAX_FRAME = 1 << 20
OUR_WINDOW = 16 << 20
REPLENISH = 4 << 20


class ConnectionError_(Exception):
    """A connection error (RFC 9113 5.4.1): GOAWAY with code, then close."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Stream:
    """One request: its headers, the data received so far, and its send window."""

    def __init__(self, conn: Connection, stream_id: int, headers: list[tuple[bytes, bytes]], send_window: int) -> None:
        self.conn = conn
        self.id = stream_id
        self.headers = headers
        self.inbound = bytearray()
        self.ended = False  # the peer sent END_STREAM
        self.reset = False  # either side reset it
        self.closed = False  # we sent END_STREAM or RST_STREAM
        self.send_window = send_window
        self.task: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()

    def header(self, name: bytes) -> bytes | None:
        for k, v in self.headers:
            if k == name:
                return v
        return None

    async def wait_data(self) -> None:
        """Waits until more data arrives, the peer ends its side, or the stream is reset."""
        if not self.ended and not self.reset:
            self._arrived.clear()
            await self._arrived.wait()

    def _wake(self) -> None:
        self._arrived.set()

    def _abort(self) -> None:
        """The stream is gone (reset, or its connection closed): its handler is cancelled."""
        self.reset = True
        self._wake()
        if self.task is not None:
            self.task.cancel()


def _frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xFFFF, kind, flags, stream_id) + payload


class Connection:
    """One HTTP/2 connection; serve() runs until the peer goes away or close()."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_stream: Callable[[Stream], Awaitable[None]],
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_stream = on_stream
        self._decoder = Decoder()
        self._streams: dict[int, Stream] = {}
        self._last_id = 0
        self._going_away = False
        self._peer_window = DEFAULT_WINDOW  # the peer's initial window for new streams
        self._peer_frame = DEFAULT_FRAME
        self._send_window = DEFAULT_WINDOW  # the connection's
        self._window_opened = asyncio.Event()
        self._unacked = 0  # received on the connection since our last WINDOW_UPDATE

    # -- reading ---------------------------------------------------------------------

    async def serve(self) -> None:
        try:
            if await self._reader.readexactly(len(PREFACE)) != PREFACE:
                return
            self._write(
                _frame(
                    SETTINGS,
                    0,
                    0,
                    struct.pack(">HIHIHI", SETTINGS_ENABLE_PUSH, 0, SETTINGS_INITIAL_WINDOW_SIZE, OUR_WINDOW, SETTINGS_MAX_FRAME_SIZE, OUR_MAX_FRAME),
                )
            )
            self._write(_frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", OUR_WINDOW - DEFAULT_WINDOW)))
            await self._read_frames()
        except ConnectionError_ as exc:
            self._write(_frame(GOAWAY, 0, 0, struct.pack(">II", self._last_id, exc.code) + str(exc).encode()[:256]))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # the peer went away
        finally:
            for stream in list(self._streams.values()):
                stream._abort()
            self._streams.clear()
            self._window_opened.set()
            self._writer.close()

    async def _read_frame(self) -> tuple[int, int, int, bytes]:
        head = await self._reader.readexactly(9)
        length = (head[0] << 16) | (head[1] << 8) | head[2]
        kind, flags = head[3], head[4]
        stream_id = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
        if length > OUR_MAX_FRAME:
            raise ConnectionError_(FRAME_SIZE_ERROR, f"frame of {length} bytes")
        payload = await self._reader.readexactly(length) if length else b""
        return kind, flags, stream_id, payload

    async def _read_frames(self) -> None:
        while True:
            kind, flags, stream_id, payload = await self._read_frame()
            if kind == HEADERS:
                block = _unpad(flags, payload)
                if flags & PRIORITY_FLAG:
                    block = block[5:]
                last = flags
                while not last & END_HEADERS:
                    kind2, last, id2, more = await self._read_frame()
                    if kind2 != CONTINUATION or id2 != stream_id:
                        raise ConnectionError_(PROTOCOL_ERROR, "header block interrupted")
                    block += more
                # END_STREAM is the HEADERS frame's flag, not a CONTINUATION's.
                self._headers(stream_id, flags & END_STREAM, block)
            elif kind == DATA:
                self._data(stream_id, flags, payload)
            elif kind == SETTINGS:
                self._settings(flags, payload)
            elif kind == WINDOW_UPDATE:
                self._window_update(stream_id, payload)
            elif kind == PING:
                if len(payload) != 8:
                    raise ConnectionError_(FRAME_SIZE_ERROR, "PING of the wrong size")
                if not flags & ACK:
                    self._write(_frame(PING, ACK, 0, payload))
            elif kind == RST_STREAM:
                stream = self._streams.pop(stream_id, None)
                if stream is not None:
                    stream.closed = True
                    stream._abort()
                    self._window_opened.set()
            elif kind == GOAWAY:
                self._going_away = True
            elif kind == PUSH_PROMISE:
                raise ConnectionError_(PROTOCOL_ERROR, "PUSH_PROMISE from a client")
            elif kind == CONTINUATION:
                raise ConnectionError_(PROTOCOL_ERROR, "CONTINUATION without HEADERS")
            # PRIORITY and unknown frame types are ignored (RFC 9113 5.3.2, 4.1).

    def _headers(self, stream_id: int, end_stream: int, block: bytes) -> None:
        try:
            headers = self._decoder.decode(block)
        except HPACKError as exc:
            raise ConnectionError_(COMPRESSION_ERROR, str(exc)) from None
        stream = self._streams.get(stream_id)
        if stream is not None:  # trailers
            stream.ended = True
            stream._wake()
            return
        if stream_id <= self._last_id:
            return  # a stream we already closed
        if stream_id % 2 == 0:
            raise ConnectionError_(PROTOCOL_ERROR, f"stream id {stream_id}")
        self._last_id = stream_id
        if self._going_away:
            self._write(_frame(RST_STREAM, 0, stream_id, struct.pack(">I", REFUSED_STREAM)))
            return
        stream = Stream(self, stream_id, headers, self._peer_window)
        stream.ended = bool(end_stream)
        self._streams[stream_id] = stream
        stream.task = asyncio.get_running_loop().create_task(self._run(stream))

    async def _run(self, stream: Stream) -> None:
        try:
            await self._on_stream(stream)
        finally:
            # A handler that ended without closing its stream leaves it reset; either way
            # the stream is forgotten.
            self.reset_stream(stream, CANCEL)

    def _data(self, stream_id: int, flags: int, payload: bytes) -> None:
        self._unacked += len(payload)
        if self._unacked >= REPLENISH:
            self._write(_frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", self._unacked)))
            self._unacked = 0
        stream = self._streams.get(stream_id)
        if stream is None:
            return  # a stream closed meanwhile
        data = _unpad(flags, payload)
        stream.inbound += data
        if flags & END_STREAM:
            stream.ended = True
        elif len(payload) and not stream.ended:
            # Replenished at once: a message is read whole anyway.
            self._write(_frame(WINDOW_UPDATE, 0, stream_id, struct.pack(">I", len(payload))))
        stream._wake()

    def _settings(self, flags: int, payload: bytes) -> None:
        if flags & ACK:
            return
        if len(payload) % 6:
            raise ConnectionError_(FRAME_SIZE_ERROR, "SETTINGS of the wrong size")
        for i in range(0, len(payload), 6):
            key, value = struct.unpack_from(">HI", payload, i)
            if key == SETTINGS_INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise ConnectionError_(FLOW_CONTROL_ERROR, "initial window too large")
                delta = value - self._peer_window
                self._peer_window = value
                for stream in self._streams.values():
                    stream.send_window += delta
            elif key == SETTINGS_MAX_FRAME_SIZE:
                if not DEFAULT_FRAME <= value <= 2**24 - 1:
                    raise ConnectionError_(PROTOCOL_ERROR, "bad MAX_FRAME_SIZE")
                self._peer_frame = value
        self._write(_frame(SETTINGS, ACK, 0))
        self._window_opened.set()

    def _window_update(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise ConnectionError_(FRAME_SIZE_ERROR, "WINDOW_UPDATE of the wrong size")
        increment = int.from_bytes(payload, "big") & 0x7FFFFFFF
        if stream_id == 0:
            self._send_window += increment
            if self._send_window > MAX_WINDOW:
                raise ConnectionError_(FLOW_CONTROL_ERROR, "connection window overflow")
        else:
            stream = self._streams.get(stream_id)
            if stream is None:
                return
            stream.send_window += increment
        self._window_opened.set()

    # -- writing ---------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def send_headers(self, stream: Stream, headers: list[tuple[bytes, bytes]], end_stream: bool = False) -> None:
        """Sends a header block (our blocks are small: one frame)."""
        if stream.closed or stream.reset:
            return
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        self._write(_frame(HEADERS, flags, stream.id, encode(headers)))
        if end_stream:
            stream.closed = True

    async def send_data(self, stream: Stream, data: bytes | memoryview) -> None:
        """Sends data within both flow-control windows; raises CancelledError if the
        stream is reset meanwhile."""
        view = memoryview(data)
        while view:
            while not stream.reset and min(self._send_window, stream.send_window) <= 0:
                self._window_opened.clear()
                await self._window_opened.wait()
            if stream.reset or stream.closed:
                raise asyncio.CancelledError()
            n = min(len(view), self._send_window, stream.send_window, self._peer_frame)
            self._write(_frame(DATA, 0, stream.id, bytes(view[:n])))
            self._send_window -= n
            stream.send_window -= n
            view = view[n:]
            await self._writer.drain()

    def reset_stream(self, stream: Stream, code: int) -> None:
        if not stream.closed and not stream.reset:
            self._write(_frame(RST_STREAM, 0, stream.id, struct.pack(">I", code)))
        stream.reset = stream.closed = True
        self._streams.pop(stream.id, None)

    def go_away(self) -> None:
        """No new streams: the ones open may finish (graceful shutdown)."""
        if not self._going_away:
            self._going_away = True
            self._write(_frame(GOAWAY, 0, 0, struct.pack(">II", self._last_id, NO_ERROR)))

    def tasks(self) -> list[asyncio.Task[None]]:
        return [s.task for s in self._streams.values() if s.task is not None]

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


def _unpad(flags: int, payload: bytes) -> bytes:
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise ConnectionError_(PROTOCOL_ERROR, "bad padding")
    return payload[1 : len(payload) - payload[0]]
