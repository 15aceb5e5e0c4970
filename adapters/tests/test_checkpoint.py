"""HostSaver: checkpoints kept by the host survive the runner process.

The host is played by conftest.reduce, which keeps what the Go host keeps of a run's
checkpoint events.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner.emitter import Emitter, RunCheckpoints, checkpoint_scope
from agentengine_runner.runner import Checkpoint
from conftest import reduce
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt

from agentengine_adapters.checkpoint import DurableCheckpointer, HostSaver


class S(TypedDict):
    query: str
    result: str


def deploy(state: S) -> dict[str, str]:
    answer = interrupt({"name": "deploy", "target": state["query"]})
    return {"result": f"{state['query']}: deployed={answer}"}


def inner_graph() -> Any:
    b = StateGraph(S)
    b.add_node("deploy", deploy)
    b.add_edge(START, "deploy")
    return b.compile()


def outer_builder() -> Any:
    """The interrupt sits in a subgraph: its checkpoint has a namespace of its own."""
    b = StateGraph(S)
    b.add_node("sub", inner_graph())
    b.add_edge(START, "sub")
    return b


async def turn(saver: HostSaver, graph_in: Any, restored: tuple[Checkpoint, ...], thread: str) -> tuple[Any, list[pb.RunEvent]]:
    events: list[pb.RunEvent] = []

    async def sink(ev: pb.RunEvent) -> None:
        events.append(ev)

    emit = Emitter(sink)
    graph = outer_builder().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}}
    exchange = RunCheckpoints(emit, restored)
    with checkpoint_scope(exchange):
        result = await graph.ainvoke(graph_in, config)
    await exchange.flush()
    return result, events


def test_an_interrupt_in_a_subgraph_resumes_in_a_new_process() -> None:
    async def scenario() -> None:
        first = HostSaver()
        result, events = await turn(first, {"query": "prod"}, (), "t1")
        assert "__interrupt__" in result
        kinds = {e.WhichOneof("event") for e in events}
        assert kinds == {"checkpoint", "checkpoint_write"}
        handed = reduce(events, [])
        assert {c.namespace for c in handed} >= {""} and any(c.namespace for c in handed)
        assert any(w.channel == "__interrupt__" for c in handed for w in c.writes)

        # A new process: nothing in memory but what the host hands it.
        second = HostSaver()
        result, events = await turn(second, Command(resume="yes"), handed, "t1")
        assert result["result"] == "prod: deployed=yes"
        assert any(e.WhichOneof("event") == "checkpoint" for e in events)

        # Without the host's checkpoints a new process finds nothing to resume.
        graph = outer_builder().compile(checkpointer=HostSaver())
        state = await graph.aget_state({"configurable": {"thread_id": "t1"}})
        assert not state.next and not state.interrupts

    asyncio.run(scenario())


def test_the_runner_keeps_its_newer_state_over_an_older_host_copy() -> None:
    async def scenario() -> None:
        saver = HostSaver()
        _, events = await turn(saver, {"query": "a"}, (), "t1")
        old = reduce(events, [])
        _, _ = await turn(saver, Command(resume="one"), old, "t1")
        # The next turn is handed the older copy (say, the host lost the last save): the
        # thread's newer state is kept, so the finished run stays finished.
        result, _ = await turn(saver, {"query": "b"}, old, "t1")
        assert "__interrupt__" in result and result["query"] == "b"

    asyncio.run(scenario())


def test_without_a_run_the_saver_is_a_plain_in_memory_checkpointer() -> None:
    async def scenario() -> None:
        saver = await DurableCheckpointer().get()
        graph = outer_builder().compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"query": "x"}, config)
        result = await graph.ainvoke(Command(resume=1), config)
        assert result["result"] == "x: deployed=1"
        history = [s async for s in graph.aget_state_history(config)]
        assert history and history[0].values["result"] == "x: deployed=1"

    asyncio.run(scenario())


def test_a_deleted_thread_is_deleted_at_the_host_too() -> None:
    async def scenario() -> None:
        saver = HostSaver()
        events: list[pb.RunEvent] = []

        async def sink(ev: pb.RunEvent) -> None:
            events.append(ev)

        graph = outer_builder().compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "run-1"}}
        # A thread started and finished in one run: the host never had it, nothing to send.
        exchange = RunCheckpoints(Emitter(sink))
        with checkpoint_scope(exchange):
            await graph.ainvoke({"query": "x"}, config)
            await saver.adelete_thread("run-1")
        await exchange.flush()
        assert events == []
        assert await saver.aget_tuple(config) is None

        # A thread the host keeps (handed to this run), finished here: the host drops it.
        _, first = await turn(HostSaver(), {"query": "y"}, (), "run-1")
        exchange = RunCheckpoints(Emitter(sink), reduce(first, []))
        with checkpoint_scope(exchange):
            await graph.ainvoke(Command(resume="ok"), config)
            await saver.adelete_thread("run-1")
        await exchange.flush()
        assert [e.WhichOneof("event") for e in events] == ["checkpoint_delete"]
        assert events[0].checkpoint_delete.thread_id == "run-1"

    asyncio.run(scenario())


def test_the_savers_write_signature_is_precomputed_and_its_own() -> None:
    """LangGraph reads inspect.signature of (a)put_writes at every run (whether it takes
    task_path): it is precomputed, and is the methods' own."""
    import inspect

    from agentengine_adapters.checkpoint import HostSaver

    saver = HostSaver.__new__(HostSaver)
    for method in (saver.put_writes, saver.aput_writes):
        assert "__signature__" in vars(method.__func__)
        assert list(inspect.signature(method).parameters) == ["config", "writes", "task_id", "task_path"]
