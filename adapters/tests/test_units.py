"""Unit tests: input mapping, resume parsing, entry points, models, pins."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from agentengine_runner import InvocationContext, invocation_scope
from conftest import REPO
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agentengine_adapters import inputs, models, pins, resume
from agentengine_adapters.config import Settings
from agentengine_adapters.interrupts import Approval
from agentengine_adapters.loader import parse_entry
from agentengine_adapters.scripted import ScriptedChatModel
from agentengine_adapters.think import ThinkSplitter

# -- input mapping ------------------------------------------------------------------------


def test_history_maps_tool_pairs_and_drops_dangling_calls() -> None:
    history = [
        {"role": "user", "content": "hi", "type": "user_message"},
        {"role": "assistant", "content": "[tool_call] f({})", "type": "tool_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'},
        {"role": "assistant", "content": "[tool_call] g({})", "type": "tool_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"role": "user", "content": "[tool_result] f: 42", "type": "tool_result", "call_id": "c1", "name": "f"},
        {"role": "assistant", "content": "[tool_call] h({})", "type": "tool_call", "call_id": "c3", "name": "h", "arguments": "{}"},
        {"role": "assistant", "content": "summary so far", "type": "context_checkpoint"},
        {"role": "assistant", "content": "the answer", "type": "assistant_message"},
    ]
    out = inputs.history_messages(history)
    assert isinstance(out[0], HumanMessage) and out[0].text == "hi"
    assert isinstance(out[1], AIMessage) and out[1].tool_calls == [{"id": "c1", "name": "f", "args": {"a": 1}, "type": "tool_call"}]
    # c2 and c3 have no result: kept as text, never as a dangling structured call.
    assert out[2].text == "[tool_call] g({})" and not out[2].tool_calls
    assert isinstance(out[3], ToolMessage) and out[3].tool_call_id == "c1" and out[3].text == "42"
    assert isinstance(out[5], SystemMessage) and "summary so far" in out[5].text
    assert isinstance(out[6], AIMessage) and out[6].text == "the answer"


def test_current_input_blocks_and_model_capabilities() -> None:
    payload = {
        "input": "look",
        "input_content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
            {"type": "input_file", "file_url": "https://example.com/a.pdf", "filename": "a.pdf"},
            {"type": "input_file", "file_data": "data:text/csv;base64,YSxi", "filename": "t.csv"},
        ],
        "current_attachment_results": [{"filename": "a.pdf", "text": "pdf text"}],
    }
    message = inputs.human_message(payload)
    blocks = message.content_blocks
    assert blocks[0] == {"type": "text", "text": "look"}
    assert blocks[1]["type"] == "image" and blocks[1]["base64"] == "iVBORw0KGgo=" and blocks[1]["mime_type"] == "image/png"
    assert blocks[2]["type"] == "file" and blocks[2]["url"] == "https://example.com/a.pdf" and blocks[2]["filename"] == "a.pdf"
    assert blocks[3]["text"] == "[Attachment a.pdf]\npdf text"
    # The CSV is not sent raw (chat APIs reject it): its extracted text stands in.
    assert len(blocks) == 4
    text_only = inputs.human_message({**payload, "model_metadata": {"capabilities": {"multimodal_input_image": False}}})
    assert [b["type"] for b in text_only.content_blocks] == ["text", "file", "text"]
    files_ok = inputs.human_message({**payload, "model_metadata": {"capabilities": {"multimodal_input_file": True}}})
    assert [b.get("mime_type") for b in files_ok.content_blocks if b["type"] == "file"] == [None, "text/csv"]


def test_default_graph_input_fills_declared_fields() -> None:
    payload = {"input": "q?", "attachments": [{"id": "a"}], "instructions": "sys"}
    ctx = {"kb_context": {"docs": 1}, "history": []}
    state = inputs.graph_input(payload, ctx, input_keys=["messages", "query", "attachments", "kb_context"], existing=None)
    assert state["query"] == "q?" and state["attachments"] == [{"id": "a"}] and state["kb_context"] == {"docs": 1}
    system, human = state["messages"]
    assert system.id == inputs.INSTRUCTIONS_ID and system.text.startswith("sys") and "Knowledge base context" in system.text
    assert human.text == "q?"


# -- resume parsing -------------------------------------------------------------------------


def hitl(i: int, *, allowed: tuple[str, ...] = ("approve", "edit", "reject", "respond")) -> Approval:
    return Approval(id=f"I:{i}", interrupt_id="I", kind="hitl", index=i, count=2, call_id=f"c{i}", name=f"t{i}", allowed=allowed)


def test_answers_from_items_outputs_and_the_host_resume() -> None:
    payload = {
        "input": [
            {"type": "mcp_approval_response", "approval_request_id": "I:0", "approve": False, "reason": "no"},
            {"type": "function_call_output", "call_id": "c1", "output": "the tool's answer"},
        ]
    }
    a, b = resume.parse_answers(payload)
    assert (a.approval_id, a.approve, a.reason) == ("I:0", False, "no")
    assert (b.call_id, b.approve, b.output) == ("c1", True, "the tool's answer")
    plan = resume.plan([a, b], [hitl(0), hitl(1)])
    assert plan.values == {"I": {"decisions": [{"type": "reject", "message": "no"}, {"type": "respond", "message": "the tool's answer"}]}}
    # A function_call_output the host matched to an approval id through payload.resume.
    (c,) = resume.parse_answers(
        {
            "input": {"type": "function_call_output", "call_id": "x", "output": '{"approved": true}'},
            "resume": {"approval_request_id": "I:1"},
        }
    )
    assert c.approval_id == "I:1" and c.approve and c.output is None


def test_partial_hitl_answers_wait_and_unknown_ids_fail() -> None:
    (a,) = resume.parse_answers({"input": {"approval_request_id": "I:1", "approve": True}})
    plan = resume.plan([a], [hitl(0), hitl(1)])
    assert not plan.values and [w.id for w in plan.waiting] == ["I:0"]
    assert plan.partial == {"I": {"1": {"type": "approve"}}}
    (b,) = resume.parse_answers({"input": {"approval_request_id": "I:0", "approve": True, "arguments": {"x": 1}}})
    done = resume.plan([b], [hitl(0), hitl(1)], plan.partial)
    assert done.values == {"I": {"decisions": [{"type": "edit", "edited_action": {"name": "t0", "args": {"x": 1}}}, {"type": "approve"}]}}
    with pytest.raises(Exception, match="no pending interrupt matches approval 'zzz'"):
        resume.plan(resume.parse_answers({"input": {"approval_request_id": "zzz", "approve": True}}), [hitl(0)])


def test_generic_interrupt_value_keeps_the_item() -> None:
    answers = resume.parse_answers({"input": {"type": "mcp_approval_response", "approval_request_id": "g", "approve": True}})
    plan = resume.plan(answers, [Approval(id="g", interrupt_id="g", kind="interrupt")])
    assert plan.values["g"]["approve"] is True and plan.values["g"]["approved"] is True
    assert plan.values["g"]["type"] == "mcp_approval_response"


def test_langgraph_resume_value_reaches_interrupt_unchanged() -> None:
    """An answer from LangGraph's API (Command(resume=value)) carries the value as sent."""
    for value in (False, "later", {"approve": False, "reason": "no"}, [1, 2]):
        item = {"type": "mcp_approval_response", "approval_request_id": "g", "approve": False, resume.LANGGRAPH_RESUME: value}
        plan = resume.plan(resume.parse_answers({"input": item}), [Approval(id="g", interrupt_id="g", kind="interrupt")])
        assert plan.values == {"g": value}


