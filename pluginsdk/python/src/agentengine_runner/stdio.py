"""Keeps the real stdout for the handshake line and routes everything else to GRPCStdio.

go-plugin reads only the first line of the plugin's stdout and discards the rest, and
anything printed before the handshake breaks startup. So, before user code is imported,
fd 1 is swapped for a pipe whose reader forwards the bytes to the host over
plugin.GRPCStdio/StreamStdio. Swapping the file descriptor (not only sys.stdout) also
catches writes from C extensions and subprocesses, and keeps grandchildren from holding
the host's stdout pipe open (which would make the host's Kill wait for them).
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import threading
from collections import deque

STDOUT = 1
STDERR = 2

# Output kept while no host is streaming; the oldest is dropped beyond this.
DEFAULT_BUFFER_LIMIT = 1 << 20


class StdioHub:
    """Thread-safe buffer of (channel, bytes) chunks, drained by the StreamStdio RPC."""

    def __init__(self, limit: int = DEFAULT_BUFFER_LIMIT) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._chunks: deque[tuple[int, bytes]] = deque()
        self._size = 0
        self._dropped = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Event | None = None

    def push(self, channel: int, data: bytes) -> None:
        if not data:
            return
        with self._lock:
            self._chunks.append((channel, data))
            self._size += len(data)
            while self._size > self._limit and len(self._chunks) > 1:
                _, old = self._chunks.popleft()
                self._size -= len(old)
                self._dropped += len(old)
            loop, ready = self._loop, self._ready
        if loop is not None and ready is not None:
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:  # loop closed during shutdown
                pass

    def drain(self) -> list[tuple[int, bytes]]:
        with self._lock:
            chunks = list(self._chunks)
            self._chunks.clear()
            self._size = 0
            return chunks

    @property
    def dropped(self) -> int:
        return self._dropped

    async def wait(self) -> None:
        """Waits until data may be available; must be called from the serving loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._loop is not loop or self._ready is None:
                self._loop, self._ready = loop, asyncio.Event()
            ready = self._ready
            if self._chunks:
                return
            ready.clear()
        await ready.wait()


class _Capture:
    def __init__(self, handshake_fd: int, hub: StdioHub) -> None:
        self.handshake_fd = handshake_fd
        self.hub = hub


_capture: _Capture | None = None
_capture_lock = threading.Lock()


def capture(hub: StdioHub | None = None) -> StdioHub:
    """Redirects fd 1 and sys.stdout into the hub; idempotent. Returns the hub.

    Call it before importing user code (the `python -m agentengine_runner` entry point
    does); serve() calls it too, which is too late only for import-time prints.
    """
    global _capture
    with _capture_lock:
        if _capture is not None:
            return _capture.hub
        hub = hub or StdioHub()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        # os.dup makes a non-inheritable copy: subprocesses won't hold the host's pipe.
        handshake_fd = os.dup(1)
        read_fd, write_fd = os.pipe()
        os.dup2(write_fd, 1)  # fd 1 stays inheritable, so children write into our pipe
        os.close(write_fd)
        threading.Thread(
            target=_pump, args=(read_fd, hub), name="agentengine-stdout", daemon=True
        ).start()
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
            write_through=True,
        )
        _capture = _Capture(handshake_fd, hub)
        return hub


def write_handshake(line: str) -> None:
    """Writes the handshake line to the real stdout (captured or not) and flushes it."""
    fd = _capture.handshake_fd if _capture is not None else 1
    data = line.encode()
    while data:
        data = data[os.write(fd, data) :]


def hub() -> StdioHub | None:
    return _capture.hub if _capture is not None else None


def _pump(fd: int, hub: StdioHub) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        hub.push(STDOUT, data)
