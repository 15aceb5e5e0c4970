"""The LangGraph bridge, driven in-process against real LangGraph graphs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from conftest import approval, close, errors, kinds, make_runner, natives, of, run, text, turn

CHAT = """
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from agentengine_adapters.models import chat_model

@tool
def get_weather(city: str) -> str:
    '''Weather for a city.'''
    return f"sunny in {city}"

model = chat_model(scripted=SCRIPTED).bind_tools([get_weather])

async def call_model(state: MessagesState):
    return {"messages": [await model.ainvoke(state["messages"])]}

b = StateGraph(MessagesState)
b.add_node("model", call_model)
b.add_node("tools", ToolNode([get_weather]))
b.add_edge(START, "model")
b.add_conditional_edges("model", tools_condition)
b.add_edge("tools", "model")
graph = b   # a builder: the bridge compiles it with the durable checkpointer
"""


def chat(project: Any, scripted: str = "{}", **kw: Any) -> Any:
    return project(CHAT.replace("SCRIPTED", scripted), **kw)


def test_streams_text_and_usage(project: Any) -> None:
    settings = chat(project)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "hello there")
        finally:
            await close(runner)

    events = run(go)
    assert text(events) == "You said: hello there"
    assert kinds(events).count("text_delta") >= 2
    assert "message_done" in kinds(events)
    usage = of(events, "usage")
    assert len(usage) == 1 and usage[0].output_tokens > 0
    assert not errors(events)


def test_tool_call_ids_and_arguments_are_continuous(project: Any) -> None:
    settings = chat(project)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "what is the weather in Paris?")
        finally:
            await close(runner)

    events = run(go)
    deltas = of(events, "tool_call_delta")
    calls = of(events, "tool_call")
    results = of(events, "tool_result")
    assert len(calls) == 1 and len(results) == 1
    call = calls[0]
    assert call.call_id.startswith("call_")  # the model's own id, not a callback run id
    assert {d.call_id for d in deltas} == {call.call_id}
    assert deltas[0].name == "get_weather"
    assert json.loads("".join(d.arguments_delta for d in deltas)) == json.loads(call.arguments) == {"city": "Paris"}
    assert results[0].call_id == call.call_id and results[0].output == "sunny in Paris"
    assert "sunny in Paris" in text(events)
    # Order: call before result before the answer.
    order = kinds(events)
    assert order.index("tool_call") < order.index("tool_result") < order.index("text_delta")


ECHO = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

def echo(state: MessagesState):
    seen = ",".join(f"{m.type}:{m.text}" for m in state["messages"])
    return {"messages": [AIMessage(content=seen)]}

b = StateGraph(MessagesState)
b.add_node("echo", echo)
b.add_edge(START, "echo")
"""
EARLIER = [
    {"role": "user", "content": "earlier question", "type": "user_message", "seq": 1},
    {"role": "assistant", "content": "earlier answer", "type": "assistant_message", "seq": 2},
]


def test_a_graph_without_checkpointer_sees_the_host_history_each_turn(project: Any) -> None:
    settings = project(ECHO + "graph = b.compile()\n")

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "now", history=EARLIER, instructions="be brief")
            history = [*EARLIER, {"role": "user", "content": "now", "type": "user_message", "seq": 3},
                       {"role": "assistant", "content": "ok", "type": "assistant_message", "seq": 4}]
            second = await turn(runner, "again", history=history, instructions="be brief", invocation="inv2")
            return first, second
        finally:
            await close(runner)

    first, second = run(go)
    # A node-built AIMessage (never streamed) arrives whole, ended by message_done.
    assert text(first) == "system:be brief,human:earlier question,ai:earlier answer,human:now"
    assert "message_done" in kinds(first)
    # Its own run's thread: exactly the host's history, nothing left from turn 1.
    assert text(second) == "system:be brief,human:earlier question,ai:earlier answer,human:now,ai:ok,human:again"