def test_node_updates_are_forwarded_only_when_asked() -> None:
    from agentengine_adapters.langgraph_bridge import UPDATES_FLAG, wants_updates

    assert wants_updates({"metadata": {UPDATES_FLAG: "1"}})
    assert not wants_updates({"metadata": {"other": "1"}})
    assert not wants_updates({"metadata": None})
    assert not wants_updates({})


# -- think tags -----------------------------------------------------------------------------


def test_think_splitter_handles_split_tags() -> None:
    s = ThinkSplitter()
    out = []
    for piece in ["<thi", "nk>plan", " it</th", "ink>\nAnswer", " here"]:
        out += s.feed(piece)
    out += s.flush()
    reasoning = "".join(t for k, t in out if k == "reasoning")
    answer = "".join(t for k, t in out if k == "text")
    assert (reasoning, answer) == ("plan it", "Answer here")
    plain = ThinkSplitter()
    assert plain.feed("I <think> not") + plain.flush() == [("text", "I <think> not")]


# -- entry points ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "module", "attr", "file"),
    [
        ("agent.py", "agent", "root_agent", "agent.py"),
        ("agent.py:graph", "agent", "graph", "agent.py"),
        ("./pkg/agent.py:graph", "pkg.agent", "graph", "pkg/agent.py"),
        ("src/pkg/agent.py:graph", "pkg.agent", "graph", "src/pkg/agent.py"),
        ("pkg.module:graph", "pkg.module", "graph", None),
        ("pkg.module", "pkg.module", "root_agent", None),
    ],
)
def test_parse_entry(tmp_path: Path, entry: str, module: str, attr: str, file: str | None) -> None:
    spec = parse_entry(entry, "root_agent", tmp_path)
    assert (spec.module, spec.attr) == (module, attr)
    assert spec.file == (tmp_path / file if file else None)


