"""Each bridge imports only its own framework: an ADK project need not install LangChain,
a LangGraph project needs neither the ADK nor durable-checkpoint packages it did not ask
for. Checked in a fresh interpreter, so what other tests imported does not count."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

CHECK = """
import sys
{imports}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r} or m.startswith({prefixes!r}))
print(",".join(loaded))
"""


def loaded_modules(imports: str, forbidden: set[str], prefixes: tuple[str, ...] = ()) -> list[str]:
    code = CHECK.format(imports=textwrap.dedent(imports), forbidden=forbidden, prefixes=prefixes or ("\0",))
    path = f"{REPO / 'adapters'}:{REPO / 'pluginsdk' / 'python' / 'src'}"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": path}, check=False
    )
    assert out.returncode == 0, out.stderr
    return [m for m in out.stdout.strip().split(",") if m]


@pytest.mark.adk
def test_the_adk_bridge_imports_no_langchain() -> None:
    imports = """
    from agentengine_adapters import adk_bridge, adk_session, models, resume
    from agentengine_adapters.bridges import make_runner
    models.adk_model()
    """
    assert loaded_modules(imports, {"langchain", "langchain_core", "langgraph", "deepagents"}) == []


@pytest.mark.langgraph
def test_the_langgraph_bridge_imports_no_adk_langchain_or_sqlite() -> None:
    imports = """
    from agentengine_adapters import langgraph_bridge, deepagents_bridge, inputs, stream, models
    from agentengine_adapters.bridges import make_runner
    models.chat_model()
    """
    forbidden = {"langchain", "deepagents", "aiosqlite", "sqlite3"}
    assert loaded_modules(imports, forbidden, ("google.adk", "google.genai", "langgraph.checkpoint.sqlite")) == []
