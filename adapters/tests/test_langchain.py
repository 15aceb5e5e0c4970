"""The LangChain bridge: create_agent graphs (with HumanInTheLoopMiddleware) and plain
Runnables / LCEL chains."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from conftest import approval, close, errors, kinds, make_runner, of, run, text, turn

from agentengine_adapters.langchain_bridge import LangChainGraphRunner, RunnableRunner
from agentengine_adapters.resume import PARTIAL_KEY

HITL = """
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from agentengine_adapters.models import chat_model

SENT = []

@tool
def send_email(to: str, body: str) -> str:
    '''Send an email.'''
    SENT.append(("email", to))
    return f"email sent to {to}"

@tool
def delete_file(path: str) -> str:
    '''Delete a file.'''
    SENT.append(("delete", path))
    return f"deleted {path}"

agent = create_agent(
    chat_model(),
    [send_email, delete_file],
    middleware=[HumanInTheLoopMiddleware(
        {"send_email": True, "delete_file": {"allowed_decisions": ["approve", "reject"]}},
        interrupt_mode=MODE,
    )],
)
"""
ASK = "send an email to bob and delete the file"


def hitl(project: Any, mode: str = "batched") -> Any:
    return project(HITL.replace("MODE", repr(mode)), framework="langchain", variable="agent")


def test_hitl_actions_become_one_approval_each_with_their_call_ids(project: Any) -> None:
    settings = hitl(project)

    async def go() -> tuple[list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        assert isinstance(runner, LangChainGraphRunner)
        try:
            first = await turn(runner, ASK)
            reqs = {r.name: r for r in of(first, "approval_request")}
            answers = [approval(reqs["send_email"]), approval(reqs["delete_file"], False, "keep it")]
            second = await turn(runner, answers, resume=True)
            return first, second, runner.entry.module.SENT
        finally:
            await close(runner)

    first, second, sent = run(go)
    calls = {c.name: c.call_id for c in of(first, "tool_call")}
    reqs = of(first, "approval_request")
    assert sorted(r.name for r in reqs) == ["delete_file", "send_email"]
    interrupt_id = json.loads(reqs[0].detail_json)["interrupt_id"]
    assert {r.id for r in reqs} == {f"{interrupt_id}:0", f"{interrupt_id}:1"}
    for r in reqs:
        assert r.call_id == calls[r.name]  # the model's tool call the approval guards
        assert json.loads(r.arguments) == json.loads(next(c.arguments for c in of(first, "tool_call") if c.name == r.name))
        assert r.message.startswith("Tool execution requires approval")
    assert sent == [("email", "bob@example.com")]
    results = {r.call_id: r for r in of(second, "tool_result")}
    assert results[calls["send_email"]].output == "email sent to bob@example.com"
    rejected = results[calls["delete_file"]]
    assert rejected.is_error and "keep it" in rejected.output
    # The resumed run does not repeat the calls the first run already reported.
    assert not of(second, "tool_call")
    assert not errors(second) and text(second).startswith("Done.")


def test_hitl_answers_in_separate_turns_are_kept_until_complete(project: Any) -> None:
    settings = hitl(project)

    async def go() -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, ASK)
            reqs = {r.name: r for r in of(first, "approval_request")}
            # One answer: nothing runs, the decision is saved, the other is asked again.
            partial = await turn(runner, approval(reqs["send_email"]), resume=True)
            saved = json.loads(of(partial, "state_delta")[0].delta_json)
            # The host hands saved state back in the session context.
            final = await turn(runner, approval(reqs["delete_file"]), resume=True, state=saved)
            return partial, final, runner.entry.module.SENT, [saved]
        finally:
            await close(runner)

    partial, final, sent, (saved,) = run(go)
    assert [r.name for r in of(partial, "approval_request")] == ["delete_file"]
    assert not of(partial, "tool_result")
    assert list(saved[PARTIAL_KEY].values()) == [{"0": {"type": "approve"}}]
    assert [kind for kind, _ in sorted(sent)] == ["delete", "email"]
    # The saved decisions are dropped once used.
    assert json.loads(of(final, "state_delta")[0].delta_json) == {PARTIAL_KEY: None}
    assert not errors(final)


def test_hitl_per_call_mode_edit_respond_and_disallowed_decision(project: Any) -> None:
    settings = hitl(project, "per_call")

    async def go() -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, ASK)
            reqs = {r.name: r for r in of(first, "approval_request")}
            # delete_file allows only approve/reject: an edit is refused before resuming.
            bad = await turn(runner, approval(reqs["delete_file"], arguments={"path": "/x"}) | {"approve": True}, resume=True)
            answers = [
                approval(reqs["send_email"], arguments=json.dumps({"to": "carol@example.com", "body": "hi"})),
                {"type": "function_call_output", "call_id": reqs["delete_file"].call_id, "output": json.dumps({"approve": False, "reason": "no"})},
            ]
            second = await turn(runner, answers, resume=True)
            return first, bad, second, runner.entry.module.SENT
        finally:
            await close(runner)

    first, bad, second, sent = run(go)
    reqs = {r.name: r for r in of(first, "approval_request")}
    assert len({r.id for r in reqs.values()}) == 2
    assert all(json.loads(r.detail_json)["kind"] == "hitl_call" for r in reqs.values())
    # delete_file allows approve/reject only: the edit is refused before anything runs.
    assert kinds(bad) == ["error"], errors(bad)
    assert errors(bad)[0].code == "invalid_resume", errors(bad)[0].message
    assert "does not allow 'edit'" in errors(bad)[0].message
    # The edit ran with the reviewer's arguments; the verdict output rejected the other.
    assert sent == [("email", "carol@example.com")]
    results = {r.call_id: r for r in of(second, "tool_result")}
    assert "email sent to carol@example.com" in results[reqs["send_email"].call_id].output
    assert results[reqs["delete_file"].call_id].is_error
    assert "no" in results[reqs["delete_file"].call_id].output
    assert not errors(second)


def test_reject_not_allowed_is_refused(project: Any) -> None:
    settings = project(
        HITL.replace("MODE", "'batched'").replace('{"send_email": True,', '{"send_email": {"allowed_decisions": ["approve"]},'),
        framework="langchain",
        variable="agent",
    )

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "send an email to bob")
            return await turn(runner, approval(of(first, "approval_request")[0], False), resume=True)
        finally:
            await close(runner)

    events = run(go)
    assert errors(events)[0].code == "invalid_resume"
    assert "does not allow 'reject'" in errors(events)[0].message


LCEL = """
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from agentengine_adapters.models import chat_model

