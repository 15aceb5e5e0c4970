"""Measures cold start (spawn -> handshake line) and stream throughput of the demo runner.

    python tests/bench_runner.py [--starts 5] [--events 20000]

Not a test (pytest doesn't collect it): numbers vary with machine load.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from client import Host
from conftest import start_plugin, stop


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--size", type=int, default=16)
    args = ap.parse_args()

    starts = []
    for _ in range(args.starts):
        with tempfile.TemporaryDirectory(prefix="aeb-", dir="/tmp") as d:
            p = start_plugin(d)
            starts.append(p.started_ms)
            stop(p)
    print(f"cold start to handshake: median {statistics.median(starts):.0f} ms "
          f"(min {min(starts):.0f}, max {max(starts):.0f}, n={len(starts)})")

    with tempfile.TemporaryDirectory(prefix="aeb-", dir="/tmp") as d:
        p = start_plugin(d)
        try:
            rate, lat = asyncio.run(stream(p.target, args.events, args.size))
        finally:
            stop(p)
    print(f"stream of {args.events} x {args.size} B text deltas: {rate:.0f} events/s")
    print(f"Run round trip (1 text event), median of 200: {lat * 1e3:.2f} ms")


async def stream(target: str, n: int, size: int) -> tuple[float, float]:
    async with Host(target) as host:
        await host.events("warmup")
        t0 = time.perf_counter()
        count = 0
        async for _ in host.run("count", payload={"n": n, "size": size}):
            count += 1
        rate = n / (time.perf_counter() - t0)
        rtts = []
        for _ in range(200):
            t = time.perf_counter()
            await host.events("x")
            rtts.append(time.perf_counter() - t)
        return rate, statistics.median(rtts)


if __name__ == "__main__":
    main()