def test_a_graph_with_its_own_checkpointer_gets_only_the_new_turn(project: Any) -> None:
    settings = project(ECHO + "from langgraph.checkpoint.memory import InMemorySaver\ngraph = b.compile(checkpointer=InMemorySaver())\n")

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "now", history=EARLIER, instructions="be brief")
            second = await turn(runner, "again", history=EARLIER, instructions="be brief", invocation="inv2")
            return first, second
        finally:
            await close(runner)

    first, second = run(go)
    assert text(first) == "system:be brief,human:earlier question,ai:earlier answer,human:now"
    # The session's thread already has the history: only the new turn is added, and
    # the instructions keep their single place (stable id).
    assert text(second) == (
        "system:be brief,human:earlier question,ai:earlier answer,human:now,"
        "ai:system:be brief,human:earlier question,ai:earlier answer,human:now,human:again"
    )


PARALLEL_INTERRUPTS = """
from typing import Annotated, TypedDict
import operator
from langgraph.graph import START, END, StateGraph
from langgraph.types import interrupt

class S(TypedDict):
    answers: Annotated[list, operator.add]
    output: str

def ask(name):
    def node(state):
        got = interrupt({"name": name, "args": {"target": name}, "message": f"allow {name}?"})
        return {"answers": [f"{name}={got.get('approve')}:{got.get('reason')}"]}
    return node

def report(state):
    return {"answers": ["done"], "output": ",".join(sorted(state["answers"]))}

b = StateGraph(S)
b.add_node("first", ask("first"))
b.add_node("second", ask("second"))
b.add_node("report", report)
b.add_edge(START, "first")
b.add_edge(START, "second")
b.add_edge(["first", "second"], "report")
b.add_edge("report", END)
graph = b.compile()
"""


def test_every_pending_interrupt_is_an_approval_and_they_resume_together(project: Any) -> None:
    settings = project(PARALLEL_INTERRUPTS)

    async def go() -> tuple[list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "go")
            reqs = of(first, "approval_request")
            by_name = {r.name: r for r in reqs}
            # Answer only one: the other stays pending and is asked again.
            partial = await turn(runner, approval(by_name["first"], True), resume=True)
            again = of(partial, "approval_request")
            final = await turn(runner, approval(again[0], False, "not now"), resume=True)
            return first, partial, final
        finally:
            await close(runner)

    first, partial, final = run(go)
    reqs = of(first, "approval_request")
    assert sorted(r.name for r in reqs) == ["first", "second"]
    assert len({r.id for r in reqs}) == 2
    detail = json.loads(reqs[0].detail_json)
    assert detail["interrupt_id"] == reqs[0].id and detail["kind"] == "interrupt"
    assert json.loads(reqs[0].arguments) == {"target": reqs[0].name}
    assert reqs[0].message == f"allow {reqs[0].name}?"
    again = of(partial, "approval_request")
    assert [r.name for r in again] == ["second"]
    assert again[0].id == {r.name: r.id for r in reqs}["second"]
    assert not errors(final) and not of(final, "approval_request")


def test_several_interrupts_answered_in_one_resume(project: Any) -> None:
    settings = project(PARALLEL_INTERRUPTS)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "go")
            answers = [approval(r, r.name == "first", "nope" if r.name == "second" else "") for r in of(first, "approval_request")]
            return await turn(runner, answers, resume=True)
        finally:
            await close(runner)

    events = run(go)
    assert not errors(events) and not of(events, "approval_request")
    # The final state's `output` is the answer (nothing streamed as text).
    assert text(events) == "first=True:,second=False:nope"
    assert [k for k in kinds(events) if not k.startswith("checkpoint")][-1] == "message_done"


def test_resume_of_an_unknown_interrupt_is_an_error(project: Any) -> None:
    settings = project(PARALLEL_INTERRUPTS)

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            nothing = await turn(runner, {"type": "mcp_approval_response", "approval_request_id": "nope", "approve": True}, resume=True)
            await turn(runner, "go")
            unknown = await turn(runner, {"type": "mcp_approval_response", "approval_request_id": "nope", "approve": True}, resume=True)
            return nothing, unknown
        finally:
            await close(runner)

    nothing, unknown = run(go)
    assert errors(nothing)[0].code == "invalid_resume"
    assert "has no pending interrupt to resume" in errors(nothing)[0].message
    err = errors(unknown)[0]
    assert err.code == "invalid_resume"
    assert "no pending interrupt matches approval 'nope'" in err.message
    assert kinds(unknown) == ["error"]  # nothing ran


