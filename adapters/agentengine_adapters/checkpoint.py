"""Host-kept LangGraph checkpoints.

An interrupt is only resumable after the runner process is killed, on another process of
the pool, or after a host restart if the thread's checkpoint outlives the process. The
host keeps it: HostSaver holds checkpoints in memory (a cache of recent threads) and
sends every checkpoint and pending write to the host as runner events
(agentengine_runner.emitter.RunCheckpoints); the host stores them in its session store
and hands the session's latest ones back with each turn, which HostSaver takes when they
are newer than what it holds. Nothing is written to the project directory and no package
beyond langgraph is needed.

Delta channels (LangGraph's DeltaChannel, e.g. DeepAgents' messages) are not stored in
each checkpoint: LangGraph rebuilds them from the nearest ancestor holding a snapshot plus
the writes of every checkpoint since. HostSaver keeps only the latest checkpoints, so each
checkpoint carries that history (seed and writes up to its parent) with it and is whole on
its own, in this process and when the host hands it back to another.
"""

from __future__ import annotations

import inspect
import logging
import random
import struct
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from agentengine_runner.emitter import RunCheckpoints, run_checkpoints
from agentengine_runner.runner import Checkpoint as HostCheckpoint
from agentengine_runner.runner import CheckpointWrite as HostWrite
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)

log = logging.getLogger("agentengine_runner.adapters")

# Checkpoints kept per thread and namespace: the latest is what a turn resumes from; the
# one before serves a parent lookup within a step. Older ones live nowhere: time travel
# through a thread's history is not offered.
KEEP_PER_NAMESPACE = 2
# Threads held in memory; the least recently used ones are dropped (the host still has
# them and hands them back when a turn needs one).
MAX_THREADS = 512

_Entry = tuple[bytes, str]  # (packed checkpoint + metadata [+ delta history], parent id)
_Write = tuple[str, str, bytes, str]  # (task id, channel, packed value, task path)


def _pack(*parts: bytes) -> bytes:
    return b"".join(struct.pack(">I", len(p)) + p for p in parts)


