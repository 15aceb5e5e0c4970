"""The project matrix: KsADK-style sample projects, each set up by `agentengine run` in a
virtualenv made only from its own requirements.txt, driven through /v1/responses and
/v1/chat/completions with the official openai client. The model is the framework's real
OpenAI integration pointed at fake_model.FakeModel.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from openai import OpenAI

import harness
from fake_model import FakeModel, text_of

CASES: tuple[str, ...] = ("stream_text", "tool_call", "two_turns", "approval", "chat_tool_call", "chat_two_turns", "chat_approval")

# project -> its cases. The samples (samples/NAME) run every case; their guarded tool pauses
# the run with the framework's own mechanism: LangGraph interrupt(), LangChain's
# HumanInTheLoopMiddleware, DeepAgents' interrupt_on, ADK's tool confirmation.
PROJECTS: dict[str, tuple[str, ...]] = {
    s: CASES
    for s in (
        "langgraph",
        "langchain",
        "deepagents",
        "adk-1",
        "adk-2",
        "ksadk-langgraph",
        "ksadk-adk",
        "ksadk-deepagents",
        # runner_class: a LangGraphRunner subclass answers (in ksadk-langgraph's environment)
        "ksadk-runner-class",
    )
}
PROJECTS["ksadk-runner-class"] += ("runner_class_status",)
# The repository's examples (example-NAME = examples/NAME), each in an environment made from
# its own requirements.txt, with the cases their tools allow.
PROJECTS |= {
    "example-langgraph-chat": CASES,
    "example-langchain-qa": ("stream_text", "two_turns", "chat_two_turns"),
    "example-deepagents-research": ("stream_text", "two_turns", "chat_two_turns"),
    "example-adk-assistant": ("stream_text", "tool_call", "two_turns", "chat_tool_call", "chat_two_turns"),
}
ONLY = [s for s in os.environ.get("AGENTENGINE_MATRIX_ONLY", "").split(",") if s]

# (project, case) -> what is missing for it to pass. Each entry names the missing piece.
KNOWN_GAPS: dict[tuple[str, str], str] = {}


def params() -> list[Any]:
    out = []
    for name, cases in PROJECTS.items():
        if ONLY and name not in ONLY:
            continue
        for case in cases:
            marks = []
            reason = KNOWN_GAPS.get((name, case)) or KNOWN_GAPS.get((name, "*"))
            if reason:
                marks.append(pytest.mark.xfail(reason=reason, strict=False))
            out.append(pytest.param(name, case, id=f"{name}-{case}", marks=marks))
    return out


def weather_reply(p: Project, city: str, station: int) -> list[str]:
    """What the final text must contain after get_weather(city): the samples' tool output
    exactly; for an example (its own tool), the city and "sunny" after the fake's "Done."."""
    if p.sample.startswith("example-"):
        return ["Done. ", city, "sunny"]
    return [f"Weather in {city}: sunny, 21 C (station {station})."]


@dataclass
class Project:
    sample: str
    model: str  # the agentengine model id (the project's name)
    llm: str  # OPENAI_MODEL_NAME: what the agent asks the fake model for
    served: harness.Served | None
    error: str
    seconds: float  # how long prepare + `agentengine run` took to serve

    def client(self) -> OpenAI:
        if self.served is None:
            pytest.fail(f"{self.sample}: agentengine run did not serve the project:\n{self.error[-4000:]}", pytrace=False)
        return OpenAI(base_url=self.served.base_url, api_key="x", max_retries=0, timeout=180.0)

    def logs(self) -> str:
        return self.served.logs()[-4000:] if self.served else self.error[-4000:]


class Starter:
    """Starts the samples' servers in test order, at most `slots` alive at once: the next
    sample's `agentengine run` (a first run installs its environment) overlaps the current
    sample's cases. A sample's slot is freed when its last case has run."""

    def __init__(self, samples: list[str], model_url: str, bin_path: str, slots: int) -> None:
        self._url, self._bin = model_url, bin_path
        self._slots = threading.Semaphore(slots)
        self._closing = False
        self._done: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="matrix-start")
        self._futures: dict[str, Future[Project]] = {}
        # Starts are queued in test order (a slot is freed only when a sample's cases have
        # run, so a sample queued ahead of its turn would hold a slot the current sample
        # waits for), except that a sample running in another's environment comes right
        # after that one (see _start).
        ordered: list[str] = []
        for s in samples:
            owner = harness.SHARED_ENV.get(s)
            if owner in samples and owner not in ordered:
                ordered.append(owner)
            if s not in ordered:
                ordered.append(s)
        for s in ordered:
            self._futures[s] = self._pool.submit(self._start, s)

    def _start(self, sample: str) -> Project:
        self._slots.acquire()
        if self._closing:
            return Project(sample, f"matrix-{sample}", f"fake-{sample}", None, "not started: the session ended", 0.0)
        t0 = time.monotonic()
        served, error = None, ""
        model = sample
        try:
            owner = harness.SHARED_ENV.get(sample)
            if owner in self._futures:
                self._futures[owner].result()  # its `agentengine run` makes the environment
            elif owner is not None:
                harness.setup(harness.prepare(owner, self._url), self._bin)
            d = harness.prepare(sample, self._url)
            model = harness.model_id(d)
            served = harness.serve(d, self._bin)
        except Exception as e:  # reported by each case, in its body, so xfail marks apply
            error = str(e)
            self._slots.release()
        took = time.monotonic() - t0
        print(f"\n[matrix] {sample}: {'served' if served else 'FAILED to serve'} after {took:.1f}s", flush=True)
        return Project(sample, model, f"fake-{sample}", served, error, took)

    def get(self, sample: str) -> Project:
        return self._futures[sample].result()

    def done(self, sample: str) -> None:
        p = self.get(sample)
        if p.served and sample not in self._done:
            self._done.add(sample)
            p.served.stop()
            self._slots.release()

    def close(self) -> None:
        self._closing = True
        for f in self._futures.values():
            f.cancel()
        for _ in self._futures:  # wake starts still waiting for a slot: they return at once
            self._slots.release()
        for f in self._futures.values():
            if not f.cancelled() and (p := f.result()).served:
                p.served.stop()
        self._pool.shutdown(wait=True)


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeModel]:
    f = FakeModel().start()
    yield f
    f.stop()


