"""Picking the bridge for a project: framework + the kind of object the entry exports."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from agentengine_runner import Runner

from .broken import BrokenRunner
from .config import FRAMEWORKS, Settings
from .loader import LoadedEntry, kind_of, load_entry

if TYPE_CHECKING:  # checkpoint.py needs LangGraph; an ADK project has none
    from .checkpoint import DurableCheckpointer

log = logging.getLogger("agentengine_runner.adapters")


def make_runner(settings: Settings, *, checkpointer: DurableCheckpointer | None = None) -> Runner:
    """The runner for the project; a BrokenRunner when it cannot be loaded."""
    try:
        if settings.framework not in FRAMEWORKS:
            raise ValueError(
                f"unsupported framework {settings.framework!r} for the Python adapters "
                f"(supported: {', '.join(FRAMEWORKS)})"
            )
        if settings.runner_class:
            # KsADK's custom runner: no agent object, the class answers (ksadk_bridge.py).
            from .ksadk_bridge import KsadkRunner, load_runner_class

            return KsadkRunner(settings, load_runner_class(settings))
        if settings.framework == "adk":
            # Imported lazily: an ADK project need not install LangChain, and vice versa.
            from .adk_bridge import AdkRunner, load_adk_entry

            return AdkRunner(settings, load_adk_entry(settings))
        entry = load_entry(settings)
    except Exception as exc:
        # The message names the exception: the host quotes this line as why the agent
        # is unavailable (the traceback follows in the record).
        log.error("cannot load the agent %s: %s: %s", settings.entry_point, type(exc).__name__, exc, exc_info=True)
        return BrokenRunner(settings, exc)
    return runner_for(settings, entry, checkpointer=checkpointer)


def runner_for(
    settings: Settings, entry: LoadedEntry, *, checkpointer: DurableCheckpointer | None = None
) -> Runner:
    from .deepagents_bridge import DeepAgentsRunner
    from .langchain_bridge import LangChainGraphRunner, RunnableRunner
    from .langgraph_bridge import GraphRunner

    kind = kind_of(entry.obj)
    runner: Any
    if kind == "runnable":
        runner = RunnableRunner(settings, entry)
    elif settings.framework == "deepagents" or is_deep_agent(entry.obj):
        runner = DeepAgentsRunner(settings, entry, checkpointer=checkpointer)
    elif settings.framework == "langchain":
        runner = LangChainGraphRunner(settings, entry, checkpointer=checkpointer)
    else:
        runner = GraphRunner(settings, entry, checkpointer=checkpointer)
    runner.framework = settings.framework  # Describe reports what the project declares
    return cast(Runner, runner)


def is_deep_agent(obj: Any) -> bool:
    # create_deep_agent tags its graph's config metadata.
    metadata = (getattr(obj, "config", None) or {}).get("metadata") or {}
    return metadata.get("ls_integration") == "deepagents"