def _unpack(data: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        (n,) = struct.unpack_from(">I", data, i)
        out.append(data[i + 4 : i + 4 + n])
        i += 4 + n
    return out


def _delta_snapshot_type() -> type | None:
    try:  # langgraph-checkpoint with DeltaChannel support
        from langgraph.checkpoint.serde.types import _DeltaSnapshot
    except ImportError:
        return None
    return _DeltaSnapshot


def _delta_names(checkpoint: Checkpoint, metadata: Any, snapshot_type: type | None) -> set[str]:
    """Channels of checkpoint that are delta channels, as far as the checkpoint shows: those
    with counters since their last snapshot, and those holding a snapshot."""
    names: set[str] = set()
    counters = metadata.get("counters_since_delta_snapshot") if isinstance(metadata, dict) else None
    if isinstance(counters, dict):
        names.update(str(k) for k in counters)
    if snapshot_type is not None:
        names.update(k for k, v in checkpoint["channel_values"].items() if isinstance(v, snapshot_type))
    return names


def _metadata(config: dict[str, Any], metadata: CheckpointMetadata) -> Any:
    try:  # langgraph-checkpoint >= 2.0.x; older versions store the metadata as given
        from langgraph.checkpoint.base import get_checkpoint_metadata
    except ImportError:
        return metadata
    return get_checkpoint_metadata(config, metadata)  # type: ignore[arg-type]


def _sort_key(w: _Write, idx: int) -> Any:
    try:
        from langgraph.checkpoint.base import writes_sort_key
    except ImportError:
        return (w[3], w[0], idx)
    return writes_sort_key(w[3], w[0], idx)


class _Thread:
    """One thread's checkpoints: namespace → checkpoint id → entry, and the writes."""

    def __init__(self) -> None:
        self.checkpoints: dict[str, OrderedDict[str, _Entry]] = {}
        self.writes: dict[tuple[str, str], dict[tuple[str, int], _Write]] = {}

    def latest_id(self, ns: str) -> str:
        saved = self.checkpoints.get(ns)
        return max(saved) if saved else ""

    def put(self, ns: str, checkpoint_id: str, entry: _Entry) -> None:
        saved = self.checkpoints.setdefault(ns, OrderedDict())
        saved[checkpoint_id] = entry
        while len(saved) > KEEP_PER_NAMESPACE:
            old = min(saved)
            del saved[old]
            self.writes.pop((ns, old), None)


class HostSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer whose durable copy is kept by the agentengine host."""

    def __init__(self) -> None:
        super().__init__()
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        self._lock = threading.Lock()
        self._snapshot_type = _delta_snapshot_type()
        # Delta channel names seen so far (a checkpoint right after a snapshot shows none).
        self._delta: set[str] = set()

    # -- host exchange -----------------------------------------------------------------

    def _thread(self, thread_id: str) -> _Thread:
        t = self._threads.get(thread_id)
        if t is None:
            t = self._threads[thread_id] = _Thread()
            while len(self._threads) > MAX_THREADS:
                self._threads.popitem(last=False)
        else:
            self._threads.move_to_end(thread_id)
        return t

    def _take_from_host(self, thread_id: str) -> None:
        """Adopts the host's checkpoints of the thread that are newer than ours (the
        first time this run looks at the thread). The caller holds the lock."""
        exchange = run_checkpoints()
        if exchange is None or not exchange.restored:
            return
        taken = exchange.adopted
        for cp in exchange.restored:
            key = (cp.thread_id, cp.namespace)
            if cp.thread_id != thread_id or key in taken:
                continue
            taken.add(key)
            t = self._thread(thread_id)
            if cp.checkpoint_id <= t.latest_id(cp.namespace):
                continue
            t.put(cp.namespace, cp.checkpoint_id, (cp.data, cp.parent_id))
            t.writes[(cp.namespace, cp.checkpoint_id)] = {
                (w.task_id, w.index): (w.task_id, w.channel, w.data, w.task_path) for w in cp.writes
            }
            log.debug("checkpoint %s of thread %s restored from the host", cp.checkpoint_id, thread_id)

    @staticmethod
    def _exchange() -> RunCheckpoints | None:
        return run_checkpoints()

    # -- reads -------------------------------------------------------------------------

    def _pending(self, t: _Thread, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        writes = t.writes.get((ns, checkpoint_id), {})
        ordered = sorted(writes.items(), key=lambda kv: _sort_key(kv[1], kv[0][1]))
        pending = []
        for _, (task_id, channel, packed, _path) in ordered:
            vtype, vblob = _unpack(packed)
            pending.append((task_id, channel, self.serde.loads_typed((vtype.decode(), vblob))))
        return pending

    def _carried(self, parts: list[bytes]) -> dict[str, dict[str, Any]]:
        """The delta history a checkpoint carries: channel → {"writes": [...], "seed"?}."""
        if len(parts) < 6:
            return {}
        loaded = self.serde.loads_typed((parts[4].decode(), parts[5]))
        out: dict[str, dict[str, Any]] = {}
        for ch, entry in loaded.items():
            item: dict[str, Any] = {"writes": [tuple(w) for w in entry.get("writes", ())]}
            if "seed" in entry:
                item["seed"] = entry["seed"]
            out[ch] = item
        return out

    def _tuple(self, thread_id: str, ns: str, checkpoint_id: str, t: _Thread) -> CheckpointTuple | None:
        saved = t.checkpoints.get(ns)
        entry = saved.get(checkpoint_id) if saved is not None else None
        if entry is None:
            return None
        data, parent = entry
        ctype, cblob, mtype, mblob = _unpack(data)[:4]
        return CheckpointTuple(
            config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}},
            checkpoint=self.serde.loads_typed((ctype.decode(), cblob)),
            metadata=self.serde.loads_typed((mtype.decode(), mblob)),
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}}
                if parent
                else None
            ),
            pending_writes=self._pending(t, ns, checkpoint_id),
        )

    def _history(
        self, t: _Thread, ns: str, start_id: str, channels: set[str]
    ) -> dict[str, dict[str, Any]]:
        """The delta history of channels up to and including checkpoint start_id and its
        writes, walking parents until a stored value (the seed) or a carried history; a
        channel with no seed found starts empty (LangGraph's contract)."""
        newest_first: dict[str, list[Any]] = {c: [] for c in channels}
        seeds: dict[str, Any] = {}
        remaining = set(channels)
        cursor = start_id
        while cursor and remaining:
            saved = t.checkpoints.get(ns)
            entry = saved.get(cursor) if saved is not None else None
            if entry is None:
                break
            data, parent = entry
            parts = _unpack(data)
            for write in reversed(self._pending(t, ns, cursor)):
                if write[1] in remaining:
                    newest_first[write[1]].append(write)
            values = self.serde.loads_typed((parts[0].decode(), parts[1]))["channel_values"]
            carried = self._carried(parts)
            for ch in list(remaining):
                if ch in values:
                    seeds[ch] = values[ch]
                elif ch in carried:
                    newest_first[ch].extend(reversed(carried[ch]["writes"]))
                    if "seed" in carried[ch]:
                        seeds[ch] = carried[ch]["seed"]
                else:
                    continue
                remaining.discard(ch)
            cursor = parent
        out: dict[str, dict[str, Any]] = {}
        for ch in channels:
            item: dict[str, Any] = {"writes": list(reversed(newest_first[ch]))}
            if ch in seeds:
                item["seed"] = seeds[ch]
            out[ch] = item
        return out

    def get_delta_channel_history(  # type: ignore[override]
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> dict[str, Any]:
        """Per channel, the seed and writes LangGraph replays to rebuild a delta channel at
        the checkpoint of config: what the checkpoint carries, else a walk of its parents."""
        if not channels:
            return {}
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        with self._lock:
            self._take_from_host(thread_id)
            t = self._threads.get(thread_id)
            checkpoint_id = (get_checkpoint_id(config) or t.latest_id(ns)) if t else ""  # type: ignore[arg-type]
            saved = t.checkpoints.get(ns) if t else None
            entry = saved.get(checkpoint_id) if saved is not None and checkpoint_id else None
            if t is None or entry is None:
                return {ch: {"writes": []} for ch in channels}
            data, parent = entry
            carried = self._carried(_unpack(data))
            rest = {ch for ch in channels if ch not in carried}
            walked = self._history(t, ns, parent, rest) if rest else {}
            return {ch: carried[ch] if ch in carried else walked[ch] for ch in channels}

    async def aget_delta_channel_history(  # type: ignore[override]
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> dict[str, Any]:
        return self.get_delta_channel_history(config=config, channels=channels)

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:  # type: ignore[override]
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        with self._lock:
            self._take_from_host(thread_id)
            t = self._threads.get(thread_id)
            if t is None:
                return None
            checkpoint_id = get_checkpoint_id(config) or t.latest_id(ns)  # type: ignore[arg-type]
            if not checkpoint_id:
                return None
            return self._tuple(thread_id, ns, checkpoint_id, t)

    def list(  # type: ignore[override]
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        with self._lock:
            if config is not None:
                self._take_from_host(str(config["configurable"]["thread_id"]))
                threads = [str(config["configurable"]["thread_id"])]
            else:
                threads = list(self._threads)
            want_ns = config["configurable"].get("checkpoint_ns") if config else None
            want_id = get_checkpoint_id(config) if config else None  # type: ignore[arg-type]
            before_id = get_checkpoint_id(before) if before else None  # type: ignore[arg-type]
            found: list[CheckpointTuple] = []
            for thread_id in threads:
                t = self._threads.get(thread_id)
                if t is None:
                    continue
                for ns, saved in t.checkpoints.items():
                    if want_ns is not None and ns != want_ns:
                        continue
                    for checkpoint_id in sorted(saved, reverse=True):
                        if want_id and checkpoint_id != want_id:
                            continue
                        if before_id and checkpoint_id >= before_id:
                            continue
                        tup = self._tuple(thread_id, ns, checkpoint_id, t)
                        if tup is None:
                            continue
                        if filter and not all(tup.metadata.get(k) == v for k, v in filter.items()):
                            continue
                        found.append(tup)
        for i, tup in enumerate(found):
            if limit is not None and i >= limit:
                break
            yield tup

    # -- writes ------------------------------------------------------------------------

    def put(  # type: ignore[override]
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        parent = config["configurable"].get("checkpoint_id") or ""
        ctype, cblob = self.serde.dumps_typed(checkpoint)
        stored_metadata = _metadata(config, metadata)
        mtype, mblob = self.serde.dumps_typed(stored_metadata)
        parts = [ctype.encode(), cblob, mtype.encode(), mblob]
        missing = {
            ch
            for ch in _delta_names(checkpoint, stored_metadata, self._snapshot_type) | self._delta
            if ch in checkpoint["channel_versions"] and ch not in checkpoint["channel_values"]
        }
        with self._lock:
            self._take_from_host(thread_id)
            t = self._thread(thread_id)
            self._delta |= _delta_names(checkpoint, stored_metadata, self._snapshot_type)
            if missing and parent:
                # The parent and its writes are here (LangGraph saves a step's writes
                # before the checkpoint after it): carry the history they make.
                htype, hblob = self.serde.dumps_typed(self._history(t, ns, parent, missing))
                parts += [htype.encode(), hblob]
            data = _pack(*parts)
            t.put(ns, checkpoint["id"], (data, parent))
        exchange = self._exchange()
        if exchange is not None:
            exchange.save(HostCheckpoint(thread_id, ns, checkpoint["id"], parent, data))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def put_writes(  # type: ignore[override]
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        checkpoint_id = config["configurable"]["checkpoint_id"]
        saved: list[HostWrite] = []
        with self._lock:
            self._take_from_host(thread_id)
            stored = self._thread(thread_id).writes.setdefault((ns, checkpoint_id), {})
            for i, (channel, value) in enumerate(writes):
                idx = WRITES_IDX_MAP.get(channel, i)
                if idx >= 0 and (task_id, idx) in stored:
                    continue  # a task's regular writes are saved once
                vtype, vblob = self.serde.dumps_typed(value)
                packed = _pack(vtype.encode(), vblob)
                stored[(task_id, idx)] = (task_id, channel, packed, task_path)
                saved.append(HostWrite(thread_id, ns, checkpoint_id, task_id, idx, channel, task_path, packed))
        exchange = self._exchange()
        if exchange is not None:
            for w in saved:
                exchange.save_write(w)

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            self._threads.pop(str(thread_id), None)
        exchange = self._exchange()
        if exchange is not None:
            exchange.delete_thread(str(thread_id))

    def get_next_version(self, current: str | int | None, channel: Any = None) -> str:
        # InMemorySaver's scheme: an increasing integer and a random tie breaker.
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # -- async: everything is in memory, so the sync methods serve directly ---------------

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:  # type: ignore[override]
        return self.get_tuple(config)

    async def alist(  # type: ignore[override]
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(  # type: ignore[override]
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(  # type: ignore[override]
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)


# LangGraph reads (a)put_writes' signature at every run, to see whether it takes
# task_path; inspect.signature returns a function's __signature__ when it has one, so
# the signature is worked out once here instead (9.8 → 3.3 µs a run, measured alone).
_methods: tuple[Any, ...] = (HostSaver.put_writes, HostSaver.aput_writes)
for _method in _methods:
    _method.__signature__ = inspect.signature(_method)


class DurableCheckpointer:
    """The runner process's checkpointer for the bridges: one HostSaver."""

    def __init__(self) -> None:
        self._saver: HostSaver | None = None

    async def get(self) -> HostSaver:
        if self._saver is None:
            self._saver = HostSaver()
        return self._saver

    async def aclose(self) -> None:
        self._saver = None


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
