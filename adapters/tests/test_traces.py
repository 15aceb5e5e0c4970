"""A traced run joins the host's trace: the bridges' own model and tool spans (LangGraph)
and the spans ADK makes itself are children of the host's runner call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agentengine_runner.tracing import trace_scope
from conftest import close, errors, make_runner, of, run, turn
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_adk import AGENT
from test_adk import turn as adk_turn
from test_langgraph import chat

from agentengine_adapters import otel
from agentengine_adapters.scripted import ScriptedChatModel

TRACE, PARENT = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
CARRIER = {"traceparent": f"00-{TRACE}-{PARENT}-01"}


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """The process's tracer provider, as a runner process that exports its spans has one."""
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:
        pytest.skip("another tracer provider is already set in this process")
    yield exp


def in_trace(exp: InMemorySpanExporter) -> list[Any]:
    spans = [s for s in exp.get_finished_spans() if s.context is not None]
    assert spans, "no spans"
    for s in spans:
        assert format(s.context.trace_id, "032x") == TRACE, s.name
    return spans


def test_langgraph_tool_turn_makes_chat_and_tool_spans_in_the_hosts_trace(project: Any, exporter: InMemorySpanExporter) -> None:
    exporter.clear()
    settings = chat(project)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            with trace_scope(CARRIER):
                return await turn(runner, "what is the weather in Paris?")
        finally:
            await close(runner)

    events = run(go)
    assert not errors(events) and len(of(events, "tool_result")) == 1
    # The bridge made the call's span: the result says so, and the host makes none.
    assert [r.traced for r in of(events, "tool_result")] == [True]
    spans = in_trace(exporter)
    names = [s.name.split()[0] for s in spans]
    assert names.count("chat") == 2 and names.count("execute_tool") == 1, names
    tool = next(s for s in spans if s.name.startswith("execute_tool"))
    assert dict(tool.attributes or {})["gen_ai.tool.name"] == "get_weather"
    for s in spans:
        assert s.parent is not None and format(s.parent.span_id, "016x") == PARENT
        assert not any("Paris" in str(v) for v in (s.attributes or {}).values()), s.attributes
    chats = [dict(s.attributes or {}) for s in spans if s.name.startswith("chat")]
    assert all(c["gen_ai.usage.output_tokens"] > 0 for c in chats)


def test_untraced_langgraph_turn_makes_no_spans(project: Any, exporter: InMemorySpanExporter) -> None:
    exporter.clear()
    settings = chat(project)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "what is the weather in Paris?")
        finally:
            await close(runner)

    events = run(go)
    assert [s.name for s in exporter.get_finished_spans() if s.name.startswith(("chat", "execute_tool"))] == []
    # Nothing traced the call: the host's own span stands for it.
    assert [r.traced for r in of(events, "tool_result")] == [False]


def test_adk_turn_spans_join_the_hosts_trace(project: Any, exporter: InMemorySpanExporter) -> None:
    exporter.clear()
    settings = project(AGENT.replace("MODEL_KWARGS", ""), framework="adk", variable="root_agent")
    runner = make_runner(settings)

    async def go() -> list[Any]:
        with trace_scope(CARRIER):
            return await adk_turn(runner, "weather city=Paris")

    events = run(go)
    assert not errors(events) and len(of(events, "tool_result")) == 1
    assert [r.traced for r in of(events, "tool_result")] == [True]  # ADK's own execute_tool span
    spans = in_trace(exporter)
    names = {s.name.split()[0] for s in spans}
    assert "execute_tool" in names and "invoke_agent" in names, names
    roots = [s for s in spans if s.parent is not None and format(s.parent.span_id, "016x") == PARENT]
    assert roots, "no ADK span is a child of the host's runner call"


def test_genai_spans_for_model_and_tool_calls(monkeypatch: pytest.MonkeyPatch, exporter: InMemorySpanExporter) -> None:
    exporter = InMemorySpanExporter()  # this test's own provider, apart from the process's
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    @tool
    def lookup(q: str) -> str:
        """Look q up."""
        return q.upper()

    answer = AIMessage(
        "hi",
        usage_metadata={"input_tokens": 7, "output_tokens": 2, "total_tokens": 9},
        response_metadata={"model_name": "m1", "finish_reason": "stop"},
    )
    monkeypatch.delenv(otel.CAPTURE_ENV, raising=False)
    assert otel.handlers() == []  # an untraced run gets no handler
    with trace_scope({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}):
        assert len(otel.handlers()) == 1
        spans = otel.GenAISpans(tracer=provider.get_tracer("test"))
        reply = ScriptedChatModel(responses=[answer]).invoke("a secret question", config={"callbacks": [spans]})
        lookup.invoke({"q": "secret"}, config={"callbacks": [spans]})
    got = {s.name.split()[0]: s for s in exporter.get_finished_spans()}
    assert set(got) == {"chat", "execute_tool"}
    for s in got.values():
        assert format(s.context.trace_id, "032x") == "4bf92f3577b34da6a3ce929d0e0e4736"
        assert s.parent is not None and format(s.parent.span_id, "016x") == "00f067aa0ba902b7"
        assert not any("secret" in str(v) for v in (s.attributes or {}).values())
    chat = dict(got["chat"].attributes or {})
    assert chat["gen_ai.operation.name"] == "chat"
    usage = reply.usage_metadata or {}
    assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (usage["input_tokens"], usage["output_tokens"])
    assert usage["output_tokens"] > 0
    assert chat["gen_ai.response.model"] == "m1" and "stop" in chat["gen_ai.response.finish_reasons"]
    tool_attrs = dict(got["execute_tool"].attributes or {})
    assert (tool_attrs["gen_ai.operation.name"], tool_attrs["gen_ai.tool.name"]) == ("execute_tool", "lookup")

    # Opted in, the contents are recorded.
    exporter.clear()
    with trace_scope({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}):
        spans = otel.GenAISpans(tracer=provider.get_tracer("test"), capture_content=True)
        lookup.invoke({"q": "secret"}, config={"callbacks": [spans]})
    (s,) = exporter.get_finished_spans()
    assert "secret" in str((s.attributes or {})["gen_ai.tool.call.arguments"])