@pytest.fixture(scope="session")
def starter(request: pytest.FixtureRequest, fake: FakeModel) -> Iterator[tuple[Starter, Counter[str]]]:
    order = [i.callspec.params["sample"] for i in request.session.items if hasattr(i, "callspec")]
    left = Counter(order)
    slots = int(os.environ.get("AGENTENGINE_MATRIX_PARALLEL", "2"))
    st = Starter(list(dict.fromkeys(order)), fake.url, harness.binary(), max(1, slots))
    yield st, left
    st.close()


@pytest.fixture
def project(request: pytest.FixtureRequest, starter: tuple[Starter, Counter[str]]) -> Iterator[Project]:
    st, left = starter
    sample: str = request.node.callspec.params["sample"]
    yield st.get(sample)
    left[sample] -= 1
    if left[sample] == 0:
        st.done(sample)


@pytest.mark.parametrize(("sample", "case"), params())
def test_matrix(sample: str, case: str, project: Project, fake: FakeModel) -> None:
    globals()[f"case_{case}"](project, fake)


# --- the cases -----------------------------------------------------------------------------


def case_stream_text(p: Project, fake: FakeModel) -> None:
    """A plain turn, streamed: the model's text arrives as deltas and in the final response."""
    stream = p.client().responses.create(model=p.model, input="hello there", stream=True)
    deltas, final = [], None
    for ev in stream:
        if ev.type == "response.output_text.delta":
            deltas.append(ev.delta)
        elif ev.type in ("response.completed", "response.failed", "response.incomplete"):
            final = ev.response
    assert final is not None, p.logs()
    assert final.status == "completed", f"{final.status}: {final.error}\n{p.logs()}"
    assert final.output_text == "You said: hello there", p.logs()
    assert "".join(deltas) == final.output_text
    assert any(text_of(m.get("content")) == "hello there" for m in fake.requests(p.llm)[-1]["messages"])


def case_tool_call(p: Project, fake: FakeModel) -> None:
    """A tool call the agent runs itself: the reply quotes what only the tool computed."""
    r = p.client().responses.create(model=p.model, input="What is the weather in Paris?")
    assert r.status == "completed", f"{r.status}: {r.error}\n{p.logs()}"
    # function_call in KsADK's shape, mcp_call (a call the server ran) in OpenAI's.
    calls = [i for i in r.output if i.type in ("function_call", "mcp_call")]
    assert [c.name for c in calls] == ["get_weather"], f"{r.output}\n{p.logs()}"
    assert json.loads(calls[0].arguments) == {"city": "Paris"}
    for want in weather_reply(p, "Paris", 35):
        assert want in r.output_text, f"{r.output_text!r}\n{p.logs()}"


def case_two_turns(p: Project, fake: FakeModel) -> None:
    """previous_response_id: the second request to the model carries the first turn."""
    c = p.client()
    name = "Ada"
    first = c.responses.create(model=p.model, input=f"Hello, my name is {name}.")
    assert first.status == "completed", f"{first.status}: {first.error}\n{p.logs()}"
    assert first.output_text == f"Nice to meet you, {name}."
    second = c.responses.create(model=p.model, input="What is my name?", previous_response_id=first.id)
    assert second.status == "completed", f"{second.status}: {second.error}\n{p.logs()}"
    assert second.output_text == f"Your name is {name}.", f"{second.output_text!r}\n{p.logs()}"
    assert_remembers(fake.requests(p.llm), name)


