"""Runs every Python and JavaScript example of docs/langgraph-api.md against a live server.

The server is `agentengine run examples/langgraph-chat` (its offline model), on a free port
that replaces the examples' http://127.0.0.1:8080. Each example runs in a process of its own
(Python: this interpreter, which has langgraph-sdk and langgraph; JavaScript: node, with
conformance/node's packages) and must exit 0 and print what each `# prints:` / `// prints:`
comment of it says.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance_fixtures import agentengine_bin  # noqa: F401 (fixture)
from conformance_server import REPO_ROOT, Server, start_server, stop_server

DOC = REPO_ROOT / "docs" / "langgraph-api.md"
NODE_MODULES = REPO_ROOT / "conformance" / "node" / "node_modules"
BLOCK = re.compile(r"^```(python|js)\n(.*?)^```", re.DOTALL | re.MULTILINE)
PRINTS = re.compile(r"(?:#|//) prints: (.+)$", re.MULTILINE)


def examples() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text())]


@pytest.fixture(scope="module")
def lg_server(agentengine_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:  # noqa: F811
    project = tmp_path_factory.mktemp("docs") / "langgraph-chat"
    shutil.copytree(REPO_ROOT / "examples" / "langgraph-chat", project,
                    ignore=shutil.ignore_patterns(".venv", "venv", ".agentengine", "__pycache__"))
    with open(project / "agentengine.yaml", "a") as f:
        f.write(f"\npython: {sys.executable}\n")
    srv = start_server(agentengine_bin, [str(project)])
    try:
        yield srv
    finally:
        stop_server(srv.proc)


def test_the_page_has_examples_of_each_client() -> None:
    found = examples()
    langs = [lang for lang, _ in found]
    assert langs.count("python") >= 2 and "js" in langs, langs
    assert any("RemoteGraph" in code for _, code in found)
    assert all(PRINTS.search(code) for _, code in found), "every example says what it prints"


@pytest.mark.parametrize("index", range(len(examples())))
def test_example_runs(lg_server: Server, tmp_path: Path, index: int) -> None:
    lang, code = examples()[index]
    code = code.replace("http://127.0.0.1:8080", lg_server.origin)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))}
    if lang == "python":
        script = tmp_path / "example.py"
        script.write_text(code)
        cmd = [sys.executable, str(script)]
    else:
        if not NODE_MODULES.is_dir():
            if os.environ.get("CI"):
                pytest.fail(f"{NODE_MODULES} is missing: npm ci in conformance/node")
            pytest.skip("conformance/node has no node_modules: npm ci there")
        # The example's imports resolve from its directory: conformance/node's packages.
        (tmp_path / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
        script = tmp_path / "example.mjs"
        script.write_text(code)
        cmd = ["node", str(script)]
    run = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, f"example {index} ({lang}) failed:\n{code}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    for want in PRINTS.findall(code):
        assert want.strip() in run.stdout, f"example {index} ({lang}) did not print {want!r}:\n{run.stdout}"
