"""LangGraph's own client, langgraph-sdk, against agentengine's LangGraph server API.

The server serves examples/langgraph-chat (its offline model: "weather in X" calls
get_weather, "send an email to X" calls send_email, which waits for approval through
interrupt(); anything else is answered "You said: ..."), run by the test interpreter.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError
from langgraph_sdk.schema import Command

from conformance_fixtures import agentengine_bin  # noqa: F401 (fixture)
from conformance_server import REPO_ROOT, Server, start_server, stop_server

GRAPH = "langgraph-chat"
# A graph whose node waits until its project holds a file named "release": a run of it is in
# progress for as long as a test needs (to cancel it).
BLOCKER = "lg-blocker"
BLOCKER_SOURCE = """
import asyncio
from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

RELEASE = Path(__file__).parent / "release"


async def wait(state: MessagesState) -> dict:
    while not RELEASE.exists():
        await asyncio.sleep(0.02)
    return {"messages": [AIMessage("released")]}


builder = StateGraph(MessagesState)
builder.add_node("wait", wait)
builder.add_edge(START, "wait")
graph = builder.compile()
"""

# A graph with state beyond messages: topic (an input channel), visits (summed over the
# thread's runs) and a subgraph node, for the thread state's channels and the forwarded
# stream modes.
CHANNELS = "lg-channels"
CHANNELS_SOURCE = """
import operator
from typing import Annotated

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt


class State(MessagesState):
    topic: str
    visits: Annotated[int, operator.add]


def plan(state: State) -> dict:
    if state.get("topic") == "review":  # a reviewer picks the topic
        return {"visits": 1, "topic": interrupt("which topic?")}
    return {"visits": 1}


class Inner(MessagesState):
    topic: str


def answer(state: Inner) -> dict:
    asked = sum(1 for m in state["messages"] if m.type == "human")
    return {"messages": [AIMessage(f"{state.get('topic', 'nothing')} #{asked}")]}


# The subgraph's own state: visits is the parent's alone (a subgraph returning it would
# add it again).
inner = StateGraph(Inner)
inner.add_node("answer", answer)
inner.add_edge(START, "answer")

builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("inner", inner.compile())
builder.add_edge(START, "plan")
builder.add_edge("plan", "inner")
graph = builder.compile()
"""

# A graph that answers with what the run's config.configurable and context say.
CONFIG = "lg-config"
CONFIG_SOURCE = """
from dataclasses import dataclass

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime


@dataclass
class Ctx:
    tone: str = "plain"


def answer(state: MessagesState, config: RunnableConfig, runtime: Runtime[Ctx]) -> dict:
    who = config["configurable"].get("who", "nobody")
    return {"messages": [AIMessage(f"{runtime.context.tone} hello to {who}")]}


builder = StateGraph(MessagesState, context_schema=Ctx)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
graph = builder.compile()
"""


def write_project(root: Path, name: str, source: str) -> Path:
    project = root / name
    project.mkdir()
    (project / "agent.py").write_text(source)
    (project / "agentengine.yaml").write_text(
        f"name: {name}\nframework: langgraph\nentry_point: agent.py\nagent_variable: graph\npython: {sys.executable}\n"
    )
    return project


@pytest.fixture(scope="module")
def channels_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("lg"), CHANNELS, CHANNELS_SOURCE)


@pytest.fixture(scope="module")
def config_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("lg"), CONFIG, CONFIG_SOURCE)


@pytest.fixture(scope="module")
def blocker_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    blocker = tmp_path_factory.mktemp("lg") / BLOCKER
    blocker.mkdir()
    (blocker / "agent.py").write_text(BLOCKER_SOURCE)
    (blocker / "agentengine.yaml").write_text(
        f"name: {BLOCKER}\nframework: langgraph\nentry_point: agent.py\nagent_variable: graph\npython: {sys.executable}\n"
    )
    return blocker


@pytest.fixture(scope="module")
def lg_server(
    agentengine_bin: str,  # noqa: F811
    blocker_dir: Path,
    channels_dir: Path,
    config_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    project = tmp_path_factory.mktemp("lg") / GRAPH
    shutil.copytree(
        REPO_ROOT / "examples" / GRAPH,
        project,
        ignore=shutil.ignore_patterns(".venv", "venv", ".agentengine", "__pycache__"),
    )
    # The test interpreter has the example's packages: no environment is set up.
    with open(Path(project) / "agentengine.yaml", "a") as f:
        f.write(f"\npython: {sys.executable}\n")
    srv = start_server(agentengine_bin, [str(project), str(blocker_dir), str(channels_dir), str(config_dir)])
    try:
        yield srv
    finally:
        stop_server(srv.proc)


@pytest.fixture(scope="module")
def client(lg_server: Server) -> Any:
    return get_sync_client(url=lg_server.origin, api_key=None, timeout=60.0)


def texts(values: Any) -> list[tuple[str, str]]:
    return [(m["type"], m["content"] if isinstance(m["content"], str) else "") for m in values["messages"]]


def call_id(messages_seen: int, question: str, tool: str) -> str:
    """The offline model's tool call id: it depends on how many messages it was given."""
    return "call_" + hashlib.sha1(f"{messages_seen}:{question}:{tool}".encode()).hexdigest()[:12]


