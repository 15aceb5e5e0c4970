"""The process contract: `python -m agentengine_adapters` under go-plugin (handshake,
Describe, Run, a broken project that keeps serving, a SIGKILL between interrupt and
resume) and `python -m agentengine_adapters doctor`."""

from __future__ import annotations

import asyncio
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner._proto.runner.v1 import runner_pb2_grpc as runner_grpc
from agentengine_runner.emitter import unbatch
from agentengine_runner.handshake import MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE
from conftest import REPO

ADAPTERS = REPO / "adapters"
SDK = REPO / "pluginsdk" / "python" / "src"

GOOD = """
'''A test agent.'''
print("noise on stdout at import time")
from typing import TypedDict
from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt

class S(TypedDict):
    query: str
    result: str

def node(state: S):
    answer = interrupt({"name": "deploy", "args": {"target": state["query"]}})
    get_stream_writer()(f"deployed={answer['approve']}")
    return {"result": f"deployed={answer['approve']}"}

b = StateGraph(S)
b.add_node("node", node)
b.add_edge(START, "node")
graph = b.compile()
"""


def write_project(root: Path, source: str, requirements: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(textwrap.dedent(source))
    if requirements:
        (root / "requirements.txt").write_text(requirements)
    return root


def env_for(project: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTENGINE_", "PLUGIN_", "OPENAI_"))}
    env.pop(MAGIC_COOKIE_KEY, None)
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(SDK), str(ADAPTERS)]),
            "AGENTENGINE_PROJECT_DIR": str(project),
            "AGENTENGINE_AGENT_NAME": "proc-agent",
            "AGENTENGINE_FRAMEWORK": "langgraph",
            "AGENTENGINE_ENTRY_POINT": "agent.py:graph",
            "AGENTENGINE_STATE_DIR": str(project / ".agentengine"),
        }
    )
    env.update(extra)
    return env


class Plugin:
    def __init__(self, project: Path, socket_dir: str, **env: str) -> None:
        self.stderr_path = Path(socket_dir) / f"stderr-{time.monotonic_ns()}.log"
        full = env_for(project, **env)
        full.update(
            {
                MAGIC_COOKIE_KEY: MAGIC_COOKIE_VALUE,
                "PLUGIN_UNIX_SOCKET_DIR": socket_dir,
                "PLUGIN_PROTOCOL_VERSIONS": "1",
                "PLUGIN_MIN_PORT": "10000",
                "PLUGIN_MAX_PORT": "25000",
            }
        )
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-u", "-m", "agentengine_adapters"],
                cwd=project,
                env=full,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        line = _read_line(self.proc.stdout, 60).decode()
        parts = line.rstrip("\n").split("|")
        assert len(parts) == 5 and parts[0] == "1" and parts[4] == "grpc", line
        self.target = f"unix:{parts[3]}"

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


def _read_line(stream: Any, timeout: float) -> bytes:
    fd, buf, deadline = stream.fileno(), b"", time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no handshake line within {timeout}s (got {buf!r})")
        chunk = os.read(fd, 1)
        if not chunk:
            break
        buf += chunk
    return buf


def request(
    input: Any,
    *,
    resume: bool = False,
    session: str = "s1",
    answers: pb.ApprovalRequest | None = None,
    checkpoints: list[pb.Checkpoint] | None = None,
) -> pb.RunRequest:
    ctx = {"platform_context": {"session_id": session, "user_id": "u"}, "history": [], "is_resume": resume, "state": {}}
    payload: dict[str, Any] = {"input": input}
    if answers is not None:  # as the host describes the approval request being answered
        payload["resume"] = {
            "approval_request_id": answers.id, "approve": True, "name": answers.name,
            "arguments": answers.arguments, "detail": json.loads(answers.detail_json or b"null"),
        }
        payload["resumes"] = [payload["resume"]]
    return pb.RunRequest(
        app_name="app", user_id="u", session_id=session, invocation_id="i",
        payload_json=json.dumps(payload).encode(), session_context_json=json.dumps(ctx).encode(),
        checkpoints=checkpoints or [],
    )


