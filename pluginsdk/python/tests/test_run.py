"""Runs over gRPC against a real runner subprocess: events, cancellation, errors, context."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time

from client import Host, kinds
from conftest import Plugin

from agentengine_runner._proto.runner.v1 import runner_pb2 as pb


def test_every_event_kind(plugin: Plugin) -> None:
    events = asyncio.run(_events(plugin, "all"))
    assert kinds(events) == [
        "reasoning_delta",
        "text_delta",
        "message_done",
        "tool_call_delta",
        "tool_call",
        "tool_result",
        "approval_request",
        "state_delta",
        "usage",
        "native",
        "message_done",
    ]
    by = {k: e for k, e in zip(kinds(events), events, strict=True)}
    assert by["reasoning_delta"].reasoning_delta.text == "thinking"
    assert by["text_delta"].text_delta.text == "Hello"
    assert events[2].message_done.text == "Hello"
    d = by["tool_call_delta"].tool_call_delta
    assert (d.call_id, d.name, d.arguments_delta) == ("c1", "search", '{"q":')
    c = by["tool_call"].tool_call
    assert (c.call_id, c.name, json.loads(c.arguments)) == ("c1", "search", {"q": "go"})
    r = by["tool_result"].tool_result
    assert (r.call_id, r.name, r.is_error) == ("c1", "search", False)
    assert json.loads(r.output) == {"hits": 1}
    a = by["approval_request"].approval_request
    assert (a.id, a.call_id, a.name, a.message) == ("a1", "c2", "delete", "ok?")
    assert json.loads(a.arguments) == {"path": "/"}
    assert json.loads(a.detail_json) == {"kind": "interrupt"}
    assert json.loads(by["state_delta"].state_delta.delta_json) == {"k": 1, "temp:x": None}
    u = by["usage"].usage
    assert (u.input_tokens, u.output_tokens, u.reasoning_tokens, u.cached_tokens) == (3, 5, 1, 2)
    n = by["native"].native
    assert (n.framework, n.kind, json.loads(n.data_json)) == ("langgraph", "on_chain_end", {"n": 1})


async def _events(plugin: Plugin, input: str, **kw: object) -> list[pb.RunEvent]:
    async with Host(plugin.target) as host:
        return await host.events(input, **kw)


def test_cancel_really_cancels_the_run(plugin: Plugin) -> None:
    marker = os.path.join(plugin.socket_dir, "cancelled")

    async def main() -> float:
        async with Host(plugin.target) as host:
            call = host.run("sleep", payload={"marker": marker})
            assert (await call.read()).text_delta.text == "sleeping"
            t0 = time.time()
            call.cancel()
            async with asyncio.timeout(5):
                while not os.path.exists(marker):
                    await asyncio.sleep(0.002)
            # The runner renames the marker into place complete (testing/demo.py).
            with open(marker) as f:
                at, how = f.read().split()
            assert how == "CancelledError"
            cancelled_at = float(at)
            # still serving afterwards
            assert kinds(await host.events("hi")) == ["text_delta", "message_done"]
            return cancelled_at - t0

    latency = asyncio.run(main())
    print(f"cancel latency: {latency * 1e3:.2f} ms")
    assert latency < 0.2, f"run cancelled {latency * 1e3:.1f} ms after the client cancelled"


def test_exception_becomes_error_event_and_server_keeps_serving(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            events = await host.events("raise")
            assert kinds(events) == ["error"]
            err = events[0].error
            assert err.message == "ValueError: boom"
            assert err.code == "agent_error"
            assert err.detail.startswith("Traceback (most recent call last):")
            assert 'raise ValueError("boom")' in err.detail
            assert next(e.text_delta.text for e in await host.events("again")) == "again"

    asyncio.run(main())
    assert plugin.proc.poll() is None


def test_invalid_payload_is_an_invalid_request_error(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            for bad in (b"[1,2]", b"{nope"):
                events = [e async for e in host.runner.Run(pb.RunRequest(payload_json=bad))]
                assert kinds(events) == ["error"]
                assert events[0].error.code == "invalid_request"
                assert "payload_json" in events[0].error.message

    asyncio.run(main())


def test_concurrent_runs_see_only_their_own_context(plugin: Plugin) -> None:
    n = 40

    async def one(host: Host, i: int) -> None:
        events = await host.events(
            "context",
            user_id=f"user-{i}",
            session_id=f"session-{i}",
            invocation_id=f"inv-{i}",
            payload={
                "delay": random.uniform(0, 0.05),
                "model": f"model-{i}",
                "input_content": [{"type": "input_text", "text": f"t{i}"}],
                "has_current_files": i % 2 == 0,
            },
        )
        seen = json.loads(events[0].text_delta.text)
        want = {
            "user_id": f"user-{i}",
            "session_id": f"session-{i}",
            "invocation_id": f"inv-{i}",
            "agent_id": "agent-1",
            "model": f"model-{i}",
            "input_content": [{"type": "input_text", "text": f"t{i}"}],
            "has_current_files": i % 2 == 0,
            "kb_context": {"docs": [f"session-{i}"]},
        }
        assert seen == {"before": want, "after": want, "child": want, "thread": want}

    async def main() -> None:
        async with Host(plugin.target) as host:
            await asyncio.gather(*(one(host, i) for i in range(n)))

    asyncio.run(main())


def test_many_concurrent_streams(plugin: Plugin) -> None:
    async def main() -> None:
        async with Host(plugin.target) as host:
            results = await asyncio.gather(
                *(host.events("count", payload={"n": 200}) for _ in range(10))
            )
            assert all(len(r) == 201 for r in results)

    asyncio.run(main())