def test_assistants(client: Any) -> None:
    found = client.assistants.search()
    assert [a["assistant_id"] for a in found] == [GRAPH, BLOCKER, CHANNELS, CONFIG]
    a = client.assistants.get(GRAPH)
    assert a["graph_id"] == GRAPH and a["version"] == 1
    with pytest.raises(NotFoundError):
        client.assistants.get("nope")


def test_assistant_graph_schemas_and_subgraphs(client: Any) -> None:
    """What the runner's loaded graph says of itself, as LangGraph's server computes it."""
    g = client.assistants.get_graph(GRAPH)
    assert {n["id"] for n in g["nodes"]} >= {"__start__", "model", "approval", "tools", "__end__"}
    assert {"source": "__start__", "target": "model"}.items() <= next(
        e for e in g["edges"] if e["source"] == "__start__"
    ).items()
    # xray draws a subgraph's own nodes inside the node that runs it.
    flat = {n["id"] for n in client.assistants.get_graph(CHANNELS)["nodes"]}
    deep = {n["id"] for n in client.assistants.get_graph(CHANNELS, xray=True)["nodes"]}
    assert "inner" in flat and "inner:answer" in deep and "inner:answer" not in flat

    s = client.assistants.get_schemas(CHANNELS)
    assert s["graph_id"] == CHANNELS
    assert {"messages", "topic", "visits"} <= set(s["state_schema"]["properties"])
    assert "messages" in s["input_schema"]["properties"]
    assert set(s) == {"graph_id", "input_schema", "output_schema", "state_schema", "config_schema", "context_schema"}

    subs = client.assistants.get_subgraphs(CHANNELS)
    assert list(subs) == ["inner"] and "messages" in subs["inner"]["state_schema"]["properties"]
    assert client.assistants.get_subgraphs(GRAPH) == {}
    with pytest.raises(NotFoundError):
        client.assistants.get_graph("nope")


def test_config_and_context_reach_the_graph(client: Any) -> None:
    hi = {"messages": [{"role": "user", "content": "hi"}]}
    out = client.runs.wait(None, CONFIG, input=hi, config={"configurable": {"who": "ann"}}, context={"tone": "warm"})
    assert out["messages"][-1]["content"] == "warm hello to ann"
    thread = client.threads.create(graph_id=CONFIG)
    out = client.runs.wait(thread["thread_id"], CONFIG, input=hi, config={"configurable": {"who": "bo", "thread_id": "x"}})
    assert out["messages"][-1]["content"] == "plain hello to bo"  # the runtime keeps its own thread_id
    assert client.threads.get_state(thread["thread_id"])["values"]["messages"][-1]["content"] == "plain hello to bo"


