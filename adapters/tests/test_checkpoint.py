"""The checkpointer works in an environment that has only langgraph."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agentengine_adapters.checkpoint import DurableCheckpointer


def test_without_sqlite_packages_falls_back_to_memory_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # None in sys.modules makes the import raise ImportError, as if never installed.
    monkeypatch.setitem(sys.modules, "aiosqlite", None)
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.sqlite.aio", None)
    cp = DurableCheckpointer(tmp_path / "checkpoints.sqlite")

    async def twice() -> tuple[object, object]:
        first = await cp.get()
        await cp.aclose()
        return first, await cp.get()

    with caplog.at_level(logging.WARNING, logger="agentengine_runner.adapters"):
        first, second = asyncio.run(twice())
    assert isinstance(first, InMemorySaver) and isinstance(second, InMemorySaver)
    warnings = [r for r in caplog.records if "checkpoints are kept in memory" in r.getMessage()]
    assert len(warnings) == 1
    assert not (tmp_path / "checkpoints.sqlite").exists()
