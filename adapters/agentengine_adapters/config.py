"""The process contract with the Go host: the environment a runner is started with."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

FRAMEWORKS = ("langgraph", "langchain", "deepagents", "adk")
DEFAULT_AGENT_VARIABLE = "root_agent"
DEFAULT_ENTRY_POINT = "agent.py"
CHECKPOINT_FILE = "checkpoints.sqlite"


@dataclass(frozen=True)
class Settings:
    project_dir: Path
    agent_name: str
    framework: str
    entry_point: str
    agent_variable: str
    state_dir: Path
    # KsADK's custom runner class (agentengine.yaml `runner_class`), "" for none.
    runner_class: str = ""

    @property
    def checkpoint_path(self) -> Path:
        return self.state_dir / CHECKPOINT_FILE

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        project = Path(env.get("AGENTENGINE_PROJECT_DIR") or os.getcwd()).resolve()
        framework = (env.get("AGENTENGINE_FRAMEWORK") or "langgraph").strip().lower()
        entry = (env.get("AGENTENGINE_ENTRY_POINT") or "").strip() or _langgraph_json_entry(project)
        state_dir = env.get("AGENTENGINE_STATE_DIR") or str(project / ".agentengine")
        return cls(
            project_dir=project,
            agent_name=env.get("AGENTENGINE_AGENT_NAME") or project.name,
            framework=framework,
            entry_point=entry or DEFAULT_ENTRY_POINT,
            agent_variable=(env.get("AGENTENGINE_AGENT_VARIABLE") or "").strip()
            or DEFAULT_AGENT_VARIABLE,
            state_dir=Path(state_dir).resolve(),
            runner_class=(env.get("AGENTENGINE_RUNNER_CLASS") or "").strip(),
        )


def _langgraph_json_entry(project: Path) -> str:
    # The host normally resolves langgraph.json itself; this only helps a runner started by
    # hand in a langgraph.json project with a single graph.
    try:
        graphs = json.loads((project / "langgraph.json").read_text("utf-8")).get("graphs") or {}
    except (OSError, ValueError, AttributeError):
        return ""
    if isinstance(graphs, dict) and len(graphs) == 1:
        value = next(iter(graphs.values()))
        return value if isinstance(value, str) else ""
    return ""
