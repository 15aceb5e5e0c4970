"""The zygote (pre-forking): fork requests over its control socket, the children's
handshake on the stdout they were given, exit reports, the learned preload list."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DEMO, plugin_env

from agentengine_runner.zygote import ENV_FD, MODULES_FILE


class Zygote:
    def __init__(self, proc: subprocess.Popen[bytes], ctrl: socket.socket, env: dict[str, str]) -> None:
        self.proc, self.ctrl, self.env = proc, ctrl, env
        self.next_id = 0

    def recv(self, timeout: float = 30.0) -> dict[str, object]:
        self.ctrl.settimeout(timeout)
        msg: dict[str, object] = json.loads(self.ctrl.recv(1 << 16))
        return msg

    def fork(self) -> tuple[int, int, int]:
        """Forks a child; returns its pid and the read ends of its stdout and stderr."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.next_id += 1
        req = json.dumps({"id": self.next_id, "env": [f"{k}={v}" for k, v in self.env.items()]}).encode()
        socket.send_fds(self.ctrl, [req], [out_w, err_w])
        os.close(out_w)
        os.close(err_w)
        msg = self.recv()
        assert msg.get("id") == self.next_id, msg
        pid = msg["pid"]
        assert isinstance(pid, int)
        return pid, out_r, err_r


@pytest.fixture
def state_dir() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="aez-") as d:
        yield d


@pytest.fixture
def zygote(state_dir: str) -> Iterator[Zygote]:
    sock_dir = tempfile.mkdtemp(prefix="aez-", dir="/tmp")
    env = plugin_env(sock_dir, AGENTENGINE_STATE_DIR=state_dir)
    env["PYTHONPATH"] = os.pathsep.join([state_dir, env["PYTHONPATH"]])
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zenv = dict(env, **{ENV_FD: str(theirs.fileno())})
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentengine_runner", DEMO],
        env=zenv,
        pass_fds=[theirs.fileno()],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    theirs.close()
    z = Zygote(proc, mine, env)
    try:
        ready = z.recv()
        assert ready == {"ready": proc.pid}
        yield z
    finally:
        mine.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_line(fd: int, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n") and time.monotonic() < deadline:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
    return buf.decode()


def ppid(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pre-forking is Linux only")
def test_forked_children_handshake_and_exit_reports(zygote: Zygote) -> None:
    a, out_a, _ = zygote.fork()
    b, out_b, _ = zygote.fork()
    for pid, out in ((a, out_a), (b, out_b)):
        line = read_line(out)
        assert line.startswith("1|1|unix|") and line.endswith("|grpc\n"), line
        assert ppid(pid) == zygote.proc.pid
        assert os.getpgid(pid) == pid  # its own process group
    os.kill(a, signal.SIGKILL)
    assert zygote.recv() == {"exit": a, "status": "signal: killed"}
    os.kill(b, signal.SIGTERM)  # a runner exits cleanly on SIGTERM
    assert zygote.recv() == {"exit": b, "status": "exit status 0"}
    # The host hanging up ends the zygote.
    zygote.ctrl.close()
    assert zygote.proc.wait(timeout=10) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pre-forking is Linux only")
def test_zygote_imports_the_modules_children_recorded(zygote: Zygote, state_dir: str) -> None:
    marker = Path(state_dir) / "imported-by"
    Path(state_dir, "aez_lazy_module.py").write_text(f"import os\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\n")
    # What a child writes after its first runs; a stale entry is skipped.
    Path(state_dir, MODULES_FILE).write_text("json\nno_such_module_aez\naez_lazy_module\n")
    pid, out, _ = zygote.fork()
    assert marker.read_text() == str(zygote.proc.pid)  # imported by the zygote, before the fork
    assert read_line(out).startswith("1|1|unix|")
    os.kill(pid, signal.SIGKILL)
    assert zygote.recv()["exit"] == pid


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pre-forking is Linux only")
def test_bad_fork_request_is_answered_with_an_error(zygote: Zygote) -> None:
    zygote.ctrl.send(json.dumps({"id": 7, "env": []}).encode())  # no descriptors
    msg = zygote.recv()
    assert msg["id"] == 7 and "2 file descriptors" in str(msg["error"])
