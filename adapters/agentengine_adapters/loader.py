"""Loading the user's agent object from the entry point.

Entry points come as written in agentengine.yaml or langgraph.json: "agent.py",
"agent.py:graph", "./pkg/agent.py:graph", "pkg.module:graph", "pkg.module". An explicit
":attr" wins over AGENTENGINE_AGENT_VARIABLE. The project dir and project/src go first on
sys.path so the project's own modules shadow anything installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .config import Settings


class EntryPointError(Exception):
    """The entry point cannot be resolved (bad path, missing variable, wrong kind)."""


@dataclass(frozen=True)
class EntrySpec:
    module: str
    attr: str
    file: Path | None = None


@dataclass(frozen=True)
class LoadedEntry:
    module: ModuleType
    attr: str
    obj: Any


def prepare_sys_path(project: Path) -> None:
    for path in (project / "src", project):
        text = str(path)
        if path.is_dir() and text not in sys.path:
            sys.path.insert(0, text)


def parse_entry(entry: str, default_attr: str, project: Path) -> EntrySpec:
    text = entry.strip().replace("\\", "/")
    target, attr = text, ""
    # "C:/x.py:graph" is not a concern (POSIX host); split on the last colon only.
    if ":" in text:
        target, attr = text.rsplit(":", 1)
    attr = attr.strip() or default_attr
    target = target.strip()
    if target.startswith("./"):
        target = target[2:]
    looks_like_path = target.endswith(".py") or "/" in target
    if not looks_like_path:
        return EntrySpec(module=target, attr=attr)
    file = Path(target) if Path(target).is_absolute() else project / target
    if file.is_dir():
        file = file / "__init__.py"
    return EntrySpec(module=_module_name(file, project), attr=attr, file=file)


def _module_name(file: Path, project: Path) -> str:
    try:
        rel = file.resolve().relative_to(project.resolve())
    except ValueError:
        return file.stem
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    # project/src is on sys.path too: "src/pkg/agent.py" imports as "pkg.agent".
    if len(parts) > 1 and parts[0] == "src" and not (project / "src" / "__init__.py").exists():
        parts = parts[1:]
    return ".".join(parts)


def import_module(spec: EntrySpec) -> ModuleType:
    if spec.file is not None and not spec.file.exists():
        raise EntryPointError(f"entry point file {spec.file} does not exist")
    if spec.file is not None and not all(p.isidentifier() for p in spec.module.split(".")):
        # A file whose path is not importable by name ("my-agent/agent.py").
        return _import_file(spec.file)
    return importlib.import_module(spec.module)


def _import_file(file: Path) -> ModuleType:
    name = f"agentengine_entry_{abs(hash(str(file)))}"
    loader_spec = importlib.util.spec_from_file_location(name, file)
    if loader_spec is None or loader_spec.loader is None:
        raise EntryPointError(f"cannot import {file}")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    sys.path.insert(0, str(file.parent))
    loader_spec.loader.exec_module(module)
    return module


def get_attr(module: ModuleType, attr: str) -> Any:
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            candidates = ", ".join(agent_candidates(module)) or "none found"
            raise EntryPointError(
                f"module {module.__name__!r} has no attribute {attr!r} "
                f"(agent-like objects in it: {candidates}); set agent_variable in "
                "agentengine.yaml or name the entry as 'file.py:variable'"
            )
        obj = getattr(obj, part)
    return obj


def agent_candidates(module: ModuleType) -> list[str]:
    """Names in module that could be the agent, most likely first (for error hints)."""
    order = {"graph": 0, "builder": 1, "runnable": 2, "factory": 3}
    found: list[tuple[int, str]] = []
    for name, value in vars(module).items():
        kind = kind_of(value)
        if name.startswith("_") or kind == "unknown":
            continue
        if kind == "factory" and getattr(value, "__module__", None) != module.__name__:
            continue  # imported helpers such as chat_model or tool
        if kind == "runnable" and _is_part(value):
            continue
        found.append((order[kind], name))
    return [name for _, name in sorted(found)]


def _is_part(value: Any) -> bool:
    # Tools and chat models are Runnables, but not what a project exports as its agent.
    try:
        from langchain_core.language_models import BaseLanguageModel
        from langchain_core.tools import BaseTool
    except ImportError:
        return False
    return isinstance(value, BaseTool | BaseLanguageModel)


def kind_of(obj: Any) -> str:
    """"graph" (compiled LangGraph), "builder" (StateGraph not compiled), "runnable"
    (other LangChain Runnable), "factory" (zero-argument function) or "unknown"."""
    try:
        from langgraph.pregel import Pregel
    except ImportError:  # langchain-only environments
        Pregel = None  # type: ignore[assignment,misc]  # noqa: N806
    if Pregel is not None and isinstance(obj, Pregel):
        return "graph"
    if hasattr(obj, "compile") and hasattr(obj, "add_node") and not isinstance(obj, type):
        return "builder"
    try:
        from langchain_core.runnables import Runnable
    except ImportError:
        Runnable = None  # type: ignore[assignment,misc]  # noqa: N806
    if Runnable is not None and isinstance(obj, Runnable):
        return "runnable"
    if inspect.isfunction(obj) and _no_required_params(obj):
        return "factory"
    return "unknown"


def _no_required_params(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params
    )


def load_entry(settings: Settings) -> LoadedEntry:
    """Imports the entry module and returns the agent object (factories called once)."""
    prepare_sys_path(settings.project_dir)
    spec = parse_entry(settings.entry_point, settings.agent_variable, settings.project_dir)
    module = import_module(spec)
    obj = get_attr(module, spec.attr)
    if kind_of(obj) == "factory":
        # langgraph.json allows graph factories; ours take no arguments.
        obj = obj()
    kind = kind_of(obj)
    if kind in ("unknown", "factory"):
        raise EntryPointError(
            f"{module.__name__}.{spec.attr} is a {type(obj).__name__}, not a LangGraph graph "
            "(StateGraph or compiled graph) or a LangChain Runnable"
        )
    return LoadedEntry(module=module, attr=spec.attr, obj=obj)


def module_description(module: ModuleType) -> str:
    """The first line of the entry module's docstring (Describe's description)."""
    doc = (inspect.getdoc(module) or "").strip()
    return doc.splitlines()[0] if doc else ""