prompt = ChatPromptTemplate.from_messages([
    ("system", "Answer from the documents. Context: {context}"),
    MessagesPlaceholder("history"),
    ("human", "{question}"),
])
chain = prompt | chat_model() | StrOutputParser()
"""


def test_lcel_chain_streams_once_with_the_prepare_input_hook(project: Any) -> None:
    settings = project(
        LCEL
        + """
CALLS = []
from langchain_core.messages import AIMessage, HumanMessage

def ksadk_prepare_input(payload, session_context):
    CALLS.append((payload, session_context))
    texts = [i["text"] for i in payload.get("attachment_results", []) if i.get("text")]
    history = [HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"]) for m in session_context["history"]]
    return {"question": payload["input"], "history": history, "context": " ".join(texts)}
""",
        framework="langchain",
        variable="chain",
    )

    async def go() -> tuple[list[Any], Any]:
        runner = make_runner(settings)
        assert isinstance(runner, RunnableRunner)
        events = await turn(
            runner,
            "what does the report say?",
            attachment_results=[{"filename": "r.pdf", "text": "Revenue grew 12%."}],
            history=[{"role": "user", "content": "hi", "type": "user_message"}],
        )
        return events, runner.entry.module.CALLS

    events, calls = run(go)
    assert text(events) == "Based on the provided context: Revenue grew 12%."
    assert kinds(events).count("text_delta") > 2 and kinds(events).count("message_done") == 1
    assert of(events, "usage")
    (payload, ctx), = calls
    assert payload["attachment_results"][0]["text"] == "Revenue grew 12%."
    assert ctx["history"][0]["content"] == "hi"


def test_lcel_default_input_and_a_non_streaming_runnable(project: Any) -> None:
    settings = project(
        LCEL
        + """
from langchain_core.runnables import RunnableLambda
plain = RunnableLambda(lambda q: {"answer": f"plain answer to {q}"})
""",
        framework="langchain",
        variable="chain",
    )

    async def go() -> tuple[list[Any], list[Any]]:
        chain_runner = make_runner(settings)
        streamed = await turn(chain_runner, "hello", attachment_results=[{"text": "ctx text"}])
        plain_runner = make_runner(type(settings)(**{**settings.__dict__, "agent_variable": "plain"}))
        plain = await turn(plain_runner, "why?")
        return streamed, plain

    streamed, plain = run(go)
    # Default mapping: question, history and context come from the schema's field names.
    assert text(streamed) == "Based on the provided context: [Attachment attachment] ctx text"
    # No streaming at all: the final output is the text, sent once (never re-run).
    assert text(plain) == "plain answer to why?" and kinds(plain) == ["text_delta", "message_done"]


def test_runnable_tool_calls_keep_the_model_call_ids(project: Any) -> None:
    settings = project(
        """
        from langchain_core.messages import AIMessage
        from langchain_core.runnables import RunnableLambda
        from langchain_core.tools import tool
        from agentengine_adapters.models import chat_model

        @tool
        def lookup(topic: str) -> str:
            '''Look a topic up.'''
            return f"facts about {topic}"

        model = chat_model().bind_tools([lookup])

        async def act(message: AIMessage):
            return [await lookup.ainvoke(call) for call in message.tool_calls]

        chain = model | RunnableLambda(act)
        """,
        framework="langchain",
        variable="chain",
    )

    async def go() -> list[Any]:
        return await turn(make_runner(settings), "lookup about cats")

    events = run(go)
    call = of(events, "tool_call")[0]
    assert call.name == "lookup" and json.loads(call.arguments) == {"topic": "cats"}
    assert {d.call_id for d in of(events, "tool_call_delta")} == {call.call_id}
    result = of(events, "tool_result")[0]
    assert result.call_id == call.call_id and result.output == "facts about cats"


def test_chat_model_runnable_gets_messages(project: Any) -> None:
    settings = project(
        "from agentengine_adapters.models import chat_model\nllm = chat_model()\n",
        framework="langchain",
        variable="llm",
    )

    async def go() -> list[Any]:
        return await turn(make_runner(settings), "hello model", instructions="be nice")

    events = run(go)
    assert text(events) == "You said: hello model"


def test_runnable_resume_is_refused(project: Any) -> None:
    settings = project(LCEL, framework="langchain", variable="chain")

    async def go() -> list[Any]:
        return await turn(make_runner(settings), {"type": "mcp_approval_response", "approval_request_id": "x", "approve": True}, resume=True)

    assert errors(run(go))[0].code == "invalid_resume"


def test_new_message_after_an_interrupt_closes_the_dangling_tool_call(project: Any) -> None:
    settings = project(
        """
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
        from langchain_core.tools import tool
        from langgraph.checkpoint.memory import InMemorySaver
        from agentengine_adapters.models import chat_model

        @tool
        def send_email(to: str, body: str) -> str:
            '''Send an email.'''
            return "sent"

        # Its own checkpointer: one thread per session, which keeps the unanswered call.
        graph = create_agent(chat_model(), [send_email], middleware=[HumanInTheLoopMiddleware({"send_email": True})],
                             checkpointer=InMemorySaver())
        """
    )

    async def go() -> tuple[list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "send an email to bob")
            second = await turn(runner, "never mind, hello", invocation="inv2")
            graph = await runner.graph()
            snap = await graph.aget_state({"configurable": {"thread_id": "2:u1/s1"}})
            return first, second, snap.values["messages"]
        finally:
            await close(runner)

    first, second, messages = run(go)
    assert len(of(first, "approval_request")) == 1
    assert not errors(second) and text(second) == "You said: never mind, hello"
    patched = [m for m in messages if m.type == "tool" and m.status == "error"]
    assert patched and patched[0].tool_call_id == of(first, "tool_call")[0].call_id


INPUT_HOOK = """
from langchain.agents import create_agent
from agentengine_adapters.scripted import ScriptedChatModel

RECEIVED = []

class Recording(ScriptedChatModel):
    def _respond(self, messages):
        RECEIVED.append([f"{m.type}:{m.text}" for m in messages])
        return super()._respond(messages)

def ksadk_prepare_input(payload, session_context):
    return {"input": payload["input"]}

agent = create_agent(Recording(), [])
"""


def test_an_input_hook_for_a_messages_agent_becomes_the_user_message(
    project: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = project(INPUT_HOOK, framework="langchain", variable="agent")

    async def go() -> tuple[list[Any], list[Any], Any]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "hello")
            second = await turn(runner, "again", invocation="inv2")
            return first, second, runner.entry.module.RECEIVED
        finally:
            await close(runner)

    with caplog.at_level(logging.WARNING, logger="agentengine_runner.adapters"):
        first, second, received = run(go)
    assert not errors(first) and text(first) == "You said: hello"
    assert text(second) == "You said: again"
    assert received == [["human:hello"], ["human:again"]]
    warnings = [r for r in caplog.records if "returned {'input': ...}" in r.getMessage()]
    assert len(warnings) == 1 and "ksadk_prepare_input" in warnings[0].getMessage()


def test_create_agent_without_checkpointer_gets_the_host_history_once(project: Any) -> None:
    settings = project(INPUT_HOOK.replace("def ksadk_prepare_input", "def unused_hook"), framework="langchain",
                       variable="agent")

    async def go() -> list[Any]:
        runner = make_runner(settings)
        history: list[dict[str, Any]] = []
        try:
            for i, question in enumerate(["one", "two", "three"]):
                events = await turn(runner, question, history=list(history), invocation=f"inv{i}")
                history += [
                    {"role": "user", "type": "user_message", "content": question, "seq": 2 * i + 1},
                    {"role": "assistant", "type": "assistant_message", "content": text(events), "seq": 2 * i + 2},
                ]
            return runner.entry.module.RECEIVED
        finally:
            await close(runner)

    assert run(go)[-1] == [
        "human:one", "ai:You said: one", "human:two", "ai:You said: two", "human:three",
    ]


# The tool-calling tutorial's shape: create_agent and a ksadk_prepare_state that returns
# only the input text.
STATE_INPUT_HOOK = """
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from agentengine_adapters.scripted import ScriptedChatModel

RECEIVED = []

class Recording(ScriptedChatModel):
    def _respond(self, messages):
        RECEIVED.append([f"{m.type}:{m.text}" for m in messages])
        return super()._respond(messages)

def ksadk_prepare_state(payload, session_context):
    return HOOK_RETURNS

agent = create_agent(Recording(), [], system_prompt="Be brief.", CHECKPOINTER)
"""


def _two_turns(settings: Any) -> list[list[str]]:
    """Two turns of one session, the second with the host's history of the first."""

    async def go() -> list[list[str]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "my name is Ada")
            assert not errors(first), errors(first)
            history = [
                {"role": "user", "type": "user_message", "content": "my name is Ada", "seq": 1},
                {"role": "assistant", "type": "assistant_message", "content": text(first), "seq": 2},
            ]
            second = await turn(runner, "what is my name?", history=history, invocation="inv2")
            assert not errors(second), errors(second)
            return list(runner.entry.module.RECEIVED)
        finally:
            await close(runner)

    return run(go)


@pytest.mark.parametrize(
    ("returns", "sent"),
    [
        ('{"input": str(payload.get("input") or "")}', "what is my name?"),
        ('str(payload.get("input") or "").upper()', "WHAT IS MY NAME?"),
        ('{"input": "Q: " + payload["input"], "remaining_steps": 9}', "Q: what is my name?"),
    ],
)
@pytest.mark.parametrize("checkpointer", ["", "checkpointer=__import__('langgraph.checkpoint.memory').checkpoint.memory.InMemorySaver()"])
def test_an_input_only_hook_keeps_the_conversation(project: Any, returns: str, sent: str, checkpointer: str) -> None:
    source = STATE_INPUT_HOOK.replace("HOOK_RETURNS", returns).replace(", CHECKPOINTER", f", {checkpointer}" if checkpointer else "")
    received = _two_turns(project(source, framework="langchain", variable="agent"))
    first_text = received[0][-1].removeprefix("human:")
    # The host's history holds what the user wrote; a thread of the graph's own, what the
    # hook made of it.
    said = first_text if checkpointer else "my name is Ada"
    assert received[-1] == [
        "system:Be brief.",
        f"human:{said}",
        f"ai:You said: {first_text}",
        f"human:{sent}",
    ]


def test_a_hook_that_returns_messages_has_them_used_as_given(project: Any) -> None:
    returns = '{"messages": [HumanMessage(content="only this")]}'
    source = STATE_INPUT_HOOK.replace("HOOK_RETURNS", returns).replace(", CHECKPOINTER", "")
    received = _two_turns(project(source, framework="langchain", variable="agent"))
    assert received[-1] == ["system:Be brief.", "human:only this"]
