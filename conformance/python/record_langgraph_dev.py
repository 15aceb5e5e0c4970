"""Re-records testdata/langgraph-dev/: langgraph dev's answers to langgraph_parity.SCENARIO.

Runs `langgraph dev` (langgraph-cli[inmem], in-memory, no browser, no reload, telemetry and
LangSmith tracing off) from a virtualenv that has it, on a copy of examples/langgraph-chat
(its offline model), sends the scenario, and writes each normalised exchange to
testdata/langgraph-dev/<name>.json, with the versions it ran in _versions.json.

    python conformance/python/record_langgraph_dev.py [--venv DIR]

--venv (default $LANGGRAPH_CLI_VENV, else ~/.cache/agentengine-bench/langgraph-cli-0.4.40, the
virtualenv bench/peers.sh makes: `pip install "langgraph-cli[inmem]==0.4.40" langgraph==1.2.22`).
The recording client is this interpreter (it needs httpx).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from langgraph_parity import GRAPH, record

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
GOLDEN = HERE / "testdata" / "langgraph-dev"
DEFAULT_VENV = Path.home() / ".cache" / "agentengine-bench" / "langgraph-cli-0.4.40"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", default=os.environ.get("LANGGRAPH_CLI_VENV", str(DEFAULT_VENV)))
    args = ap.parse_args()
    venv = Path(args.venv)
    cli = venv / "bin" / "langgraph"
    if not cli.exists():
        sys.exit(f"{cli} is missing: make the virtualenv (see this script's docstring)")

    with tempfile.TemporaryDirectory(prefix="langgraph-dev-") as tmp:
        project = Path(tmp) / GRAPH
        shutil.copytree(REPO / "examples" / GRAPH, project,
                        ignore=shutil.ignore_patterns(".venv", ".agentengine", "__pycache__", "agentengine.yaml"))
        (project / "langgraph.json").write_text(json.dumps({"dependencies": ["."], "graphs": {GRAPH: "./agent.py:graph"}}))
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false")
        proc = subprocess.Popen(
            [str(cli), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload",
             "--server-log-level", "warning"],
            cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"langgraph dev did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
                time.sleep(0.5)
            exchanges = record(url)
            info = httpx.get(f"{url}/info", timeout=10).json()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)

    versions = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
         "['langgraph-cli', 'langgraph-api', 'langgraph-runtime-inmem', 'langgraph', 'langchain-core']}))")],
        check=True, capture_output=True, text=True,
    ).stdout
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for old in GOLDEN.glob("*.json"):
        old.unlink()
    for name, exchange in exchanges.items():
        (GOLDEN / f"{name}.json").write_text(json.dumps(exchange, indent=1, sort_keys=True) + "\n")
    meta = {"packages": json.loads(versions), "info_version": info.get("version")}
    (GOLDEN / "_versions.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(exchanges)} exchanges to {GOLDEN}")


if __name__ == "__main__":
    main()