def test_prepare_state_hook_gets_payload_and_context_and_passes_resume_through(project: Any) -> None:
    settings = project(
        """
        from langchain_core.messages import AIMessage, HumanMessage
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.types import interrupt

        CALLS = []

        def ksadk_prepare_state(payload, session_context):
            CALLS.append((payload, session_context))
            if session_context.get("is_resume"):
                return payload.get("input")
            return {"messages": [HumanMessage(content="hooked: " + payload["input"])]}

        def node(state: MessagesState):
            answer = interrupt({"name": "publish", "args": {}})
            return {"messages": [AIMessage(content=f"{state['messages'][-1].text} / approve={answer['approve']} reason={answer['reason']}")]}

        b = StateGraph(MessagesState)
        b.add_node("node", node)
        b.add_edge(START, "node")
        graph = b.compile()
        """
    )

    async def go() -> tuple[list[Any], list[Any], Any]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "hi", model_metadata={"capabilities": {"multimodal_input_image": False}})
            req = of(first, "approval_request")[0]
            second = await turn(runner, approval(req, False, "later"), resume=True)
            return first, second, runner.entry.module.CALLS
        finally:
            await close(runner)

    first, second, calls = run(go)
    assert len(calls) == 2
    payload, ctx = calls[0]
    assert payload["input"] == "hi" and payload["model_metadata"] == {"capabilities": {"multimodal_input_image": False}}
    assert ctx["platform_context"]["session_id"] == "s1" and ctx["is_resume"] is False
    assert calls[1][1]["is_resume"] is True
    assert calls[1][0]["input"]["approval_request_id"] == of(first, "approval_request")[0].id
    # The hook returned the resume payload as is: the bridge answered the interrupt with it.
    assert text(second) == "hooked: hi / approve=False reason=later"


def test_hook_that_raises_is_an_error_event(project: Any) -> None:
    settings = project(
        """
        from langgraph.graph import START, MessagesState, StateGraph
        def ksadk_prepare_state(payload, session_context):
            raise ValueError("bad payload: " + payload["input"])
        b = StateGraph(MessagesState)
        b.add_node("n", lambda s: {})
        b.add_edge(START, "n")
        graph = b.compile()
        """
    )

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "x")
        finally:
            await close(runner)

    events = run(go)
    assert kinds(events) == ["error"]
    assert errors(events)[0].message == "ValueError: bad payload: x"
    assert "ksadk_prepare_state" in errors(events)[0].detail


def test_graph_raising_mid_stream_is_an_error_event(project: Any) -> None:
    settings = chat(project, scripted='{"fail_with": "model exploded"}')

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "hello there")
        finally:
            await close(runner)

    events = run(go)
    assert text(events) == "You "  # the first token streamed before the failure
    assert kinds(events)[-1] == "error"
    assert errors(events)[0].message == "RuntimeError: model exploded"


CONTEXT = """
import asyncio
from dataclasses import dataclass
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from ksadk.runtime_context import get_current_invocation_context

@dataclass
class Ctx:
    session_id: str = ""
    model_options: dict | None = None

async def node(state: MessagesState, config, runtime: Runtime[Ctx]):
    before = get_current_invocation_context().session_id
    await asyncio.sleep(0.05 * len(before))
    after = get_current_invocation_context().session_id
    opts = config["configurable"]["agentengine"]["model_options"]
    return {"messages": [AIMessage(content=f"{before}|{after}|{runtime.context.session_id}|{opts}|{runtime.context.model_options}")]}

b = StateGraph(MessagesState, context_schema=Ctx)
b.add_node("node", node)
b.add_edge(START, "node")
graph = b.compile()
"""


def test_concurrent_runs_keep_their_runtime_context(project: Any) -> None:
    settings = project(CONTEXT)

    async def go() -> list[list[Any]]:
        runner = make_runner(settings)
        try:
            return list(
                await asyncio.gather(
                    *(turn(runner, "hi", session=s, model_options={"n": s}) for s in ("a", "bbb", "cc"))
                )
            )
        finally:
            await close(runner)

    results = run(go)
    for session, events in zip(("a", "bbb", "cc"), results, strict=True):
        opts = str({"n": session})
        assert text(events) == f"{session}|{session}|{session}|{opts}|{opts}"


