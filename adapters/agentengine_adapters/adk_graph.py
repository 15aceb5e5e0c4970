"""ADK's agent graph for the dev UI, drawn by the installed google-adk as its dev server
draws it (google.adk.cli.agent_graph), through the runner's Call:

| method | argument | result |
|---|---|---|
| `adk.graph` | `{"highlights": [[from, to], ...], "dark_mode": bool}` | `{"dotSrc": <DOT>}`, or `{}` when ADK draws none |

The host computes the highlighted pairs of an event (an agent and the tools it called,
the tools that answered it) from its stored session, as ADK's dev server does.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from agentengine_runner import CallError
from google.adk.agents import BaseAgent

GRAPH = "adk.graph"


def _pairs(raw: Any) -> list[tuple[str | None, str | None]]:
    if raw is None:
        return []
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise CallError(f"{GRAPH}: highlights must be a list of [from, to] pairs")
    out: list[tuple[str | None, str | None]] = []
    for pair in raw:
        if (
            not isinstance(pair, Sequence)
            or isinstance(pair, (str, bytes))
            or len(pair) != 2
            or not all(p is None or isinstance(p, str) for p in pair)
        ):
            raise CallError(f"{GRAPH}: each highlight is a [from, to] pair of names, not {pair!r}")
        out.append((pair[0], pair[1]))
    return out


async def agent_graph(root: BaseAgent, arg: Any) -> dict[str, str]:
    """The DOT source of root's graph with the given pairs highlighted."""
    if arg is not None and not isinstance(arg, dict):
        raise CallError(f"{GRAPH}: the argument is a JSON object")
    arg = arg or {}
    pairs = _pairs(arg.get("highlights"))
    dark = arg.get("dark_mode", False)
    if not isinstance(dark, bool):
        raise CallError(f"{GRAPH}: dark_mode is a boolean")
    try:
        import graphviz  # type: ignore[import-untyped]
        from google.adk.cli import agent_graph as adk_agent_graph
    except ModuleNotFoundError as exc:
        raise CallError(
            f"{GRAPH}: this google-adk cannot draw agent graphs ({exc})", "failed_precondition"
        ) from None
    draw = adk_agent_graph.get_agent_graph
    kwargs: dict[str, Any] = {}
    params = inspect.signature(draw).parameters
    if "dark_mode" in params:  # google-adk 2.x; 1.x draws light only
        kwargs["dark_mode"] = dark
    graph = await draw(root, pairs, **kwargs)
    if isinstance(graph, graphviz.Digraph):
        return {"dotSrc": graph.source}
    return {}