def test_settings_from_env_defaults(tmp_path: Path) -> None:
    (tmp_path / "langgraph.json").write_text('{"graphs": {"g": "./graph.py:graph"}}')
    s = Settings.from_env({"AGENTENGINE_PROJECT_DIR": str(tmp_path)})
    assert (s.framework, s.entry_point, s.agent_variable) == ("langgraph", "./graph.py:graph", "root_agent")
    assert s.checkpoint_path == tmp_path / ".agentengine" / "checkpoints.sqlite"


# -- models -----------------------------------------------------------------------------------


@pytest.mark.langchain  # langchain-openai
def test_chat_model_is_scripted_offline_and_openai_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(models.chat_model(), ScriptedChatModel)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL_NAME", "my-model")
    llm: Any = models.chat_model()
    assert llm.model_name == "my-model" and llm.openai_api_base == "http://127.0.0.1:9/v1"
    ctx = InvocationContext(model_options={"model": "other", "temperature": 0.2, "delay_ms": 5})
    with invocation_scope(ctx):
        payload = llm._get_request_payload([HumanMessage("hi")])
    assert payload["model"] == "other" and payload["temperature"] == 0.2 and "delay_ms" not in payload
    assert llm._get_request_payload([HumanMessage("hi")])["model"] == "my-model"
    monkeypatch.setenv("AGENTENGINE_MODEL", "scripted")
    assert isinstance(models.chat_model(), ScriptedChatModel)


def test_scripted_model_is_deterministic_and_scriptable() -> None:
    a = ScriptedChatModel().invoke("what is the weather in Rome?")
    b = ScriptedChatModel().invoke("what is the weather in Rome?")
    assert a.text == b.text == "You said: what is the weather in Rome?"
    fixed = ScriptedChatModel(responses=["one", AIMessage("two")])
    assert fixed.invoke([HumanMessage("x")]).text == "one"
    assert fixed.invoke([HumanMessage("x"), AIMessage("one"), HumanMessage("y")]).text == "two"
    chunks = asyncio.run(_collect(ScriptedChatModel().astream("hello big world")))
    assert [c.text for c in chunks if c.text] == ["You ", "said: ", "hello ", "big ", "world"]


