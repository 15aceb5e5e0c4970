"""The DeepAgents bridge: create_deep_agent graphs run on the LangGraph bridge, plus

- the virtual filesystem (state key "files", DeepAgents' default StateBackend): every
  changed file becomes a native event kind "workspace.file" with {path, content, encoding,
  deleted}; the host turns these into workspace files;
- the todo list (state key "todos", TodoListMiddleware): becomes session state "todos"
  through a state delta.

Only the top-level agent's updates count: files a subagent writes reach the parent
through its task tool's update.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .langgraph_bridge import GraphRunner
from .stream import EventWriter

WORKSPACE_FILE = "workspace.file"
TODOS_KEY = "todos"


class DeepAgentsRunner(GraphRunner):
    framework = "deepagents"

    async def on_update(
        self, node: str, update: Mapping[str, Any], ns: tuple[str, ...], writer: EventWriter
    ) -> None:
        await super().on_update(node, update, ns, writer)
        if ns:
            return
        files = update.get("files")
        if isinstance(files, Mapping):
            for path in sorted(files):
                await writer.native(WORKSPACE_FILE, file_event(path, files[path]))
        todos = update.get("todos")
        if isinstance(todos, list):
            await writer.state_delta({TODOS_KEY: [dict(t) if isinstance(t, Mapping) else t for t in todos]})


def file_event(path: str, data: Any) -> dict[str, Any]:
    if data is None:  # the files reducer deletes a path mapped to None
        return {"path": path, "content": None, "encoding": None, "deleted": True}
    if isinstance(data, Mapping):
        content = data.get("content")
        if isinstance(content, list):  # pre-0.7 FileData kept a list of lines
            content = "\n".join(str(line) for line in content)
        return {
            "path": path,
            "content": content,
            "encoding": data.get("encoding", "utf-8"),
            "deleted": False,
            "modified_at": data.get("modified_at"),
        }
    return {"path": path, "content": str(data), "encoding": "utf-8", "deleted": False}