def test_stream_modes_and_a_second_run(client: Any) -> None:
    thread = client.threads.create(metadata={"suite": "sdk", "case": "stream"})
    parts = list(
        client.runs.stream(
            thread["thread_id"], GRAPH, input={"messages": [{"role": "user", "content": "hello"}]},
            stream_mode=["values", "messages-tuple", "updates"],
        )
    )
    assert parts[0].event == "metadata" and parts[0].data["run_id"]
    assert parts[-1].event == "values"
    kinds = {p.event for p in parts}
    assert {"values", "messages", "updates"} <= kinds, kinds
    tokens = [p.data[0]["content"] for p in parts if p.event == "messages" and p.data[0]["type"] == "AIMessageChunk"]
    assert len(tokens) > 1 and "".join(tokens) == "You said: hello"
    assert all(p.data[1]["thread_id"] == thread["thread_id"] for p in parts if p.event == "messages")
    # updates: the graph's own nodes, as the LangGraph bridge reports them.
    updates = [p.data for p in parts if p.event == "updates"]
    assert updates and "model" in updates[0], updates
    assert updates[0]["model"]["messages"][0]["content"] == "You said: hello"
    values = [p.data for p in parts if p.event == "values"]
    assert texts(values[0]) == [("human", "hello")]
    assert texts(values[-1]) == [("human", "hello"), ("ai", "You said: hello")]

    # The second run continues the thread: the model is given all three messages.
    question = "what is the weather in Paris"
    out = client.runs.wait(thread["thread_id"], GRAPH, input={"messages": [{"role": "user", "content": question}]})
    msgs = out["messages"]
    assert [m["type"] for m in msgs] == ["human", "ai", "human", "ai", "tool", "ai"]
    assert msgs[3]["tool_calls"][0]["name"] == "get_weather"
    assert msgs[3]["tool_calls"][0]["id"] == call_id(3, question, "get_weather")
    assert "sunny" in msgs[4]["content"] and msgs[4]["tool_call_id"] == msgs[3]["tool_calls"][0]["id"]
    assert msgs[5]["content"].startswith("Done.")

    state = client.threads.get_state(thread["thread_id"])
    assert state["values"] == out and state["next"] == [] and state["interrupts"] == []
    history = client.threads.get_history(thread["thread_id"])
    assert len(history) == 2
    assert history[0]["checkpoint"] == state["checkpoint"]
    assert texts(history[1]["values"]) == texts(values[-1])
    runs = client.runs.list(thread["thread_id"])
    assert [r["status"] for r in runs] == ["success", "success"]
    found = client.threads.search(metadata={"suite": "sdk", "case": "stream"})
    assert [t["thread_id"] for t in found] == [thread["thread_id"]]
    assert found[0]["status"] == "idle"


def test_interrupt_resumed_with_command(client: Any) -> None:
    thread = client.threads.create(metadata={"suite": "sdk", "case": "interrupt"})
    tid = thread["thread_id"]
    out = client.runs.wait(tid, GRAPH, input={"messages": [{"role": "user", "content": "send an email to bob"}]})
    (pending,) = out["__interrupt__"]
    assert pending["value"]["name"] == "send_email" and pending["value"]["args"]["to"] == "bob@example.com"
    assert set(out) == {"messages", "__interrupt__"} and out["messages"][-1]["tool_calls"][0]["name"] == "send_email"
    t = client.threads.get(tid)
    assert t["status"] == "interrupted"
    assert [i["id"] for i in next(iter(t["interrupts"].values()))] == [pending["id"]]
    state = client.threads.get_state(tid)
    assert state["interrupts"][0]["value"] == pending["value"]
    assert state["next"] == ["approval"] and state["tasks"][0]["name"] == "approval"
    assert [x["thread_id"] for x in client.threads.search(status="interrupted", metadata={"case": "interrupt"})] == [tid]

    # interrupt() returns the resume value as sent: here a refusal with a reason.
    parts = list(
        client.runs.stream(tid, GRAPH, command=Command(resume={"approve": False, "reason": "not today"}), stream_mode="values")
    )
    final = parts[-1].data["messages"]
    assert any(m["type"] == "tool" and "not today" in m["content"] for m in final), final
    assert client.threads.get(tid)["status"] == "idle"

    # A second email, streamed with values only (the interrupt comes as a values part, as
    # useStream reads it), approved with a bare True (interrupt() gets True).
    parts = list(client.runs.stream(tid, GRAPH, input={"messages": [{"role": "user", "content": "send an email to carol"}]}))
    assert parts[-1].event == "values"
    assert parts[-1].data["__interrupt__"][0]["value"]["args"]["to"] == "carol@example.com"
    out = client.runs.wait(tid, GRAPH, command=Command(resume=True))
    assert any(m["type"] == "tool" and "Email sent to carol@example.com" in m["content"] for m in out["messages"])
    # runs.wait raises httpx's error (the SDK's typed errors come from its other calls).
    with pytest.raises(httpx.HTTPStatusError) as err:
        client.runs.wait(tid, GRAPH, command=Command(resume=True))
    assert err.value.response.status_code == 409
    assert "no pending interrupt" in err.value.response.json()["detail"]


