"""A LangGraph graph whose run fails half-way while its project holds a FAIL file: "fetch"
counts its runs in fetch-runs, "solve" fails. Tests of continuing a failed run in place
(the adapters' and the Go host's) serve it as a project's agent.py."""

from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

DIR = Path(__file__).parent


class S(TypedDict):
    query: str
    fetched: str
    answer: str


def ksadk_prepare_state(payload: dict[str, Any], session_context: dict[str, Any]) -> dict[str, Any]:
    return {"query": payload["input"]}


def fetch(state: S) -> dict[str, str]:
    runs = DIR / "fetch-runs"
    runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
    return {"fetched": state["query"].upper()}


def solve(state: S) -> dict[str, str]:
    if (DIR / "FAIL").exists():
        raise RuntimeError("solve failed")
    return {"answer": "solved " + state["fetched"]}


b = StateGraph(S)
b.add_node("fetch", fetch)
b.add_node("solve", solve)
b.add_edge(START, "fetch")
b.add_edge("fetch", "solve")
b.add_edge("solve", END)
graph = b.compile()
