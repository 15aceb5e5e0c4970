"""The `agentengine init` scaffolds and the Python examples are plain framework code.

Each project gets a fresh virtualenv with nothing but its own requirements.txt, resolved
from the package index without agentengine's constraints, and no agentengine on the path.
There it runs one turn through its framework's own API (a LangGraph/LangChain `ainvoke`, an
ADK Runner with InMemorySessionService): offline with its offline_model.py, then with
OPENAI_API_KEY against a fake OpenAI-compatible server through the framework's own OpenAI
integration. Then `agentengine run` serves the same project, unchanged, and answers a
/v1/responses request.

    python -m pytest examples/tests -q

Needs go, a Python 3.11+ with venv, and pip access to the package index (the pip cache is
reused). Projects with the same requirements share one virtualenv. AGENTENGINE_BIN names
a built binary to use instead of building one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ONE_TURN = (Path(__file__).parent / "one_turn.py").read_text()
# What the runner SDK needs beside a project's own requirements, when the host does not say.
RUNNER_REQUIREMENTS_FILE = REPO / "pluginsdk" / "python" / "runner-requirements.txt"
FALLBACK_RUNNER_REQUIREMENTS = ["protobuf>=4.25,<8"]
FAKE_ANSWER = "The fake model says hello."
FAKE_MODEL = "fake-model-7"


@dataclass(frozen=True)
class Case:
    source: str  # "init:<framework>" or an examples/ directory
    framework: str
    question: str
    tool: str
    answer_has: str

    @property
    def id(self) -> str:
        return self.source.replace(":", "-")


WEATHER = "what is the weather in Paris?"
CASES = [
    Case("init:langgraph", "langgraph", WEATHER, "get_weather", "Paris"),
    Case("init:langchain", "langchain", WEATHER, "get_weather", "Paris"),
    Case("init:deepagents", "deepagents", WEATHER, "get_weather", "Paris"),
    Case("init:adk", "adk", WEATHER, "get_weather", "Paris"),
    Case("langgraph-chat", "langgraph", WEATHER, "get_weather", "Paris"),
    Case("langchain-qa", "langchain", "search the docs for checkpoints", "search_docs", "checkpoint"),
    Case("deepagents-research", "deepagents", "write_todos for a report on agent runtimes", "write_todos", "todo"),
    Case("adk-assistant", "adk", "weather city=Paris", "get_weather", "Paris"),
    # Without an artifact service (one_turn's plain Runner) the scribe's tools cannot run:
    # the turn is the coordinator's transfer and the scribe's answer.
    Case("adk-team", "adk", "ask the scribe what it can do", "transfer_to_agent", "scribe"),
]


def test_every_python_example_is_covered() -> None:
    examples = {p.parent.name for p in (REPO / "examples").glob("*/requirements.txt")}
    # python-sdk is no framework code to run without agentengine: the Go end-to-end test
    # TestPythonSDKExample (cmd/agentengine) serves it.
    examples.discard("python-sdk")
    assert examples == {c.source for c in CASES if not c.source.startswith("init:")}


# -- projects and their environments ----------------------------------------------------------


@dataclass
class Project:
    case: Case
    dir: Path
    name: str
    module: str
    variable: str
    python: Path  # the virtualenv's interpreter, reached through the project's .venv


def binary(tmp: Path) -> Path:
    if os.environ.get("AGENTENGINE_BIN"):
        return Path(os.environ["AGENTENGINE_BIN"])
    out = tmp / "agentengine"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/agentengine"], cwd=REPO, check=True)
    return out


def make_project(case: Case, root: Path, bin_path: Path) -> Path:
    if case.source.startswith("init:"):
        target = root / f"new-{case.framework}"
        subprocess.run([str(bin_path), "init", str(target), "-f", case.framework], check=True, capture_output=True)
        return target
    target = root / case.source
    shutil.copytree(REPO / "examples" / case.source, target,
                    ignore=shutil.ignore_patterns(".venv", "venv", ".agentengine", "__pycache__", ".env"))
    return target


def config(project: Path) -> tuple[str, str, str]:
    """name, module and variable from agentengine.yaml (the few keys the projects use)."""
    values = {}
    for line in (project / "agentengine.yaml").read_text().splitlines():
        match = re.match(r"^(\w+):\s*([^#\s]+)", line)
        if match:
            values[match.group(1)] = match.group(2)
    entry, _, variable = values["entry_point"].partition(":")
    return values["name"], entry.removesuffix(".py"), variable or values["agent_variable"]


def requirement_lines(project: Path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in (project / "requirements.txt").read_text().splitlines())
    return sorted(line for line in lines if line)


def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def build_venv(path: Path, requirements: list[str]) -> Path:
    run([sys.executable, "-m", "venv", str(path)])
    python = path / "bin" / "python"
    # --no-compile: only the modules a turn imports get compiled, on import.
    run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--no-compile", "-q", *requirements])
    return python


@pytest.fixture(scope="module")
def bin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return binary(tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory, bin_path: Path) -> dict[str, Project]:
    root = tmp_path_factory.mktemp("projects")
    dirs = {case.id: make_project(case, root, bin_path) for case in CASES}
    # One virtualenv per distinct requirements list, three at a time (pip mostly waits on the index).
    sets: dict[str, list[str]] = {}
    for d in dirs.values():
        reqs = requirement_lines(d)
        sets.setdefault(hashlib.sha256("\n".join(reqs).encode()).hexdigest()[:12], reqs)
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {key: pool.submit(build_venv, root / "venvs" / key, reqs) for key, reqs in sets.items()}
        venvs = {key: f.result() for key, f in futures.items()}
    out = {}
    for case in CASES:
        d = dirs[case.id]
        key = hashlib.sha256("\n".join(requirement_lines(d)).encode()).hexdigest()[:12]
        # The project's own .venv, where `agentengine run` looks first.
        (d / ".venv").symlink_to(venvs[key].parent.parent, target_is_directory=True)
        name, module, variable = config(d)
        out[case.id] = Project(case, d, name, module, variable, d / ".venv" / "bin" / "python")
    return out


# -- a fake OpenAI-compatible endpoint --------------------------------------------------------


class FakeOpenAI(ThreadingHTTPServer):
    requests: list[dict[str, Any]]


class FakeHandler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        base = {"id": "chatcmpl-1", "created": 1, "model": body.get("model", "")}
        usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
        if not body.get("stream"):
            message = {"role": "assistant", "content": FAKE_ANSWER}
            self.reply("application/json", json.dumps({**base, "object": "chat.completion", "usage": usage,
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode())
            return
        chunks = [{"role": "assistant", "content": ""}, *({"content": w} for w in re.findall(r"\S+\s*", FAKE_ANSWER))]
        events = [{**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
                  for d in chunks]
        events.append({**base, "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self.reply("text/event-stream", data.encode())

    def reply(self, content_type: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(("127.0.0.1", 0), FakeHandler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


# -- the framework's own API, without agentengine -------------------------------------------


def plain_env(**extra: str) -> dict[str, str]:
    """A clean environment: no PYTHONPATH, no OpenAI settings unless given."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    return {**env, **extra}