def kept_checkpoints(events: list[pb.RunEvent]) -> list[pb.Checkpoint]:
    """What the host keeps of a run's checkpoint events and hands the next run: the latest
    checkpoint of each thread and namespace, with its writes."""
    latest: dict[tuple[str, str], pb.Checkpoint] = {}
    for e in events:
        if e.WhichOneof("event") == "checkpoint":
            latest[(e.checkpoint.thread_id, e.checkpoint.namespace)] = e.checkpoint
    for e in events:
        w = e.checkpoint_write
        if e.WhichOneof("event") == "checkpoint_write" and latest[(w.thread_id, w.namespace)].checkpoint_id == w.checkpoint_id:
            latest[(w.thread_id, w.namespace)].writes.append(w)
    return list(latest.values())


async def call(target: str, *reqs: pb.RunRequest) -> tuple[pb.DescribeResponse, list[list[pb.RunEvent]]]:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = runner_grpc.RunnerStub(channel)
        described = await stub.Describe(pb.DescribeRequest(), timeout=10)
        runs = [[ev async for e in stub.Run(r, timeout=60) for ev in unbatch(e)] for r in reqs]
        return described, runs


@pytest.fixture
def socket_dir() -> Iterator[str]:
    d = tempfile.mkdtemp(prefix="aea-", dir="/tmp")  # short: unix socket paths are limited
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_serves_and_an_interrupt_survives_sigkill(tmp_path: Path, socket_dir: str) -> None:
    project = write_project(tmp_path / "good", GOOD)
    first = Plugin(project, socket_dir)
    try:
        described, (events,) = asyncio.run(call(first.target, request("prod")))
    finally:
        first.stop(signal.SIGKILL)  # no goodbye: only what the host was sent remains
    assert described.framework == "langgraph" and described.agent_name == "proc-agent"
    assert described.description == "A test agent." and described.capabilities.resume
    assert described.capabilities.checkpoints
    kept = kept_checkpoints(events)
    assert kept and any(w.channel == "__interrupt__" for c in kept for w in c.writes)
    (req,) = [e.approval_request for e in events if e.WhichOneof("event") == "approval_request"]
    assert req.name == "deploy" and json.loads(req.arguments) == {"target": "prod"}

    second = Plugin(project, socket_dir)
    try:
        answer = {"type": "mcp_approval_response", "approval_request_id": req.id, "approve": True}
        _, (resumed,) = asyncio.run(call(second.target, request(answer, resume=True, answers=req, checkpoints=kept)))
    finally:
        second.stop()
    resumed = [e for e in resumed if not e.WhichOneof("event").startswith("checkpoint")]
    assert [e.WhichOneof("event") for e in resumed] == ["text_delta", "message_done"]
    assert resumed[0].text_delta.text == "deployed=True"
    # The import-time print went to the host's stdio stream, not the handshake.
    assert "noise on stdout" not in first.stderr()


def test_a_project_that_fails_to_import_exits_with_the_traceback(tmp_path: Path, socket_dir: str) -> None:
    # Not ready until the module imported: no handshake, the traceback on stderr, exit 1.
    project = write_project(tmp_path / "bad", "import not_a_real_package_xyz\ngraph = None\n")
    full = env_for(project)
    full.update({MAGIC_COOKIE_KEY: MAGIC_COOKIE_VALUE, "PLUGIN_UNIX_SOCKET_DIR": socket_dir, "PLUGIN_PROTOCOL_VERSIONS": "1"})
    proc = subprocess.run(
        [sys.executable, "-u", "-m", "agentengine_adapters"],
        cwd=project, env=full, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1, proc
    assert proc.stdout == ""  # no handshake line
    assert "Traceback" in proc.stderr and "import not_a_real_package_xyz" in proc.stderr
    assert "ModuleNotFoundError: No module named 'not_a_real_package_xyz'" in proc.stderr


def doctor(project: Path, **env: str) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "agentengine_adapters", "doctor"],
        cwd=project, env=env_for(project, **env), capture_output=True, text=True, timeout=120,
    )
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout  # exactly one JSON document
    return proc.returncode, json.loads(lines[0]), proc.stderr


def test_doctor_on_a_good_project(tmp_path: Path) -> None:
    project = write_project(tmp_path / "good", GOOD)
    code, report, stderr = doctor(project)
    assert code == 0 and report["ok"] is True, report
    names = [c["name"] for c in report["checks"]]
    assert names == ["python", "runtime", "framework", "checkpointer", "entry_module", "agent_variable", "hook"]
    assert all(set(c) == {"name", "ok", "detail", "fix"} for c in report["checks"])
    assert "noise on stdout" in stderr  # the project's print went to stderr


