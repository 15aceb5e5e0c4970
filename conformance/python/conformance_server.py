"""Starts and stops an agentengine server (memory session backend) for the conformance tests.

AGENTENGINE_BIN names a prebuilt agentengine binary; without it the binary is built once per
pytest session with `go build` into a temporary directory. AGENTENGINE_PROJECT overrides
the served project (default: examples/echo-go); start_server(projects=[...]) serves several.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from openai import OpenAI

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL = "echo-go"
# A second Go agent (the echo agent under another name) for tests that need two agents.
TWIN_PROJECT = REPO_ROOT / "conformance" / "echo-twin"
TWIN_MODEL = "echo-twin"
START_TIMEOUT = float(os.environ.get("AGENTENGINE_START_TIMEOUT", "120"))
STOP_GRACE = 10.0
SERVING = re.compile(r"agentengine serving .* on (http://\S+)")

_live: set[subprocess.Popen[bytes]] = set()


@atexit.register
def _kill_leftovers() -> None:
    # Last resort if a teardown never ran: each server is its own process group.
    for proc in list(_live):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@dataclass
class Server:
    origin: str
    proc: subprocess.Popen[bytes]
    log: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def logs(self) -> str:
        return "".join(self.log)

    def client(self) -> OpenAI:
        return OpenAI(
            base_url=self.base_url,
            api_key="x",
            max_retries=0,
            timeout=30.0,
            _strict_response_validation=True,
        )


_built: list[str] = []


def build_binary(out_dir: Path) -> str:
    """AGENTENGINE_BIN if set, else `go build` of ./cmd/agentengine into out_dir (once per process)."""
    env_bin = os.environ.get("AGENTENGINE_BIN")
    if env_bin:
        return str(Path(env_bin).resolve())
    if _built:
        return _built[0]
    out = out_dir / "agentengine"
    env = dict(os.environ)
    env.setdefault("CGO_ENABLED", "1")
    subprocess.run(
        ["go", "build", "-o", str(out), "./cmd/agentengine"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    _built.append(str(out))
    return str(out)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    _live.discard(proc)
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=STOP_GRACE)


def start_server(binary: str, projects: list[str] | None = None, flags: list[str] | None = None) -> Server:
    """Start `agentengine run` on the projects with the extra flags (e.g. --tokens FILE)."""
    if projects is None:
        projects = [os.environ.get("AGENTENGINE_PROJECT") or str(REPO_ROOT / "examples" / "echo-go")]
    args = [binary, "run", *projects, "--port", "0", "--session-backend", "memory", *(flags or [])]
    proc = subprocess.Popen(
        args,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # own process group: _stop signals the whole group
    )
    _live.add(proc)
    log: list[str] = []
    found = threading.Event()
    origin: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace")
            log.append(line)
            m = SERVING.search(line)
            if m and not found.is_set():
                origin.append(m.group(1).rstrip("/"))
                found.set()
        found.set()  # EOF: the process is gone

    threading.Thread(target=pump, name="agentengine-log", daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT
    try:
        if not found.wait(timeout=START_TIMEOUT) or not origin:
            raise RuntimeError(f"server did not report its address (exit code {proc.poll()})")
        last = "no answer"
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited while starting (code {proc.returncode})")
            try:
                with urllib.request.urlopen(origin[0] + "/health", timeout=2) as res:
                    body = res.read().decode()
                    last = f"{res.status} {body}"
                    if res.status == 200 and json.loads(body).get("status") == "ok":
                        break
            except (urllib.error.URLError, OSError, ValueError) as e:
                last = repr(e)
            if time.monotonic() > deadline:
                raise RuntimeError(f'GET /health was not {{"status":"ok"}} within {START_TIMEOUT}s (last: {last})')
            time.sleep(0.05)
    except BaseException as e:
        stop_server(proc)
        raise RuntimeError(f"{e}\n--- {' '.join(args)} output ---\n{''.join(log)}") from e
    return Server(origin=origin[0], proc=proc, log=log)