def one_turn(p: Project, env: dict[str, str]) -> dict[str, Any]:
    done = run([str(p.python), "-c", ONE_TURN, p.case.framework, p.module, p.variable, p.case.question],
               cwd=p.dir, env=env, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_runs_offline_with_only_its_requirements(projects: dict[str, Project], case: Case) -> None:
    p = projects[case.id]
    assert "agentengine" not in " ".join(requirement_lines(p.dir))
    out = one_turn(p, plain_env())
    assert out["agentengine_importable"] == [], "agentengine leaked onto the project's path"
    assert case.tool in out["calls"], out
    assert out["results"], out
    assert case.answer_has.lower() in out["answer"].lower(), out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_uses_the_frameworks_openai_integration_with_a_key(
    projects: dict[str, Project], case: Case, fake_openai: FakeOpenAI
) -> None:
    p = projects[case.id]
    # Templates get OPENAI_BASE_URL, examples OPENAI_API_BASE: both name the endpoint.
    var = "OPENAI_BASE_URL" if case.source.startswith("init:") else "OPENAI_API_BASE"
    url = f"http://127.0.0.1:{fake_openai.server_address[1]}/v1"
    out = one_turn(p, plain_env(OPENAI_API_KEY="sk-test", OPENAI_MODEL_NAME=FAKE_MODEL, **{var: url}))
    assert out["answer"].strip() == FAKE_ANSWER, out
    assert fake_openai.requests, "the agent never called the endpoint"
    first = fake_openai.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["body"]["model"] == FAKE_MODEL and first["auth"] == "Bearer sk-test"
    assert any(t["function"]["name"] == case.tool for t in first["body"].get("tools", [])), first["body"]


# -- the same project under `agentengine run` -------------------------------------------------


def runner_requirements() -> list[str]:
    if not RUNNER_REQUIREMENTS_FILE.exists():
        return FALLBACK_RUNNER_REQUIREMENTS
    lines = (line.split("#")[0].strip() for line in RUNNER_REQUIREMENTS_FILE.read_text().splitlines())
    return [line for line in lines if line]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_agentengine_serves_it_unchanged(projects: dict[str, Project], case: Case, bin_path: Path) -> None:
    p = projects[case.id]
    # The project's environment is the user's (agentengine did not create it): the runner SDK's
    # few packages go in beside its requirements, as `agentengine doctor` advises.
    run([str(p.python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
         *runner_requirements()])
    before = {f.name: f.read_bytes() for f in p.dir.iterdir() if f.is_file()}
    port = free_port()
    log = p.dir.parent / f"{case.id}.log"
    with log.open("w") as out:
        proc = subprocess.Popen([str(bin_path), "run", str(p.dir), "--port", str(port), "--session-backend", "memory"],
                                stdout=out, stderr=subprocess.STDOUT, env=plain_env(), start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, f"agentengine run exited {proc.returncode}:\n{log.read_text()[-6000:]}"
            assert time.monotonic() < deadline, f"agentengine run did not start:\n{log.read_text()[-6000:]}"
            try:
                with urllib.request.urlopen(base + "/health", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        status, body = post(base + "/v1/responses", {"model": p.name, "input": case.question})
        assert status == 200 and body.get("status") == "completed", f"{status} {body}\n{log.read_text()[-6000:]}"
        # Tools the agent ran itself: function_call items, or mcp_call items with their output.
        calls = [item["name"] for item in body["output"] if item.get("type") in ("function_call", "mcp_call")]
        text = "".join(c.get("text", "") for item in body["output"] if item.get("type") == "message"
                       for c in item.get("content", []))
        assert case.tool in calls, body
        assert case.answer_has.lower() in text.lower(), body
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    after = {f.name: f.read_bytes() for f in p.dir.iterdir() if f.is_file()}
    assert after == before, "agentengine changed the project's files"