def test_background_run_join_and_join_stream(client: Any) -> None:
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], GRAPH, input={"messages": [{"role": "user", "content": "joined"}]})
    assert run["thread_id"] == thread["thread_id"] and run["status"] in ("pending", "running", "success")
    out = client.runs.join(thread["thread_id"], run["run_id"])
    assert texts(out)[-1] == ("ai", "You said: joined")
    # The stream of a finished run is replayed from its journal.
    parts = list(client.runs.join_stream(thread["thread_id"], run["run_id"], stream_mode="values"))
    assert parts[0].event == "metadata" and parts[-1].event == "values"
    assert texts(parts[-1].data)[-1] == ("ai", "You said: joined")
    assert client.runs.get(thread["thread_id"], run["run_id"])["status"] == "success"
    # A client that dropped the stream joins again from the last event id it saw.
    modes = ["values", "messages-tuple"]
    seen = list(client.runs.join_stream(thread["thread_id"], run["run_id"], stream_mode=modes))
    ids = sorted({int(p.id) for p in seen if p.id})
    assert len(ids) >= 2, seen
    rest = list(client.runs.join_stream(thread["thread_id"], run["run_id"], stream_mode=modes, last_event_id=str(ids[0])))
    assert [(p.event, p.data) for p in rest] == [(p.event, p.data) for p in seen if p.id and int(p.id) > ids[0]]
    assert rest and rest[0].event != "metadata"


def test_stateless_runs(client: Any) -> None:
    out = client.runs.wait(None, GRAPH, input={"messages": [{"role": "user", "content": "no thread"}]})
    assert texts(out) == [("human", "no thread"), ("ai", "You said: no thread")]
    parts = list(client.runs.stream(None, GRAPH, input={"messages": [{"role": "user", "content": "streamed"}]}, stream_mode="messages-tuple"))
    assert "".join(p.data[0]["content"] for p in parts if p.event == "messages") == "You said: streamed"


def test_errors(client: Any) -> None:
    with pytest.raises(NotFoundError):
        client.threads.get("no-such-thread")
    thread = client.threads.create()
    with pytest.raises(UnprocessableEntityError):
        client.runs.create(thread["thread_id"], GRAPH, input={"messages": []})
    with pytest.raises(NotFoundError):
        client.runs.create(thread["thread_id"], "nope", input={"messages": [{"role": "user", "content": "x"}]})
    with pytest.raises(ConflictError):
        client.threads.create(thread_id=thread["thread_id"])
    client.threads.delete(thread["thread_id"])
    with pytest.raises(NotFoundError):
        client.threads.get_state(thread["thread_id"])


def test_remote_graph_as_a_subgraph(lg_server: Server) -> None:
    """RemoteGraph pointed at agentengine: a node of another graph, invoked and streamed."""
    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.pregel.remote import RemoteGraph

    remote = RemoteGraph(GRAPH, url=lg_server.origin, api_key=None)
    out = remote.invoke({"messages": [{"role": "user", "content": "direct"}]})
    assert texts(out)[-1] == ("ai", "You said: direct")

    builder = StateGraph(MessagesState)
    builder.add_node("remote", remote)
    builder.add_edge(START, "remote")
    parent = builder.compile()
    result = parent.invoke({"messages": [HumanMessage("from a parent graph", id="parent-msg-1")]})
    # The remote thread keeps the parent's message id: the parent merges, not duplicates.
    assert [(m.type, m.text) for m in result["messages"]] == [
        ("human", "from a parent graph"),
        ("ai", "You said: from a parent graph"),
    ]
    updates = list(parent.stream({"messages": [HumanMessage("streamed parent", id="parent-msg-2")]}, stream_mode="updates"))
    # The node's update is the remote values as JSON (RemoteGraph returns them unparsed).
    assert updates[-1]["remote"]["messages"][-1]["content"] == "You said: streamed parent"
    # With a thread id in its config, RemoteGraph runs on that thread (created on first use).
    config = {"configurable": {"thread_id": "remote-graph-thread"}}
    remote.invoke({"messages": [{"role": "user", "content": "first"}]}, config=config)
    again = remote.invoke({"messages": [{"role": "user", "content": "second"}]}, config=config)
    assert texts(again) == [("human", "first"), ("ai", "You said: first"), ("human", "second"), ("ai", "You said: second")]
    assert remote.get_state(config).values == again
    tokens = [
        chunk["content"]
        for chunk, _meta in remote.stream({"messages": [{"role": "user", "content": "token by token"}]}, stream_mode="messages")
    ]
    assert "".join(tokens) == "You said: token by token" and len(tokens) > 1


