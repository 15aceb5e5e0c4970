"""In-process baseline for bench/python: the same agent, the same turn, no host.

Started by `go run ./bench/python` with the runner's interpreter and environment (the
AGENTENGINE_* variables, the bridge on PYTHONPATH). Prints {"graph": [...], "bridge":
[...]}: seconds per turn of

- graph: the framework alone. LangGraph: graph.astream(...) as the bridge calls it
  (stream modes messages+updates+custom, subgraphs, v2) with LangGraph's own
  InMemorySaver, each turn a new thread, deleted after it. ADK: one Runner with ADK's own
  InMemorySessionService, each turn a new session, deleted after it, run_async with the
  bridge's RunConfig (SSE streaming). Nothing accumulates from turn to turn, so the
  figure is the framework's steady cost, not a collector working through a growing
  store;
- bridge: the bridge's runner run in-process (input mapping, the framework, event mapping
  into runner events), without go-plugin and gRPC;
- cpu: [graph, bridge], the process's CPU seconds per turn of each path.

--profile N writes the top N functions by cumulative time of each path (cProfile over
the measured turns) to stderr, to see what the bridge does per turn that the framework
alone does not. --concurrency N runs N turns at a time (asyncio.gather; each turn's time
is then its group's over N) and --freeze freezes the heap after the warm-up, as a runner
process does (agentengine_runner.lifelong): together they show a serving runner's turn
without its process boundary.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import pstats
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from agentengine_adapters.bridges import make_runner
from agentengine_adapters.config import Settings
from agentengine_runner.testing import collect, make_request


async def timed(
    turns: int,
    warmup: int,
    turn: Callable[[], Awaitable[None]],
    profile: int = 0,
    name: str = "",
    concurrency: int = 1,
    freeze: bool = False,
) -> tuple[list[float], float]:
    """Wall seconds of each turn, and the process's CPU seconds per turn over them all
    (CPU time is what a loaded machine disturbs least)."""
    for _ in range(warmup):
        await turn()
    if freeze:
        gc.freeze()
    out = []
    prof = cProfile.Profile() if profile else None
    cpu = time.process_time()
    groups = max(turns // concurrency, 1)
    for _ in range(groups):
        t = time.perf_counter()
        if prof is not None:
            prof.enable()
        if concurrency == 1:
            await turn()
        else:
            await asyncio.gather(*(turn() for _ in range(concurrency)))
        if prof is not None:
            prof.disable()
        out.extend([(time.perf_counter() - t) / concurrency] * concurrency)
    cpu = (time.process_time() - cpu) / len(out)
    if freeze:
        gc.unfreeze()  # the next path starts from the same collector state
    if prof is not None:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(profile)
        print(f"=== {name}: {turns} turns ===\n{buf.getvalue()}", file=sys.stderr)
    return out, cpu


def langgraph_turn(settings: Settings, text: str) -> Callable[[], Awaitable[None]]:
    # Imported here: an ADK project's environment has no LangGraph.
    from agentengine_adapters.checkpoint import attach
    from agentengine_adapters.langgraph_bridge import STREAM_MODES
    from agentengine_adapters.loader import kind_of, load_entry
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    entry = load_entry(settings)
    saver = InMemorySaver()
    graph = attach(entry.obj, kind_of(entry.obj), saver)

    async def turn() -> None:
        thread = uuid.uuid4().hex
        config = {"configurable": {"thread_id": thread}}
        async for _ in graph.astream(
            {"messages": [HumanMessage(text)]},
            config,
            stream_mode=STREAM_MODES,
            subgraphs=True,
            version="v2",
        ):
            pass
        # The thread goes when its turn is done, as the bridge's run threads do: a saver
        # holding every turn ever run would make the collector's work grow turn by turn.
        await saver.adelete_thread(thread)

    return turn


def adk_turn(settings: Settings, text: str) -> Callable[[], Awaitable[None]]:
    from agentengine_adapters.adk_bridge import load_adk_entry
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    obj: Any = load_adk_entry(settings).obj
    service = InMemorySessionService()
    if isinstance(obj, App):
        runner = Runner(app=obj, app_name=settings.agent_name, session_service=service)
    else:
        runner = Runner(app_name=settings.agent_name, agent=obj, session_service=service)
    run_config = RunConfig(streaming_mode=StreamingMode.SSE)

    async def turn() -> None:
        session = await service.create_session(app_name=settings.agent_name, user_id="bench")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="bench", session_id=session.id, new_message=message, run_config=run_config):
            pass
        # As the LangGraph turn's thread: a service holding every session would make the
        # collector's work grow turn by turn.
        await service.delete_session(app_name=settings.agent_name, user_id="bench", session_id=session.id)

    return turn


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--input", default="hello there")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--freeze", action="store_true")
    args = ap.parse_args()
    shape = {"concurrency": max(args.concurrency, 1), "freeze": args.freeze}

    settings = Settings.from_env()
    graph_turn = adk_turn(settings, args.input) if settings.framework == "adk" else langgraph_turn(settings, args.input)

    runner = make_runner(settings)

    async def bridge_turn() -> None:
        sid = uuid.uuid4().hex
        events = await collect(runner, make_request(args.input, session_id=sid, invocation_id="inv-" + sid))
        if any(e.HasField("error") for e in events):
            raise RuntimeError(f"bridge turn failed: {events}")

    try:
        graph, graph_cpu = await timed(args.turns, args.warmup, graph_turn, args.profile, "framework in-process", **shape)
        bridge, bridge_cpu = await timed(args.turns, args.warmup, bridge_turn, args.profile, "bridge runner in-process", **shape)
        result = {"graph": graph, "bridge": bridge, "cpu": [graph_cpu, bridge_cpu]}
    finally:
        close = getattr(runner, "aclose", None)
        if close is not None:
            await close()
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
