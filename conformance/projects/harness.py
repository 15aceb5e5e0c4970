"""Prepares a sample project for a run and serves it with `agentengine run`.

Each sample is copied (with the shared `common/` beside it, as in the sample layout) to
<cache>/<sample>-<key>/, where <key> hashes the sample's requirements.txt and the base
interpreter. Every file is replaced on each run except `.venv`, which `agentengine run`
itself creates and fills from requirements.txt on the first run and reuses afterwards, so a
warm run installs nothing while a changed requirements.txt gets a fresh environment.

Environment: AGENTENGINE_BIN (the binary; default: `go build` into the cache),
AGENTENGINE_MATRIX_CACHE (default ~/.cache/agentengine-test/matrix),
AGENTENGINE_MATRIX_START_TIMEOUT (seconds for setup + start, default 1500).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE / "samples"
REPO_ROOT = HERE.parents[1]
FAKE_URL = "http://fake-model.invalid/v1"  # the address in the samples' .env files
SERVING = re.compile(r"agentengine serving .* on (http://\S+)")
START_TIMEOUT = float(os.environ.get("AGENTENGINE_MATRIX_START_TIMEOUT", "1500"))


def cache_dir() -> Path:
    env = os.environ.get("AGENTENGINE_MATRIX_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentengine-test" / "matrix"


def binary() -> str:
    env_bin = os.environ.get("AGENTENGINE_BIN")
    if env_bin:
        return str(Path(env_bin).resolve())
    out = cache_dir() / "bin" / "agentengine"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["go", "build", "-o", str(out), "./cmd/agentengine"],
        cwd=REPO_ROOT,
        env={**os.environ, "CGO_ENABLED": "1"},
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return str(out)


def base_python() -> str:
    """What `agentengine run` makes the venv from (python3 on PATH), for the cache key."""
    exe = shutil.which("python3") or ""
    if not exe:
        return "none"
    ver = subprocess.run([exe, "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=False).stdout.strip()
    return f"{os.path.realpath(exe)} {ver}"


EXAMPLES = REPO_ROOT / "examples"


def source(name: str) -> Path:
    """A sample (samples/NAME) or, for "example-NAME", the repository's examples/NAME."""
    if name.startswith("example-"):
        return EXAMPLES / name.removeprefix("example-")
    return SAMPLES / name


def model_id(project: Path) -> str:
    """The project's `name:` in agentengine.yaml (what clients send as model)."""
    m = re.search(r"^name:\s*([^\s#]+)", (project / "agentengine.yaml").read_text(), re.MULTILINE)
    return m.group(1) if m else project.name


# Samples that run in another sample's environment (their requirements.txt is the same
# file, byte for byte): the full ksadk is ~800 MB, installed once for both.
SHARED_ENV = {"ksadk-runner-class": "ksadk-langgraph"}


def home_of(name: str) -> Path:
    """The cache directory of a project's working copy (keyed by its requirements)."""
    reqs = (source(name) / "requirements.txt").read_bytes()
    key = hashlib.sha256(reqs + b"\0" + base_python().encode()).hexdigest()[:12]
    return cache_dir() / "projects" / f"{name}-{key}"


def env_of(name: str) -> Path:
    """The virtualenv a project runs in: its own .venv, or its SHARED_ENV owner's."""
    owner = SHARED_ENV.get(name, name)
    if owner != name:
        ours, theirs = (source(n) / "requirements.txt" for n in (name, owner))
        if ours.read_bytes() != theirs.read_bytes():
            raise RuntimeError(f"{name} shares {owner}'s environment, so its requirements.txt must be the same as {theirs}")
    return home_of(owner) / source(owner).name / ".venv"