async def _collect(stream: Any) -> list[Any]:
    return [c async for c in stream]


# -- pins -----------------------------------------------------------------------------------


def constraint_pins() -> dict[str, str]:
    text = (REPO / "pluginsdk" / "python" / "constraints.txt").read_text()
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", text, re.M)}


def test_pins_match_the_constraints_file() -> None:
    pinned = constraint_pins()
    for name, version in pins.FRAMEWORK.items():
        assert pinned[name] == version, name


def test_runtime_requirements_are_the_runner_requirements_file() -> None:
    assert pins.RUNNER_REQUIREMENTS == REPO / "pluginsdk" / "python" / "runner-requirements.txt"
    assert pins.runtime() == pins.RUNTIME
    assert pins.runtime(REPO / "no-such-file") == pins.RUNTIME


@pytest.mark.parametrize(
    ("version", "spec", "ok"),
    [
        ("4.25.0", ">=4.25,<8", True),
        ("7.36.2", ">=4.25,<8", True),
        ("3.20.3", ">=4.25,<8", False),
        ("8.0.0", ">=4.25,<8", False),
        ("1.60.0", ">=1.60", True),
        ("1.59.3", ">=1.60", False),
        ("1.62.0rc1", ">=1.60", True),
        ("2.0", "==2.0.0", True),
    ],
)
def test_satisfies(version: str, spec: str, ok: bool) -> None:
    assert pins.satisfies(version, spec) is ok


# -- a project that does not load ------------------------------------------------------------


def test_missing_variable_gives_a_runner_that_describes_and_fails_runs(project: Any) -> None:
    from conftest import errors, kinds, make_runner, run, turn

    from agentengine_adapters.broken import BrokenRunner

    settings = project("x = 1\n", variable="graph")
    runner = make_runner(settings)
    assert isinstance(runner, BrokenRunner)
    assert runner.describe().agent_name == "proj"

    async def go() -> list[list[Any]]:
        return [await turn(runner, "a"), await turn(runner, "b")]

    for events in run(go):
        assert kinds(events) == ["error"]
        assert errors(events)[0].message.startswith("EntryPointError: module 'agent' has no attribute 'graph'")


def test_a_hook_rewritten_text_keeps_the_turn_s_images() -> None:
    from agentengine_adapters.inputs import human_message, with_text

    payload = {
        "input": "what is this?",
        "input_content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": "https://example.com/cat.png"},
        ],
    }
    message = human_message(with_text(payload, "Q: what is this?"))
    blocks = message.content_blocks
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert blocks[0]["text"] == "Q: what is this?" and blocks[1]["url"] == "https://example.com/cat.png"


def test_model_name_comes_from_the_providers_response_metadata() -> None:
    from agentengine_adapters.stream import model_name

    assert model_name(AIMessage("x", response_metadata={"model_name": "gpt-x"})) == "gpt-x"
    assert model_name(AIMessage("x", response_metadata={"model": "llama"})) == "llama"
    assert model_name(AIMessage("x")) == ""


def test_reasoning_of_a_complete_message_is_what_its_content_blocks_say() -> None:
    from langchain_core.messages import AIMessage

    from agentengine_adapters.stream import _reasoning

    cases = [
        (AIMessage("plain answer"), []),
        (AIMessage([{"type": "reasoning", "reasoning": "r1"}, {"type": "text", "text": "a"}]), ["r1"]),
        (AIMessage("a", additional_kwargs={"reasoning_content": "r2"}), ["r2"]),
        (AIMessage([{"type": "thinking", "thinking": "r3"}, {"type": "text", "text": "a"}],
                   response_metadata={"model_provider": "anthropic"}), ["r3"]),
        (AIMessage("a", additional_kwargs={"other": 1}), []),
    ]
    for message, want in cases:
        blocks = [str(b.get("reasoning") or "") for b in message.content_blocks if b.get("type") == "reasoning"]
        assert _reasoning(message) == blocks == want, message
