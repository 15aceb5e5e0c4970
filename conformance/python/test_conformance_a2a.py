"""The A2A Python SDK (a2a-sdk) as a client of the agents' A2A surface.

a2a-sdk speaks A2A 1.0 and, through its compatibility layer, 0.3. agentengine's cards list
both (1.0 first): the client picks 1.0 by itself, and these tests go through that client's
card resolution, transport selection and event handling, unchanged; one test takes the
card's 0.3 interface alone, so the compatibility layer against the 0.3 binding is covered
too."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from contextlib import aclosing
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError
from google.protobuf import json_format

from conformance_fixtures import agentengine_bin, server  # noqa: F401 (fixtures)
from conformance_server import MODEL, Server, start_server, stop_server

APPROVE_INPUT = "please approve deleting notes.txt"
ALICE_KEY = "a2a-alice-key-0123456789"
BOB_KEY = "a2a-bob-key-0123456789ab"
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def message(*parts: Part, task_id: str = "", context_id: str = "") -> Message:
    return Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=list(parts), task_id=task_id, context_id=context_id)


def slow(req: SendMessageRequest, deltas: int = 200, delay_ms: int = 20) -> SendMessageRequest:
    """The echo agent pauses before each of many deltas (its per-request model options)."""
    req.metadata.update({"agentengine": {"model_options": {"delay_ms": delay_ms, "deltas": deltas}}})
    return req


async def connect(base: str, headers: dict[str, str] | None = None, *, streaming: bool = True) -> tuple[httpx.AsyncClient, Client, AgentCard]:
    hc = httpx.AsyncClient(timeout=30, headers=headers or {})
    card = await A2ACardResolver(hc, f"{base}/a2a/{MODEL}").get_agent_card()
    return hc, ClientFactory(ClientConfig(httpx_client=hc, streaming=streaming)).create(card), card


async def collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [ev async for ev in stream]


def artifact_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


def last_task_of(events: list[StreamResponse]) -> tuple[str, str, TaskState]:
    """The task id, context id and final state an event stream reports."""
    first = events[0]
    assert first.HasField("task"), first
    end = events[-1]
    assert end.HasField("status_update"), end
    return first.task.id, first.task.context_id, end.status_update.status.state


def test_card_resolution(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        async with httpx.AsyncClient(timeout=30) as hc:
            card = await A2ACardResolver(hc, f"{server.origin}/a2a/{MODEL}").get_agent_card()
            default = await A2ACardResolver(hc, server.origin).get_agent_card()
        assert card.name == MODEL and default.name == MODEL
        assert card.capabilities.streaming
        assert card.skills and card.default_input_modes and card.default_output_modes
        urls = {(i.url, i.protocol_binding, i.protocol_version) for i in card.supported_interfaces}
        assert (f"{server.origin}/a2a/{MODEL}", "JSONRPC", "0.3.0") in urls

    run(go())


async def recorded_methods(base: str, card_filter: Callable[[AgentCard], None] | None = None) -> tuple[list[str], Task]:
    """Sends one message with a client over the card (card_filter, when set, edits it
    first) and returns the JSON-RPC methods the client called, and the task."""
    methods: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            methods.append(json.loads(request.content)["method"])

    hc = httpx.AsyncClient(timeout=30, event_hooks={"request": [record]})
    async with aclosing(hc):
        card = await A2ACardResolver(hc, f"{base}/a2a/{MODEL}").get_agent_card()
        if card_filter is not None:
            card_filter(card)
        client = ClientFactory(ClientConfig(httpx_client=hc, streaming=False)).create(card)
        events = await collect(client.send_message(SendMessageRequest(message=message(Part(text="which version?")))))
    assert len(events) == 1 and events[0].HasField("task"), events
    return methods, events[0].task


def test_default_client_speaks_1_0(server: Server) -> None:  # noqa: F811
    methods, task = run(recorded_methods(server.origin))
    assert methods == ["SendMessage"]
    assert task.status.state == TaskState.TASK_STATE_COMPLETED and artifact_text(task) == "Echo: which version?"


def test_0_3_interface_through_the_compat_layer(server: Server) -> None:  # noqa: F811
    def only_0_3(card: AgentCard) -> None:
        keep = [i for i in card.supported_interfaces if i.protocol_version.startswith("0.3")]
        assert len(keep) == 1, card.supported_interfaces
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)

    methods, task = run(recorded_methods(server.origin, only_0_3))
    assert methods == ["message/send"]
    assert task.status.state == TaskState.TASK_STATE_COMPLETED and artifact_text(task) == "Echo: which version?"


def test_send(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin, streaming=False)
        async with aclosing(hc):
            events = await collect(client.send_message(SendMessageRequest(message=message(Part(text="hello there")))))
        assert len(events) == 1 and events[0].HasField("task")
        task = events[0].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert artifact_text(task) == "Echo: hello there"
        assert task.context_id and task.id
        assert [m.role for m in task.history] == [Role.ROLE_USER, Role.ROLE_AGENT]

    run(go())


def test_stream_in_pieces(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin)
        async with aclosing(hc):
            events = await collect(client.send_message(SendMessageRequest(message=message(Part(text="one two three four five")))))
        _, _, state = last_task_of(events)
        assert state == TaskState.TASK_STATE_COMPLETED
        chunks = [ev.artifact_update for ev in events if ev.HasField("artifact_update")]
        assert len(chunks) >= 5
        pieces, last = chunks[:-1], chunks[-1]
        assert not pieces[0].append and all(c.append for c in pieces[1:])
        assert not any(c.last_chunk for c in pieces)
        assert "".join(p.text for c in pieces for p in c.artifact.parts) == "Echo: one two three four five"
        # The last chunk replaces the artifact with the whole message.
        assert last.last_chunk and not last.append
        assert "".join(p.text for p in last.artifact.parts) == "Echo: one two three four five"

    run(go())


def test_second_message_on_the_context_sees_the_first(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin, streaming=False)
        async with aclosing(hc):
            first = (await collect(client.send_message(SendMessageRequest(message=message(Part(text="remember the tulips"))))))[0].task
            second = (await collect(client.send_message(SendMessageRequest(message=message(Part(text="history"), context_id=first.context_id)))))[0].task
        assert second.context_id == first.context_id and second.id != first.id
        assert "First user message: remember the tulips" in artifact_text(second)

    run(go())


@pytest.mark.parametrize("answer", ["data", "text"])
def test_approval_round_trip(server: Server, answer: str) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin)
        async with aclosing(hc):
            events = await collect(client.send_message(SendMessageRequest(message=message(Part(text=APPROVE_INPUT)))))
            task_id, context_id, state = last_task_of(events)
            assert state == TaskState.TASK_STATE_INPUT_REQUIRED
            status_msg = events[-1].status_update.status.message
            requests = [json_format.MessageToDict(p.data) for p in status_msg.parts if p.HasField("data")]
            assert len(requests) == 1
            assert requests[0]["type"] == "approval_request" and requests[0]["name"] == "delete_file"
            assert requests[0]["arguments"] == {"path": "notes.txt"}

            part = Part(text="approve") if answer == "text" else Part(data=json_format.ParseDict({"approve": True}, Part().data))
            done = await collect(client.send_message(SendMessageRequest(message=message(part, task_id=task_id, context_id=context_id))))
            _, _, state = last_task_of(done)
            assert state == TaskState.TASK_STATE_COMPLETED
            task = await client.get_task(GetTaskRequest(id=task_id))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert artifact_text(task).endswith("Approved: deleted notes.txt.")

    run(go())


def test_cancel(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin, streaming=False)
        async with aclosing(hc):
            req = slow(SendMessageRequest(message=message(Part(text="a long answer")), configuration=SendMessageConfiguration(return_immediately=True)))
            task = (await collect(client.send_message(req)))[0].task
            assert task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
            cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
            again = await client.get_task(GetTaskRequest(id=task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        assert again.status.state == TaskState.TASK_STATE_CANCELED

    run(go())


def test_resubscribe_after_a_dropped_stream(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin)
        async with aclosing(hc):
            stream = client.send_message(slow(SendMessageRequest(message=message(Part(text="go"))), deltas=30, delay_ms=10))
            seen: list[StreamResponse] = []
            async for ev in stream:
                seen.append(ev)
                if len(seen) == 4:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
            task_id = seen[0].task.id
            events = await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))
            task = await client.get_task(GetTaskRequest(id=task_id))
        chunks = [ev.artifact_update for ev in events if ev.HasField("artifact_update")]
        assert len(chunks) == 31  # every delta from the start, then the whole message
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        assert "".join(p.text for c in chunks[:-1] for p in c.artifact.parts) == artifact_text(task)
        assert "".join(p.text for p in chunks[-1].artifact.parts) == artifact_text(task)

    run(go())


def test_get_task_history_length(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        hc, client, _ = await connect(server.origin, streaming=False)
        async with aclosing(hc):
            task = (await collect(client.send_message(SendMessageRequest(message=message(Part(text="use the tool on rome"))))))[0].task
            full = await client.get_task(GetTaskRequest(id=task.id))
            one = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
            two = await client.get_task(GetTaskRequest(id=task.id, history_length=2))
        assert len(full.history) == 4  # the input, the tool call, its result, the answer
        assert len(one.history) == 1 and one.history[0].role == Role.ROLE_AGENT
        assert [m.message_id for m in two.history] == [m.message_id for m in full.history[-2:]]

    run(go())


@pytest.fixture(scope="module")
def keyed_server(agentengine_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:  # noqa: F811
    tokens: Path = tmp_path_factory.mktemp("a2a-keys") / "tokens"
    tokens.write_text(f"{ALICE_KEY} alice\n{BOB_KEY} bob\n")
    srv = start_server(agentengine_bin, flags=["--tokens", str(tokens)])
    try:
        yield srv
    finally:
        stop_server(srv.proc)


def test_bob_cannot_reach_alices_tasks(keyed_server: Server) -> None:
    async def go() -> None:
        ahc, alice, card = await connect(keyed_server.origin, {"Authorization": f"Bearer {ALICE_KEY}"}, streaming=False)
        bhc, bob, _ = await connect(keyed_server.origin, {"Authorization": f"Bearer {BOB_KEY}"}, streaming=False)
        async with aclosing(ahc), aclosing(bhc):
            assert "bearer" in card.security_schemes
            done = (await collect(alice.send_message(SendMessageRequest(message=message(Part(text="alice's secret"))))))[0].task
            waiting = (await collect(alice.send_message(SendMessageRequest(message=message(Part(text=APPROVE_INPUT))))))[0].task
            assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            for call in (
                bob.get_task(GetTaskRequest(id=done.id)),
                bob.cancel_task(CancelTaskRequest(id=waiting.id)),
                collect(bob.send_message(SendMessageRequest(message=message(Part(text="approve"), task_id=waiting.id)))),
            ):
                with pytest.raises(TaskNotFoundError):
                    await call
            # Bob naming alice's context talks in a conversation of his own.
            his = (await collect(bob.send_message(SendMessageRequest(message=message(Part(text="history"), context_id=done.context_id)))))[0].task
            assert "secret" not in artifact_text(his) and "History: 0 messages" in artifact_text(his)
            still = await alice.get_task(GetTaskRequest(id=waiting.id))
            assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        async with httpx.AsyncClient(timeout=30) as anon:
            res = await anon.post(f"{keyed_server.origin}/a2a/{MODEL}", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": done.id}})
            assert res.status_code == 401 and res.json()["error"]["code"] == -32600

    run(go())


class Webhook:
    """A local webhook that records the tasks posted to it and the token header."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, Any], str]] = []
        self.lock = threading.Lock()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with hook.lock:
                    hook.received.append((json.loads(body), self.headers.get("X-A2A-Notification-Token", "")))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, state: str) -> list[tuple[dict[str, Any], str]]:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with self.lock:
                got = list(self.received)
            if any(task["status"]["state"] == state for task, _ in got):
                return got
            time.sleep(0.02)
        raise AssertionError(f"no {state} task posted; got {got}")