def prepare(name: str, model_url: str) -> Path:
    """The project's working copy (its .venv kept from an earlier run with the same key).

    Samples come with `common/` beside them and a .env naming FAKE_URL, replaced by
    model_url; the examples have no .env, so theirs is written (they use an OpenAI-compatible
    model when OPENAI_API_KEY is set)."""
    src = source(name)
    home = home_of(name)
    root = home.parent
    # Copies of this project under another key hold a stale environment: drop them.
    if root.is_dir():
        for old in root.iterdir():
            if old != home and re.fullmatch(re.escape(name) + r"-[0-9a-f]{12}", old.name):
                shutil.rmtree(old, ignore_errors=True)
    dst = home / src.name
    dst.mkdir(parents=True, exist_ok=True)
    for entry in dst.iterdir():
        if entry.name == ".venv":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    ignore = shutil.ignore_patterns("__pycache__", ".venv", ".agentengine")
    if src.parent == SAMPLES:
        shutil.rmtree(home / "common", ignore_errors=True)
        shutil.copytree(SAMPLES / "common", home / "common", ignore=ignore)
    for entry in src.iterdir():
        if entry.name in (".venv", ".agentengine", "__pycache__"):
            continue
        if entry.is_dir():
            shutil.copytree(entry, dst / entry.name, ignore=ignore)
        else:
            shutil.copy2(entry, dst / entry.name)
    env_file = dst / ".env"
    if src.parent == SAMPLES:
        env_file.write_text(env_file.read_text().replace(FAKE_URL, model_url))
    else:
        env_file.write_text(f"OPENAI_API_KEY=sk-test-not-a-real-key\nOPENAI_BASE_URL={model_url}\nOPENAI_MODEL_NAME=fake-{name}\n")
    if name in SHARED_ENV:
        with (dst / "agentengine.yaml").open("a") as f:
            f.write(f"\n# the matrix harness: {SHARED_ENV[name]}'s environment (the same requirements.txt)\npython: {env_of(name)}\n")
    return dst


def setup(project: Path, bin_path: str) -> None:
    """`agentengine setup project`: its environment, without serving it."""
    subprocess.run([bin_path, "setup", str(project)], env=run_env(), check=True, stdin=subprocess.DEVNULL)


def run_env() -> dict[str, str]:
    """The environment `agentengine` runs in: the test's, without its model settings or
    its virtualenv (agentengine makes a project's venv from python3 on PATH)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTHON", "VIRTUAL_ENV"))}
    venv_bin = str(Path(sys.prefix) / "bin")
    if sys.prefix != sys.base_prefix:
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env


@dataclass
class Served:
    """One `agentengine run DIR` process and what it printed."""

    project: Path
    proc: subprocess.Popen[bytes]
    origin: str = ""
    log: list[str] = field(default_factory=list)
    started_in: float = 0.0

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def logs(self) -> str:
        return "".join(self.log)

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)


def serve(project: Path, bin_path: str) -> Served:
    """Starts `agentengine run project` (which sets the project's .venv up when needed) and
    waits until /health answers; raises with the server's output if it does not."""
    args = [bin_path, "run", str(project), "--port", "0", "--session-backend", "memory"]
    env = run_env()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        args,
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    served = Served(project=project, proc=proc)
    found = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace")
            served.log.append(line)
            m = SERVING.search(line)
            if m and not found.is_set():
                served.origin = m.group(1).rstrip("/")
                found.set()
        found.set()

    threading.Thread(target=pump, name=f"agentengine-{project.name}", daemon=True).start()
    try:
        if not found.wait(timeout=START_TIMEOUT) or not served.origin:
            raise RuntimeError(f"agentengine did not report its address (exit code {proc.poll()})")
        deadline = time.monotonic() + START_TIMEOUT
        last = "no answer"
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"agentengine exited while starting (code {proc.returncode})")
            try:
                with urllib.request.urlopen(served.origin + "/health", timeout=5) as res:
                    body = res.read().decode()
                    last = f"{res.status} {body}"
                    if res.status == 200 and json.loads(body).get("status") == "ok":
                        break
            except (urllib.error.URLError, OSError, ValueError) as e:
                last = repr(e)
            if time.monotonic() > deadline:
                raise RuntimeError(f"GET /health was not ok within {START_TIMEOUT}s (last: {last})")
            time.sleep(0.1)
    except BaseException as e:
        served.stop()
        raise RuntimeError(f"{e}\n--- {' '.join(args)} output ---\n{served.logs()}") from e
    served.started_in = time.monotonic() - t0
    return served