def test_cancel_and_multitask(client: Any, blocker_dir: Path) -> None:
    thread = client.threads.create(graph_id=BLOCKER)
    tid = thread["thread_id"]
    run = client.runs.create(tid, BLOCKER, input={"messages": [{"role": "user", "content": "wait"}]})
    deadline = time.monotonic() + 30
    while client.threads.get(tid)["status"] != "busy":
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.02)
    # A second run is refused while the first is in progress (multitask_strategy reject).
    with pytest.raises(ConflictError):
        client.runs.create(tid, BLOCKER, input={"messages": [{"role": "user", "content": "again"}]})
    client.runs.cancel(tid, run["run_id"], wait=True)
    assert client.runs.get(tid, run["run_id"])["status"] == "interrupted"
    assert client.threads.get(tid)["status"] == "idle"
    # interrupt: the run in progress is cancelled for the new one, which completes once
    # the graph is let go.
    first = client.runs.create(tid, BLOCKER, input={"messages": [{"role": "user", "content": "one"}]})
    second = client.runs.create(tid, BLOCKER, input={"messages": [{"role": "user", "content": "two"}]}, multitask_strategy="interrupt")
    assert client.runs.get(tid, first["run_id"])["status"] == "interrupted"
    # rollback: the run in progress is cancelled and removed from the thread.
    third = client.runs.create(tid, BLOCKER, input={"messages": [{"role": "user", "content": "three"}]}, multitask_strategy="rollback")
    with pytest.raises(NotFoundError):
        client.runs.get(tid, second["run_id"])
    (blocker_dir / "release").touch()
    out = client.runs.join(tid, third["run_id"])
    assert texts(out)[-2:] == [("human", "three"), ("ai", "released")]
    assert ("human", "two") not in texts(out)
    assert [r["status"] for r in client.runs.list(tid)] == ["success", "interrupted", "interrupted"]


def test_state_channels(client: Any) -> None:
    """Every channel of the graph's state is the thread's, carried from run to run."""
    tid = client.threads.create(graph_id=CHANNELS)["thread_id"]
    out = client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "hi"}], "topic": "cats"})
    assert out["topic"] == "cats" and out["visits"] == 1
    assert texts(out) == [("human", "hi"), ("ai", "cats #1")]
    # The next run starts from the thread's channels: visits adds up, topic stays.
    out = client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "again"}]})
    assert (out["topic"], out["visits"], texts(out)[-1]) == ("cats", 2, ("ai", "cats #2")), texts(out)
    state = client.threads.get_state(tid)
    assert state["values"] == out
    history = client.threads.get_history(tid)
    assert [h["values"]["visits"] for h in history] == [2, 1]
    assert client.threads.get(tid)["values"]["topic"] == "cats"
    assert [t["thread_id"] for t in client.threads.search(values={"topic": "cats"})] == [tid]
    assert client.threads.search(values={"topic": "dogs"}) == []