@pytest.fixture(scope="module")
def push_server(agentengine_bin: str) -> Iterator[Server]:  # noqa: F811
    srv = start_server(agentengine_bin, flags=["--a2a-push-allow-private"])
    try:
        yield srv
    finally:
        stop_server(srv.proc)


def test_push_notifications(push_server: Server) -> None:
    hook = Webhook()

    async def go() -> None:
        hc, client, card = await connect(push_server.origin, streaming=False)
        async with aclosing(hc):
            assert card.capabilities.push_notifications
            req = slow(SendMessageRequest(message=message(Part(text="a long answer")), configuration=SendMessageConfiguration(return_immediately=True)), deltas=100, delay_ms=10)
            task = (await collect(client.send_message(req)))[0].task
            config = await client.create_task_push_notification_config(TaskPushNotificationConfig(task_id=task.id, url=hook.url, token="client-token"))
            assert config.url == hook.url and config.task_id == task.id
            got = hook.wait_for("completed")
            done = [t for t, _ in got if t["status"]["state"] == "completed"][-1]
            assert done["id"] == task.id and done["kind"] == "task"
            assert all(token == "client-token" for _, token in got)
            listed = await client.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id))
            assert [c.url for c in listed.configs] == [hook.url]
            fetched = await client.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=task.id, id=config.id))
            assert fetched.token == "client-token"
            await client.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=config.id))
            listed = await client.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id))
            assert not listed.configs

    try:
        run(go())
    finally:
        hook.server.shutdown()
