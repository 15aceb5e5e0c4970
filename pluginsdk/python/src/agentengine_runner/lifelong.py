"""A runner process's lifelong objects, kept out of the cyclic collector's way.

Everything imported to serve an agent (the framework, gRPC, the agent's own modules: a
hundred thousand objects and more) lives as long as the process. CPython's collector
still walks all of it at every full collection, and a busy runner makes one every second
or so: on a LangGraph echo turn that was about a sixth of the runner's CPU. gc.freeze()
moves what is tracked now into a permanent generation the collector skips; reference
counting still frees those objects as usual, so only cyclic garbage among them is kept.

The process freezes once it is ready to serve, and once more after its first run, at the
first moment no run is in flight: the modules a framework imports on its first run (ADK
imports several hundred) are lifelong too, and a run in flight would otherwise have its
cycles frozen with them.
"""

from __future__ import annotations

import gc


class LifelongObjects:
    """Freezes what the process holds at ready() and at the first idle moment after a run."""

    def __init__(self) -> None:
        self._in_flight = 0
        self._after_first_run = True

    def ready(self) -> None:
        gc.freeze()

    def run_started(self) -> None:
        self._in_flight += 1

    def run_ended(self) -> None:
        self._in_flight -= 1
        if self._after_first_run and self._in_flight == 0:
            self._after_first_run = False
            gc.freeze()