def test_doctor_on_broken_projects(tmp_path: Path) -> None:
    missing_dep = write_project(tmp_path / "dep", "import not_a_real_package_xyz\n", requirements="not-a-real-package-xyz\n")
    code, report, _ = doctor(missing_dep)
    entry = {c["name"]: c for c in report["checks"]}["entry_module"]
    assert code == 1 and not report["ok"] and not entry["ok"]
    # The project's own environment, never an interpreter outside it.
    if sys.prefix != sys.base_prefix:
        assert entry["fix"] == f"{shlex.quote(sys.executable)} -m pip install -r {shlex.quote(str(missing_dep / 'requirements.txt'))}"
    else:
        assert entry["fix"] == f"agentengine setup {shlex.quote(str(missing_dep))}"

    # An ImportError raised inside an installed library (google-adk's LiteLlm without
    # litellm does this) points at the project's line and never into site-packages.
    lib = tmp_path / "site" / "lib" / "python3" / "site-packages" / "fakelib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("raise ImportError('LiteLLM support requires: pip install fakelib[extensions]')\n")
    in_lib = write_project(tmp_path / "lib dir", "import os\nimport fakelib\n")
    code, report, _ = doctor(in_lib, PYTHONPATH=os.pathsep.join([str(SDK), str(ADAPTERS), str(lib.parent)]))
    entry = {c["name"]: c for c in report["checks"]}["entry_module"]
    assert code == 1 and "ImportError: LiteLLM support requires" in entry["detail"], entry
    assert "at agent.py:2" in entry["detail"] and "site-packages" not in entry["detail"] + entry["fix"], entry
    assert entry["fix"] == f"agentengine setup {shlex.quote(str(in_lib))}"

    # A package of the user's own, next to the project (or above it), is no pip install:
    # the fix puts its folder on the project's path.
    mono = tmp_path / "mono"
    (mono / "common").mkdir(parents=True)
    (mono / "common" / "__init__.py").write_text("X = 1\n")
    local = write_project(mono / "agent", "import common\n", requirements="langgraph\n")
    code, report, _ = doctor(local)
    entry = {c["name"]: c for c in report["checks"]}["entry_module"]
    assert code == 1 and "No module named 'common'" in entry["detail"], entry
    assert "not a PyPI package but a folder of yours in " + str(mono) in entry["detail"], entry
    assert "`env: {PYTHONPATH: ..}`" in entry["fix"] and "pip" not in entry["fix"], entry
    lib_in_project = write_project(tmp_path / "inproj", "import shared\n")
    (lib_in_project / "libs" / "shared").mkdir(parents=True)
    (lib_in_project / "libs" / "shared" / "__init__.py").write_text("")
    code, report, _ = doctor(lib_in_project)
    entry = {c["name"]: c for c in report["checks"]}["entry_module"]
    assert code == 1 and "`env: {PYTHONPATH: libs}`" in entry["fix"], entry

    wrong_var = write_project(tmp_path / "var", GOOD)
    code, report, _ = doctor(wrong_var, AGENTENGINE_ENTRY_POINT="agent.py:nope")
    check = {c["name"]: c for c in report["checks"]}["agent_variable"]
    assert code == 1 and not check["ok"] and "set `agent_variable: graph`" in check["fix"]

    no_file = write_project(tmp_path / "file", GOOD)
    code, report, _ = doctor(no_file, AGENTENGINE_ENTRY_POINT="graf.py:graph")
    check = {c["name"]: c for c in report["checks"]}["entry_module"]
    assert code == 1 and "graf.py does not exist" in check["detail"] and "agent.py" in check["fix"]

    bad_hook = write_project(tmp_path / "hook", GOOD + "\ndef ksadk_prepare_state(payload):\n    return payload\n")
    code, report, _ = doctor(bad_hook)
    check = {c["name"]: c for c in report["checks"]}["hook"]
    assert code == 1 and not check["ok"]
    assert "def ksadk_prepare_state(payload: dict, session_context: dict) -> dict" in check["fix"]

    bad_framework = write_project(tmp_path / "fw", GOOD)
    code, report, _ = doctor(bad_framework, AGENTENGINE_FRAMEWORK="crewai")
    assert code == 1 and not {c["name"]: c for c in report["checks"]}["framework"]["ok"]