def test_cancelling_the_run_stops_the_graph_task(project: Any) -> None:
    settings = project(
        """
        import asyncio
        from langchain_core.messages import AIMessage
        from langgraph.graph import START, MessagesState, StateGraph

        STARTED = asyncio.Event()
        STATE = {"finished": False, "cancelled": False}

        async def slow(state: MessagesState):
            STARTED.set()
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                STATE["cancelled"] = True
                raise
            STATE["finished"] = True
            return {"messages": [AIMessage(content="late")]}

        b = StateGraph(MessagesState)
        b.add_node("slow", slow)
        b.add_edge(START, "slow")
        graph = b.compile()
        """
    )

    async def go() -> tuple[bool, dict[str, bool]]:
        runner = make_runner(settings)
        module = runner.entry.module
        module.STARTED = asyncio.Event()  # bound to this test's loop
        try:
            task = asyncio.create_task(turn(runner, "go"))
            await asyncio.wait_for(module.STARTED.wait(), 5)
            task.cancel()
            cancelled = False
            try:
                await task
            except asyncio.CancelledError:
                cancelled = True
            await asyncio.sleep(0.1)
            return cancelled, dict(module.STATE)
        finally:
            await close(runner)

    cancelled, state = run(go)
    assert cancelled
    assert state == {"finished": False, "cancelled": True}


def test_custom_writer_events_and_reasoning(project: Any) -> None:
    settings = project(
        """
        from langgraph.config import get_stream_writer
        from langgraph.graph import START, MessagesState, StateGraph
        from agentengine_adapters.models import chat_model

        model = chat_model(scripted={"reasoning": True})

        async def node(state: MessagesState):
            write = get_stream_writer()
            write({"type": "progress", "step": 1})
            write("custom text. ")
            return {"messages": [await model.ainvoke(state["messages"])]}

        b = StateGraph(MessagesState)
        b.add_node("node", node)
        b.add_edge(START, "node")
        graph = b.compile()
        """
    )

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "hello")
        finally:
            await close(runner)

    events = run(go)
    assert natives(events, "custom") == [{"type": "progress", "step": 1}]
    assert text(events) == "custom text. You said: hello"
    reasoning = "".join(r.text for r in of(events, "reasoning_delta"))
    assert reasoning.startswith("The user asked: hello")
    assert not errors(events)


CHANNELS = """
import operator
from typing import Annotated

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


class State(MessagesState):
    topic: str
    visits: Annotated[int, operator.add]


class Inner(MessagesState):
    topic: str


def plan(state: State) -> dict:
    return {"visits": 1}


def answer(state: Inner) -> dict:
    return {"messages": [AIMessage(f"{state.get('topic', 'none')} after {len(state['messages'])}")]}


inner = StateGraph(Inner)
inner.add_node("answer", answer)
inner.add_edge(START, "answer")
b = StateGraph(State)
b.add_node("plan", plan)
b.add_node("inner", inner.compile())
b.add_edge(START, "plan")
b.add_edge("plan", "inner")
graph = b.compile()
"""

API_RUN = {"langgraph_updates": "1"}


def test_a_langgraph_api_run_reports_its_channels_and_starts_from_them(project: Any) -> None:
    settings = project(CHANNELS)
    earlier = [{"role": "user", "content": "hi", "type": "user_message", "seq": 1},
               {"role": "assistant", "content": "cats after 1", "type": "assistant_message", "seq": 2}]

    async def go() -> tuple[list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "one", metadata={**API_RUN, "langgraph_input": json.dumps({"topic": "cats"})})
            stored = json.loads(of(first, "state_delta")[-1].delta_json)
            second = await turn(runner, "two", history=earlier, state=stored, metadata=API_RUN, invocation="inv2")
            other = await turn(runner, "three", history=earlier, state=stored, invocation="inv3")
            return first, second, other
        finally:
            await close(runner)

    first, second, other = run(go)
    assert json.loads(of(first, "state_delta")[-1].delta_json) == {"langgraph_values": {"topic": "cats", "visits": 1}}
    # The next API run's thread starts from the channels session state holds; the earlier
    # conversation it is given is not reported again, though the subgraph node returns it.
    assert json.loads(of(second, "state_delta")[-1].delta_json) == {"langgraph_values": {"topic": "cats", "visits": 2}}
    assert text(second) == "cats after 3"
    # Another surface's run neither reads nor reports them.
    assert of(other, "state_delta") == [] and text(other) == "none after 3"


