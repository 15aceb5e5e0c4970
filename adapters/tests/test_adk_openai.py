"""OpenAiAdkLlm against a local fake Chat Completions server (stdlib, offline)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import run
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from agentengine_adapters.adk_openai import OpenAiAdkLlm, to_tools
from agentengine_adapters.models import adk_model

KEY = "sk-test-123"
CALL_ID = "call_abc123"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


USAGE = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": [],
         "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}

# The tool call arrives split over three deltas, as OpenAI streams it: id and name first.
TOOL_TURN = [
    chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": CALL_ID, "type": "function",
                                                "function": {"name": "get_weather", "arguments": ""}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
    chunk({}, "tool_calls"),
    USAGE,
]
TEXT_TURN = [
    chunk({"role": "assistant", "content": "It is "}),
    chunk({"content": "sunny "}),
    chunk({"content": "in Paris."}),
    chunk({}, "stop"),
    USAGE,
]


class FakeOpenAI:
    """Serves scripted SSE turns in order (the last one repeats) and keeps every request."""

    def __init__(self, turns: list[list[dict[str, Any]]]) -> None:
        self.turns = turns
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                chunks = fake.turns[min(len(fake.requests) - 1, len(fake.turns) - 1)]
                if body.get("stream"):
                    data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                    self._send("text/event-stream", data.encode())
                else:
                    self._send("application/json", json.dumps(completion(chunks)).encode())

            def _send(self, kind: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def completion(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streamed form of a scripted turn."""
    text, calls, finish = "", {}, "stop"
    for c in chunks:
        for choice in c["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            finish = choice["finish_reason"] or finish
            for tc in delta.get("tool_calls") or []:
                call = calls.setdefault(tc["index"], {"id": tc.get("id"), "type": "function",
                                                      "function": {"name": "", "arguments": ""}})
                call["function"]["name"] += tc["function"].get("name") or ""
                call["function"]["arguments"] += tc["function"].get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": USAGE["usage"]}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI([TOOL_TURN, TEXT_TURN])
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def env(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    monkeypatch.setenv("OPENAI_MODEL_NAME", "fake-model")
    return fake


def get_weather(city: str) -> dict[str, str]:
    """Returns the weather forecast for a city."""
    RAN.append(city)
    return {"city": city, "forecast": "sunny"}


RAN: list[str] = []


async def collect(model: OpenAiAdkLlm, request: LlmRequest, stream: bool) -> list[Any]:
    return [r async for r in model.generate_content_async(request, stream=stream)]


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def test_adk_model_is_the_openai_model_with_a_key(env: FakeOpenAI) -> None:
    model = adk_model()
    assert isinstance(model, OpenAiAdkLlm) and model.model == "fake-model"
    assert KEY not in repr(model) and "api_key" not in model.model_dump()


@pytest.mark.parametrize("stream", [True, False])
def test_text_streams_partials_then_one_final_response(env: FakeOpenAI, stream: bool) -> None:
    env.turns = [TEXT_TURN]
    request = LlmRequest(contents=[user("weather?")],
                         config=types.GenerateContentConfig(system_instruction="Be brief.", temperature=0.2))
    responses = run(lambda: collect(OpenAiAdkLlm(), request, stream))
    partials, finals = [r for r in responses if r.partial], [r for r in responses if not r.partial]
    if stream:
        assert [p.content.parts[0].text for p in partials] == ["It is ", "sunny ", "in Paris."]
        assert responses[-1] is finals[0]
    else:
        assert partials == []
    assert len(finals) == 1
    final = finals[0]
    assert [p.text for p in final.content.parts] == ["It is sunny in Paris."]
    assert final.turn_complete and final.finish_reason == types.FinishReason.STOP
    assert (final.usage_metadata.prompt_token_count, final.usage_metadata.candidates_token_count) == (7, 3)
    body = env.requests[-1]
    assert body["model"] == "fake-model" and body["temperature"] == 0.2 and bool(body.get("stream")) is stream
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "weather?"}]
    assert env.headers[-1]["authorization"] == f"Bearer {KEY}"


def test_streamed_tool_call_deltas_are_aggregated(env: FakeOpenAI) -> None:
    request = LlmRequest(contents=[user("weather in Paris")])
    responses = run(lambda: collect(OpenAiAdkLlm(), request, True))
    assert [r.partial for r in responses] == [False]  # no text, so no partials
    call = responses[0].content.parts[0].function_call
    assert (call.id, call.name, call.args) == (CALL_ID, "get_weather", {"city": "Paris"})


def test_tool_round_trip_through_an_adk_runner(env: FakeOpenAI) -> None:
    RAN.clear()
    agent = LlmAgent(name="assistant", model=adk_model(), instruction="You are a concise assistant.",
                     tools=[get_weather])
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService(),
                    auto_create_session=True)

    async def go() -> list[Any]:
        events = runner.run_async(user_id="u1", session_id="s1", new_message=user("weather in Paris?"),
                                  run_config=RunConfig(streaming_mode=StreamingMode.SSE))
        return [e async for e in events]

    events = run(go)
    assert RAN == ["Paris"]
    calls = [c for e in events for c in e.get_function_calls()]
    results = [r for e in events for r in e.get_function_responses()]
    assert [c.id for c in calls] == [CALL_ID] and [r.id for r in results] == [CALL_ID]
    final = [e for e in events if not e.partial and e.content and e.content.parts and e.content.parts[0].text]
    assert final[-1].content.parts[0].text == "It is sunny in Paris."

    first, second = env.requests
    assert first["messages"][0]["role"] == "system"
    assert "You are a concise assistant." in first["messages"][0]["content"]
    tool = first["tools"][0]["function"]
    assert tool["name"] == "get_weather"
    assert tool["parameters"]["properties"]["city"]["type"] == "string"
    assert tool["parameters"]["required"] == ["city"]
    # The follow-up carries the assistant's call and the tool's answer under the same id.
    assistant, answer = second["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [{"id": CALL_ID, "type": "function",
                                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]
    assert answer["role"] == "tool" and answer["tool_call_id"] == CALL_ID
    assert json.loads(answer["content"]) == {"city": "Paris", "forecast": "sunny"}
    assert all(h["authorization"] == f"Bearer {KEY}" for h in env.headers)


def test_genai_schema_declarations_become_json_schema() -> None:
    decl = types.FunctionDeclaration(
        name="search",
        description="Searches.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={"q": types.Schema(type=types.Type.STRING),
                        "tags": types.Schema(type=types.Type.ARRAY, items=types.Schema(type=types.Type.STRING))},
            required=["q"],
            property_ordering=["q", "tags"],
        ),
    )
    [tool] = to_tools([types.Tool(function_declarations=[decl])])
    assert tool == {"type": "function", "function": {"name": "search", "description": "Searches.", "parameters": {
        "type": "object", "required": ["q"],
        "properties": {"q": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}