def case_approval(p: Project, fake: FakeModel) -> None:
    """The guarded tool pauses the run; an approval resumes it and the tool runs."""
    c = p.client()
    first = c.responses.create(model=p.model, input="Please send an email to bob about the launch.")
    asks = [i for i in first.output if i.type == "mcp_approval_request"]
    # The pause ends "completed" as OpenAI's approval requests do, "incomplete" in KsADK's shape.
    assert first.status in ("completed", "incomplete") and len(asks) == 1, f"{first.status} {first.output}\n{p.logs()}"
    assert asks[0].name == "send_email", asks[0]
    assert "Email sent" not in (first.output_text or ""), "the tool ran before it was approved"
    second = c.responses.create(
        model=p.model,
        previous_response_id=first.id,
        input=[{"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}],
    )
    assert second.status == "completed", f"{second.status}: {second.error} {second.output}\n{p.logs()}"
    assert "Email sent to bob@example.com (24 characters)." in second.output_text, f"{second.output_text!r}\n{p.logs()}"


def case_chat_tool_call(p: Project, fake: FakeModel) -> None:
    """Chat Completions, streamed: a tool the agent runs, its result in the streamed text."""
    stream = p.client().chat.completions.create(model=p.model, messages=[{"role": "user", "content": "weather in Rome, please"}], stream=True)
    text, finish = "", None
    for chunk in stream:
        for ch in chunk.choices:
            text += ch.delta.content or ""
            finish = ch.finish_reason or finish
    assert finish == "stop", f"{finish} {text!r}\n{p.logs()}"
    for want in weather_reply(p, "Rome", 28):
        assert want in text, f"{text!r}\n{p.logs()}"


def case_chat_two_turns(p: Project, fake: FakeModel) -> None:
    """session_id: the second turn sends only the new message; the model still sees the first."""
    c = p.client()
    sid = "matrix-" + uuid.uuid4().hex
    first = c.chat.completions.create(model=p.model, messages=[{"role": "user", "content": "my name is Grace"}], extra_body={"session_id": sid})
    assert first.choices[0].message.content == "Nice to meet you, Grace.", p.logs()
    second = c.chat.completions.create(model=p.model, messages=[{"role": "user", "content": "what is my name?"}], extra_body={"session_id": sid})
    assert second.choices[0].message.content == "Your name is Grace.", f"{second}\n{p.logs()}"
    assert_remembers(fake.requests(p.llm), "Grace")


def case_chat_approval(p: Project, fake: FakeModel) -> None:
    """Chat Completions: the pending approval is asked in text (answered "approve") or, in
    KsADK's shape, as a tool call (answered by a tool message); the tool then runs."""
    c = p.client()
    sid = "matrix-" + uuid.uuid4().hex
    first = c.chat.completions.create(
        model=p.model,
        messages=[{"role": "user", "content": "send an email to bob"}],
        extra_body={"session_id": sid},
    )
    choice = first.choices[0]
    if choice.finish_reason == "tool_calls":
        call = (choice.message.tool_calls or [None])[0]
        assert call is not None and call.function.name == "send_email", f"{first}\n{p.logs()}"
        answer = {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"approve": True})}
    else:
        asked = choice.message.content or ""
        assert "send_email" in asked and "approve" in asked, f"{first}\n{p.logs()}"
        answer = {"role": "user", "content": "approve"}
    assert "Email sent" not in (choice.message.content or ""), "the tool ran before it was approved"
    second = c.chat.completions.create(model=p.model, messages=[answer], extra_body={"session_id": sid})
    text = second.choices[0].message.content or ""
    assert "Email sent to bob@example.com (24 characters)." in text, f"{second}\n{p.logs()}"


def case_runner_class_status(p: Project, fake: FakeModel) -> None:
    """The runner class answers a turn itself (its stream() override, no graph), from the
    history KsADK's runner interface hands it: [{role: user|model, content}]."""
    c = p.client()
    first = c.responses.create(model=p.model, input="hello there")
    assert first.output_text == "You said: hello there", f"{first}\n{p.logs()}"
    second = c.responses.create(model=p.model, input="status please", previous_response_id=first.id)
    assert second.status == "completed", f"{second.status}: {second.error}\n{p.logs()}"
    want = "FixtureRunner status: 2 earlier messages (user: hello there; model: You said: hello there)"
    assert second.output_text == want, f"{second.output_text!r}\n{p.logs()}"
    chat = c.chat.completions.create(model=p.model, messages=[{"role": "user", "content": "status now"}])
    assert chat.choices[0].message.content == "FixtureRunner status: 0 earlier messages (none)", f"{chat}\n{p.logs()}"


def assert_remembers(requests: list[dict[str, Any]], name: str) -> None:
    """The request that answered "what is my name" also carried the first turn, both sides."""
    asked = [r for r in requests if "what is my name" in text_of((r.get("messages") or [{}])[-1].get("content")).lower()]
    assert asked, "the model was never asked the second turn"
    texts = [(m.get("role"), text_of(m.get("content"))) for m in asked[-1]["messages"]]
    assert any(role == "user" and f"my name is {name.lower()}" in t.lower() for role, t in texts), texts
    assert ("assistant", f"Nice to meet you, {name}.") in texts, texts