def test_tasks_checkpoints_and_debug_modes(client: Any) -> None:
    tid = client.threads.create(graph_id=CHANNELS)["thread_id"]
    parts = list(
        client.runs.stream(
            tid, CHANNELS, input={"messages": [{"role": "user", "content": "go"}], "topic": "owls"},
            stream_mode=["tasks", "checkpoints", "debug"],
        )
    )
    events = [p.event for p in parts]
    assert events[0] == "metadata" and set(events[1:]) == {"tasks", "checkpoints", "debug"}, events
    # tasks: each node's start (input, triggers) and result.
    started = [p.data["name"] for p in parts if p.event == "tasks" and "input" in p.data]
    ended = {p.data["name"]: p.data for p in parts if p.event == "tasks" and "result" in p.data}
    assert started == ["plan", "inner"] and ended["plan"]["result"] == {"visits": 1}
    # checkpoints: the state after each step, named by the thread's id.
    cps = [p.data for p in parts if p.event == "checkpoints"]
    assert all(c["config"]["configurable"]["thread_id"] == tid for c in cps)
    assert cps[-1]["values"]["topic"] == "owls" and cps[-1]["next"] == []
    assert cps[-1]["values"]["messages"][-1]["content"] == "owls #1"
    kinds = {p.data["type"] for p in parts if p.event == "debug"}
    assert {"checkpoint", "task", "task_result"} <= kinds, kinds
    # With subgraphs, the subgraph's parts come named by its namespace.
    parts = list(
        client.runs.stream(
            tid, CHANNELS, input={"messages": [{"role": "user", "content": "deeper"}]},
            stream_mode=["tasks"], stream_subgraphs=True,
        )
    )
    sub = [p for p in parts if p.event.startswith("tasks|inner:")]
    assert [p.data["name"] for p in sub if "input" in p.data] == ["answer"], [p.event for p in parts]
    # events: LangChain's run events (astream_events v2) of the graph and its nodes.
    parts = list(client.runs.stream(tid, CHANNELS, input={"messages": [{"role": "user", "content": "evented"}]}, stream_mode=["events", "values"]))
    events = [p.data for p in parts if p.event == "events"]
    assert {"on_chain_start", "on_chain_end"} <= {e["event"] for e in events}
    assert "plan" in {e["name"] for e in events} and parts[-1].event == "values"


def test_store_not_offered(lg_server: Server) -> None:
    from langgraph_sdk.errors import APIStatusError

    client = get_sync_client(url=lg_server.origin, api_key=None)
    with pytest.raises(APIStatusError) as err:
        client.store.put_item(["notes"], "k", {"v": 1})
    assert err.value.response.status_code == 501
    assert "store is not offered" in err.value.response.json()["detail"]


def test_update_state(client: Any) -> None:
    """update_state is applied by the graph: reducers, as_node, the new checkpoint."""
    tid = client.threads.create(graph_id=CHANNELS)["thread_id"]
    client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "hi"}], "topic": "cats"})
    before = client.threads.get_state(tid)
    added = {"type": "ai", "content": "noted", "id": "note-1"}
    out = client.threads.update_state(tid, {"visits": 10, "messages": [added]}, as_node="plan")
    state = client.threads.get_state(tid)
    assert out["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    assert state["parent_checkpoint"]["checkpoint_id"] == before["checkpoint"]["checkpoint_id"]
    assert state["metadata"]["source"] == "update"
    # visits' reducer adds; the update's message joins the conversation.
    assert (state["values"]["visits"], state["values"]["topic"]) == (11, "cats")
    assert texts(state["values"]) == [("human", "hi"), ("ai", "cats #1"), ("ai", "noted")]
    assert len(client.threads.get_history(tid)) == 2 and len(client.runs.list(tid)) == 1
    with pytest.raises(UnprocessableEntityError):
        client.threads.update_state(tid, {"visits": 1}, as_node="nope")
    assert client.threads.get(tid)["status"] == "idle"
    # The next run starts from the updated state.
    out = client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "again"}]})
    assert out["visits"] == 12 and texts(out)[-1] == ("ai", "cats #2")