def test_a_langgraph_api_run_reports_its_channels_from_its_stream(project: Any, monkeypatch: Any) -> None:
    """The channels a finished API run reports come from its own stream: the thread's
    checkpoint is not loaded again (a fresh turn reads no state at all)."""
    from agentengine_adapters import langgraph_bridge

    settings = project(CHANNELS)
    loads: list[Any] = []
    real = langgraph_bridge._state

    async def counted(graph: Any, config: dict[str, Any]) -> Any:
        loads.append(config["configurable"]["thread_id"])
        return await real(graph, config)

    monkeypatch.setattr(langgraph_bridge, "_state", counted)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "one", metadata={**API_RUN, "langgraph_input": json.dumps({"topic": "owls"})})
        finally:
            await close(runner)

    events = run(go)
    assert json.loads(of(events, "state_delta")[-1].delta_json) == {"langgraph_values": {"topic": "owls", "visits": 1}}
    assert text(events) == "owls after 1" and loads == []


INTERRUPTED_STEP = """
import operator
from typing import Annotated

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt


class State(MessagesState):
    visits: Annotated[int, operator.add]


def count(state: State) -> dict:
    return {"visits": 1}


def ask(state: State) -> dict:
    interrupt({"name": "ask", "args": {}, "message": "go on?"})
    return {"visits": 10}


b = StateGraph(State)
b.add_node("count", count)
b.add_node("ask", ask)
b.add_edge(START, "count")
b.add_edge(START, "ask")
graph = b.compile()
"""


def test_an_interrupted_api_run_reports_the_checkpoints_channels(project: Any) -> None:
    """A step cut short by an interrupt: the thread's state as LangGraph reads it (the
    finished node's pending write applied), not the stream's last "values" part, which
    also holds the interrupt."""
    settings = project(INTERRUPTED_STEP)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "go", metadata=API_RUN)
        finally:
            await close(runner)

    events = run(go)
    assert of(events, "approval_request") and not errors(events)
    assert json.loads(of(events, "state_delta")[-1].delta_json) == {"langgraph_values": {"visits": 1}}


def test_forwarded_stream_modes_name_the_session_thread(project: Any) -> None:
    settings = project(CHANNELS)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "go", metadata={**API_RUN, "langgraph_modes": "checkpoints,tasks,values"})
        finally:
            await close(runner)

    parts = natives(run(go), "langgraph.part")
    assert {p["mode"] for p in parts} == {"checkpoints", "tasks"}  # values is not forwarded
    cps = [p["data"] for p in parts if p["mode"] == "checkpoints" and not p["ns"]]
    assert {c["config"]["configurable"]["thread_id"] for c in cps} == {"s1"}
    assert cps[-1]["values"]["visits"] == 1 and cps[-1]["next"] == []
    sub = [p for p in parts if p["ns"]]
    assert sub and all(p["ns"][0].startswith("inner:") for p in sub)


