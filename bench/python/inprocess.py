"""In-process baseline for bench/python: the same graph, the same turn, no host.

Started by `go run ./bench/python` with the runner's interpreter and environment (the
AGENTENGINE_* variables, the bridge on PYTHONPATH). Prints {"graph": [...], "bridge":
[...]}: seconds per turn of

- graph: graph.astream(...) as the bridge calls it (stream modes
  messages+updates+custom, subgraphs, v2) with LangGraph's own InMemorySaver, each turn a
  new thread;
- bridge: the bridge's runner run in-process (input mapping, the graph, event mapping into
  runner events), without go-plugin and gRPC.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid

from agentengine_adapters.bridges import make_runner
from agentengine_adapters.checkpoint import attach
from agentengine_adapters.config import Settings
from agentengine_adapters.langgraph_bridge import STREAM_MODES
from agentengine_adapters.loader import kind_of, load_entry
from agentengine_runner.testing import collect, make_request
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver


async def timed(turns: int, warmup: int, turn) -> list[float]:
    for _ in range(warmup):
        await turn()
    out = []
    for _ in range(turns):
        t = time.perf_counter()
        await turn()
        out.append(time.perf_counter() - t)
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--input", default="hello there")
    args = ap.parse_args()

    settings = Settings.from_env()
    entry = load_entry(settings)
    graph = attach(entry.obj, kind_of(entry.obj), InMemorySaver())

    async def graph_turn() -> None:
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        async for _ in graph.astream(
            {"messages": [HumanMessage(args.input)]},
            config,
            stream_mode=STREAM_MODES,
            subgraphs=True,
            version="v2",
        ):
            pass

    runner = make_runner(settings)

    async def bridge_turn() -> None:
        sid = uuid.uuid4().hex
        events = await collect(runner, make_request(args.input, session_id=sid, invocation_id="inv-" + sid))
        if any(e.HasField("error") for e in events):
            raise RuntimeError(f"bridge turn failed: {events}")

    try:
        result = {
            "graph": await timed(args.turns, args.warmup, graph_turn),
            "bridge": await timed(args.turns, args.warmup, bridge_turn),
        }
    finally:
        close = getattr(runner, "aclose", None)
        if close is not None:
            await close()
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
