"""The durable checkpointer: LangGraph checkpoints in <state dir>/checkpoints.sqlite.

An interrupt is only resumable after the runner process is killed and restarted if the
thread's checkpoint outlives the process, so graphs without a checkpointer (or with the
in-memory one that examples use as a placeholder) get the sqlite saver. The sqlite saver
needs packages a project may not have (aiosqlite, langgraph-checkpoint-sqlite); without
them the checkpointer falls back to LangGraph's in-memory saver, with one warning.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("agentengine_runner.adapters")


class DurableCheckpointer:
    """Opens the sqlite saver lazily, inside the event loop that will use it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._saver: Any = None
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self._warned = False

    async def get(self) -> Any:
        async with self._lock:
            if self._saver is None:
                try:
                    import aiosqlite
                    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
                except ImportError as exc:
                    from langgraph.checkpoint.memory import InMemorySaver

                    if not self._warned:
                        self._warned = True
                        log.warning(
                            "checkpoints are kept in memory (%s): an interrupted run cannot be "
                            "resumed after this runner process stops",
                            exc,
                        )
                    self._saver = InMemorySaver()
                    return self._saver

                self.path.parent.mkdir(parents=True, exist_ok=True)
                # Several runner processes of one project share this file: wait for the
                # lock instead of failing with "database is locked", and use WAL so
                # readers never block the writer.
                self._conn = await aiosqlite.connect(str(self.path), timeout=30)
                await self._conn.execute("PRAGMA busy_timeout = 30000")
                await self._conn.execute("PRAGMA journal_mode = WAL")
                self._saver = AsyncSqliteSaver(self._conn)
                await self._saver.setup()
            return self._saver

    async def aclose(self) -> None:
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
            self._conn = self._saver = None


def wants_durable(graph: Any) -> bool:
    """True when the compiled graph has no checkpointer or only the in-memory one."""
    current = getattr(graph, "checkpointer", None)
    if current is None:
        return True
    if current is True or current is False:  # subgraph flags: the user decided
        return False
    from langgraph.checkpoint.memory import InMemorySaver

    return type(current) is InMemorySaver


def attach(obj: Any, kind: str, saver: Any) -> Any:
    """Returns a compiled graph using saver: builders are compiled with it, compiled graphs
    copied with it (the user's object is left untouched)."""
    if kind == "builder":
        return obj.compile(checkpointer=saver)
    if kind == "graph" and wants_durable(obj):
        if getattr(obj, "checkpointer", None) is not None:
            log.info("replacing the graph's in-memory checkpointer with %s", saver)
        return obj.copy({"checkpointer": saver})
    return obj
