"""Starts runners as real subprocesses, the way hashicorp/go-plugin's host does."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentengine_runner.handshake import MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE

HERE = Path(__file__).parent
DEMO = "agentengine_runner.testing.demo:DemoRunner"


def plugin_env(socket_dir: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            MAGIC_COOKIE_KEY: MAGIC_COOKIE_VALUE,
            "PLUGIN_UNIX_SOCKET_DIR": socket_dir,
            "PLUGIN_PROTOCOL_VERSIONS": "1",
            "PLUGIN_MIN_PORT": "10000",
            "PLUGIN_MAX_PORT": "25000",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")])),
        }
    )
    env.update(extra)
    return env


def read_line(stream: object, timeout: float) -> bytes:
    """Reads one line from a pipe without blocking past timeout."""
    fd = stream.fileno()  # type: ignore[attr-defined]
    buf = b""
    deadline = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no handshake line within {timeout}s (got {buf!r})")
        chunk = os.read(fd, 1)
        if not chunk:
            break
        buf += chunk
    return buf


@dataclass
class Plugin:
    proc: subprocess.Popen[bytes]
    handshake: str
    address: str
    stderr_path: Path
    socket_dir: str
    started_ms: float
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return f"unix:{self.address}"

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout)


@pytest.fixture
def socket_dir() -> Iterator[str]:
    # Short on purpose: unix socket paths are limited to ~104 bytes.
    d = tempfile.mkdtemp(prefix="aet-", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def start_plugin(
    socket_dir: str, spec: str = DEMO, args: list[str] | None = None, **env: str
) -> Plugin:
    stderr_path = Path(socket_dir) / "stderr.log"
    cmd = [sys.executable, "-m", "agentengine_runner", spec] if args is None else args
    t0 = time.monotonic()
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            cmd,
            env=plugin_env(socket_dir, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    line = read_line(proc.stdout, 30).decode()
    started_ms = (time.monotonic() - t0) * 1e3
    parts = line.rstrip("\n").split("|")
    assert len(parts) == 5, line
    return Plugin(proc, line, parts[3], stderr_path, socket_dir, started_ms)


@pytest.fixture
def plugin(socket_dir: str) -> Iterator[Plugin]:
    p = start_plugin(socket_dir)
    yield p
    stop(p)


def stop(p: Plugin) -> None:
    if p.proc.poll() is None:
        p.proc.send_signal(signal.SIGTERM)
        try:
            p.proc.wait(5)
        except subprocess.TimeoutExpired:
            p.proc.kill()
            p.proc.wait()
    if p.proc.stdout:
        p.proc.stdout.close()
