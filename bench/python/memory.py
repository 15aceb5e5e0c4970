"""What a Python runner process's memory is made of, stage by stage.

Started by `go run ./bench/python -memory` with the runner's interpreter and environment
(the AGENTENGINE_* variables, the bridge on PYTHONPATH). It imports what a runner process
imports, in the order it does, then runs the bridge's turns in-process, and prints a
markdown table of the process's RSS (and its anonymous part, from
/proc/self/smaps_rollup) and module count after each stage. The file-backed part of the
RSS (shared libraries) is the difference of the two columns.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid


def usage() -> tuple[float, float]:
    """RSS and its anonymous part, in MB."""
    fields: dict[str, int] = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            name, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                fields[name] = int(parts[0])
    return fields["Rss"] / 1024, fields["Anonymous"] / 1024


rows: list[tuple[str, float, float, int]] = []


def stage(name: str) -> None:
    rss, anon = usage()
    rows.append((name, rss, anon, len(sys.modules)))


async def turns(n: int, concurrency: int, text: str) -> None:
    from agentengine_adapters.bridges import make_runner
    from agentengine_adapters.config import Settings
    from agentengine_runner.testing import collect, make_request

    runner = make_runner(Settings.from_env())
    stage("the agent loaded (make_runner)")

    async def turn() -> None:
        sid = uuid.uuid4().hex
        events = await collect(runner, make_request(text, session_id=sid, invocation_id="inv-" + sid))
        if any(e.HasField("error") for e in events):
            raise RuntimeError(f"bridge turn failed: {events}")

    await turn()
    stage("after the first turn")
    for _ in range(max(n // concurrency, 1)):
        await asyncio.gather(*(turn() for _ in range(concurrency)))
    stage(f"after {n:,} more turns, {concurrency} at a time")
    close = getattr(runner, "aclose", None)
    if close is not None:
        await close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=3200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--input", default="hello there")
    args = ap.parse_args()
    stage("the interpreter, its site imports and this script")
    import agentengine_adapters.bridges  # noqa: F401
    import agentengine_runner.server  # noqa: F401  (its gRPC server, what serve() starts)

    stage("the runner SDK, its gRPC server and the bridges imported")
    asyncio.run(turns(args.turns, max(args.concurrency, 1), args.input))
    print("| stage | RSS MB | anonymous MB | modules |")
    print("|---|---:|---:|---:|")
    for name, rss, anon, modules in rows:
        print(f"| {name} | {rss:.0f} | {anon:.0f} | {modules:,} |")


if __name__ == "__main__":
    main()