def test_a_state_update_is_computed_by_the_graph(project: Any) -> None:
    settings = project(CHANNELS)
    earlier = [{"role": "user", "content": "hi", "type": "user_message", "seq": 1},
               {"role": "assistant", "content": "cats after 1", "type": "assistant_message", "seq": 2}]
    stored = {"langgraph_values": {"topic": "cats", "visits": 2}}

    def update(values: Any, as_node: Any = None) -> dict[str, Any]:
        return {"type": "langgraph_state_update", "values": values, "as_node": as_node}

    async def go() -> tuple[list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            added = await turn(runner, "", history=earlier, state=stored, metadata=API_RUN, input_items=[
                update({"visits": 3, "topic": "owls", "messages": [{"type": "ai", "content": "noted", "id": "m-1"}]}, "plan")])
            bad = await turn(runner, "", history=earlier, state=stored, metadata=API_RUN, invocation="inv2",
                             input_items=[update({"visits": 1}, "nope")])
            after = await turn(runner, "next", history=earlier, state=json.loads(of(added, "state_delta")[-1].delta_json),
                               metadata=API_RUN, invocation="inv3")
            return added, bad, after
        finally:
            await close(runner)

    added, bad, after = run(go)
    # visits' reducer adds; topic is replaced; the update's AI message is reported, the
    # earlier conversation is not.
    assert json.loads(of(added, "state_delta")[-1].delta_json) == {"langgraph_values": {"topic": "owls", "visits": 5}}
    assert text(added) == "noted" and not errors(added)
    assert "cannot update the thread's state" in errors(bad)[0].message
    assert json.loads(of(after, "state_delta")[-1].delta_json) == {"langgraph_values": {"topic": "owls", "visits": 6}}


def test_a_resume_carries_the_commands_update(project: Any) -> None:
    settings = project(PARALLEL_INTERRUPTS)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "go")
            answers = [approval(r, True) for r in of(first, "approval_request")]
            answers[0]["langgraph_update"] = {"answers": ["extra"]}
            return await turn(runner, answers, resume=True)
        finally:
            await close(runner)

    events = run(go)
    assert not errors(events)
    # The update is written before the interrupted nodes go on (answers' reducer adds it).
    assert text(events) == "extra,first=True:,second=True:"


def test_command_extras() -> None:
    from agentengine_adapters.langgraph_bridge import command_extras

    items = [{"type": "mcp_approval_response", "langgraph_goto": ["report"], "langgraph_update": {"a": 1}},
             {"type": "mcp_approval_response", "langgraph_update": {"b": 2}}]
    assert command_extras({"input": items}) == {"update": {"a": 1}, "goto": ["report"]}
    assert command_extras({"input": json.dumps(items[1])}) == {"update": {"b": 2}}
    assert command_extras({"input": "plain text"}) == {}


def test_a_breakpoint_pauses_and_its_answer_goes_on(project: Any) -> None:
    settings = project(CHANNELS)
    before = {**API_RUN, "langgraph_interrupt_before": json.dumps(["inner"])}

    async def go() -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            paused = await turn(runner, "go", metadata=before)
            (req,) = of(paused, "approval_request")
            host = {"approval_request_id": req.id, "approve": True, "detail": req.detail_json.decode()}
            resumed = await turn(runner, approval(req), resume=True, host_resume=host, metadata=API_RUN, invocation="inv2")
            again = await turn(runner, "again", metadata={**API_RUN, "langgraph_interrupt_after": json.dumps("*")},
                               invocation="inv3", session="s2")
            (req2,) = of(again, "approval_request")
            host2 = {"approval_request_id": req2.id, "approve": False, "detail": req2.detail_json.decode()}
            refused = await turn(runner, approval(req2, False), resume=True, host_resume=host2, metadata=API_RUN,
                                 invocation="inv4", session="s2")
            return paused, resumed, again, refused
        finally:
            await close(runner)

    paused, resumed, again, refused = run(go)
    (req,) = of(paused, "approval_request")
    detail = json.loads(req.detail_json)
    assert (detail["kind"], detail["next"], req.name) == ("breakpoint", ["inner"], "breakpoint")
    assert text(paused) == "" and not errors(paused)
    assert text(resumed) == "none after 1" and not of(resumed, "approval_request") and not errors(resumed)
    # interrupt_after "*": paused after plan, the first node; refused, nothing more runs.
    assert json.loads(of(again, "approval_request")[0].detail_json)["next"] == ["inner"]
    assert text(refused) == "" and not errors(refused) and not of(refused, "approval_request")


def test_the_events_mode_forwards_every_event_and_the_run_goes_on_as_usual(project: Any) -> None:
    settings = project(CHANNELS)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "go", metadata={**API_RUN, "langgraph_modes": "events"})
        finally:
            await close(runner)

    events = run(go)
    parts = [p["data"] for p in natives(events, "langgraph.part") if p["mode"] == "events"]
    kinds_seen = {(p["event"], p["name"]) for p in parts}
    assert {("on_chain_start", "plan"), ("on_chain_end", "answer")} <= kinds_seen, kinds_seen
    # The graph's own parts still drive the run: its updates and answer.
    assert {u["node"] for u in natives(events, "langgraph.updates")} >= {"plan", "inner"}
    assert text(events) == "none after 1" and not errors(events)