def test_copy_thread(client: Any) -> None:
    tid = client.threads.create(graph_id=CHANNELS, metadata={"case": "copy"})["thread_id"]
    client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "hi"}], "topic": "cats"})
    copy = client.threads.copy(tid)
    assert copy["thread_id"] != tid and copy["metadata"]["case"] == "copy"
    assert texts(copy["values"]) == [("human", "hi"), ("ai", "cats #1")] and copy["values"]["visits"] == 1
    assert len(client.threads.get_history(copy["thread_id"])) == 1
    # Each goes on on its own, from the same state.
    out = client.runs.wait(copy["thread_id"], CHANNELS, input={"messages": [{"role": "user", "content": "copied"}]})
    assert (out["visits"], texts(out)[-1]) == (2, ("ai", "cats #2"))
    assert client.threads.get_state(tid)["values"]["visits"] == 1
    with pytest.raises(NotFoundError):
        client.threads.copy("no-such-thread")


def test_resume_with_update(client: Any) -> None:
    """Command(resume=..., update=...): the update is written before the node goes on."""
    tid = client.threads.create(graph_id=CHANNELS)["thread_id"]
    out = client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "hi"}], "topic": "review"})
    assert out["__interrupt__"][0]["value"] == "which topic?"
    out = client.runs.wait(tid, CHANNELS, command=Command(resume="owls", update={"visits": 10}))
    assert (out["topic"], out["visits"], texts(out)[-1]) == ("owls", 11, ("ai", "owls #1"))
    # update or goto without resume is refused.
    with pytest.raises(httpx.HTTPStatusError) as err:
        client.runs.wait(tid, CHANNELS, command=Command(update={"visits": 1}))
    assert err.value.response.status_code == 422


def test_breakpoints(client: Any) -> None:
    """interrupt_before stops the run before a node; a run with no input goes on."""
    tid = client.threads.create(graph_id=CHANNELS)["thread_id"]
    out = client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "hi"}], "topic": "bp"}, interrupt_before=["inner"])
    assert "__interrupt__" not in out and out["visits"] == 1 and texts(out) == [("human", "hi")]
    thread = client.threads.get(tid)
    assert thread["status"] == "interrupted" and thread["interrupts"] == {}
    state = client.threads.get_state(tid)
    assert state["next"] == ["inner"] and state["interrupts"] == []
    out = client.runs.wait(tid, CHANNELS, input=None)
    assert texts(out)[-1] == ("ai", "bp #1") and out["visits"] == 1
    assert client.threads.get(tid)["status"] == "idle"
    # With nothing to go on from, a run needs input.
    with pytest.raises(httpx.HTTPStatusError) as err:
        client.runs.wait(tid, CHANNELS, input=None)
    assert err.value.response.status_code == 422
    # interrupt_after "*": stopped after the first node, streamed.
    parts = list(client.runs.stream(tid, CHANNELS, input={"messages": [{"role": "user", "content": "more"}]}, interrupt_after="*", stream_mode="updates"))
    assert [list(p.data) for p in parts if p.event == "updates"] == [["plan"]]
    assert client.threads.get_state(tid)["next"] == ["inner"]


def test_run_from_a_checkpoint_forks(client: Any) -> None:
    """Time travel: a run from an earlier checkpoint starts from its state."""
    tid = client.threads.create(graph_id=CHANNELS)["thread_id"]
    client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "hi"}], "topic": "cats"})
    first = client.threads.get_state(tid)["checkpoint"]
    client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "two"}], "topic": "dogs"})
    out = client.runs.wait(tid, CHANNELS, input={"messages": [{"role": "user", "content": "alt"}]}, checkpoint=first)
    # The graph was given the conversation and channels of the first checkpoint.
    assert texts(out) == [("human", "hi"), ("ai", "cats #1"), ("human", "alt"), ("ai", "cats #2")]
    assert (out["topic"], out["visits"]) == ("cats", 2)
    history = client.threads.get_history(tid)
    assert len(history) == 3 and history[0]["parent_checkpoint"]["checkpoint_id"] == first["checkpoint_id"]
    assert history[1]["values"]["topic"] == "dogs"
    with pytest.raises(NotFoundError):
        client.runs.create(tid, CHANNELS, input={"messages": [{"role": "user", "content": "x"}]}, checkpoint_id="nope")
    # Without input, the turn after the checkpoint runs again from it (a regenerate).
    again = client.runs.wait(tid, CHANNELS, input=None, checkpoint=first)
    assert texts(again) == [("human", "hi"), ("ai", "cats #1"), ("human", "alt"), ("ai", "cats #2")]
    assert len(client.threads.get_history(tid)) == 4
