"""In-process unit tests: handshake env, hclog lines, context, emitter, broker, testing helpers."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest

from agentengine_runner import (
    Capabilities,
    RunnerError,
    rpc,
)
from agentengine_runner._proto.plugin import grpc_broker_pb2 as broker_pb
from agentengine_runner._proto.plugin import grpc_broker_pb2_grpc as broker_grpc
from agentengine_runner.context import InvocationContext
from agentengine_runner.emitter import Emitter
from agentengine_runner.handshake import HandshakeError, check_env, handshake_line
from agentengine_runner.hclog import HclogHandler, format_line, timestamp
from agentengine_runner.services import Broker, BrokerService, error_event
from agentengine_runner.testing import collect, make_request
from agentengine_runner.testing.demo import DemoRunner

COOKIE = {"AGENTENGINE_RUNNER": "agentengine-runner-v1"}


def test_check_env() -> None:
    env = check_env({**COOKIE, "PLUGIN_PROTOCOL_VERSIONS": "3,1", "PLUGIN_UNIX_SOCKET_DIR": "/s"})
    assert (env.app_version, env.socket_dir) == (1, "/s")
    assert check_env(COOKIE).socket_dir is None  # versions unset: use ours
    with pytest.raises(HandshakeError, match="magic cookie"):
        check_env({"AGENTENGINE_RUNNER": "wrong"})
    with pytest.raises(HandshakeError, match="incompatible"):
        check_env({**COOKIE, "PLUGIN_PROTOCOL_VERSIONS": "2"})
    with pytest.raises(HandshakeError, match="AutoMTLS"):
        check_env({**COOKIE, "PLUGIN_CLIENT_CERT": "-----BEGIN CERTIFICATE-----"})


def test_handshake_line() -> None:
    assert handshake_line(1, "unix", "/tmp/a/r1.sock") == "1|1|unix|/tmp/a/r1.sock|grpc\n"


def test_hclog_line_shape() -> None:
    ts = timestamp(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert ts == "2026-01-02T03:04:05.000000Z"  # 6 digits even when zero
    entry = json.loads(format_line("info", "hi", {"n": 5, "@message": "x", "ok": None}))
    assert entry["@message"] == "hi" and entry["n"] == "5" and entry["ok"] == "None"
    assert re.fullmatch(r".*\.\d{6}Z", entry["@timestamp"])


def test_hclog_handler_survives_broken_pipe() -> None:
    r, w = os.pipe()
    h = HclogHandler(fd=w)
    logger = logging.getLogger("test.hclog")
    logger.addHandler(h)
    logger.propagate = False
    try:
        logger.warning("one", extra={"k": 1})
        line = json.loads(os.read(r, 4096))
        assert (line["@level"], line["@message"], line["k"]) == ("warn", "one", "1")
        os.close(r)
        logger.error("two")  # EPIPE: swallowed, handler goes quiet
        assert h.dead
        logger.error("three")
    finally:
        logger.removeHandler(h)
        os.close(w)


def test_context_from_request() -> None:
    ctx = InvocationContext.from_request(
        {
            "input": "hi",
            "history": [{"role": "user"}],
            "attachments": [{"id": 1}],
            "has_current_files": True,
            "model": "m",
            "model_options": {"t": 1},
            "metadata": {"a": "b"},
        },
        {
            "platform_context": {"agent_id": "ag", "user_id": "pu", "session_id": "ps"},
            "kb_context": {"k": 1},
            "memory_context": None,
            "is_resume": True,
            "state": {"x": 1},
        },
        user_id="u",
        runner_type="langgraph",
    )
    assert (ctx.agent_id, ctx.user_id, ctx.session_id) == ("ag", "u", "ps")
    assert ctx.history == [{"role": "user"}] and ctx.attachments == [{"id": 1}]
    assert ctx.has_current_files and ctx.is_resume and ctx.kb_context == {"k": 1}
    assert (ctx.model, ctx.model_options, ctx.metadata) == ("m", {"t": 1}, {"a": "b"})
    assert ctx.to_payload()["runner_type"] == "langgraph"
    # malformed shapes degrade to empty values instead of failing the run
    bad = InvocationContext.from_request(
        {"attachments": "x", "metadata": 3}, {"platform_context": 1}
    )
    assert (bad.attachments, bad.metadata, bad.platform_context) == ([], {}, {})


@dataclass
class _Thing:
    a: int


def test_emitter_json_and_closed() -> None:
    sent: list[Any] = []

    async def sink(e: Any) -> None:
        sent.append(e)

    async def main() -> None:
        emit = Emitter(sink)
        await emit.native("x", "k", {"t": _Thing(1), "b": b"\x00", "s": (1, 2)})
        await emit.tool_result("c", "n", "plain text")
        await emit.tool_result("c2", "n", "x", traced=True)
        emit.close()
        with pytest.raises(RuntimeError):
            await emit.text("late")

    asyncio.run(main())
    assert json.loads(sent[0].native.data_json) == {"t": {"a": 1}, "b": "AA==", "s": [1, 2]}
    assert sent[1].tool_result.output == "plain text" and not sent[1].tool_result.traced
    assert sent[2].tool_result.traced  # the agent's framework made the call's span


def test_error_event_codes() -> None:
    assert error_event(ValueError("x"), "tb").error.message == "ValueError: x"
    e = error_event(RunnerError("quota", code="rate_limited"), "tb").error
    assert (e.message, e.code, e.detail) == ("RunnerError: quota", "rate_limited", "tb")
    assert error_event(RunnerError("x"), "").error.code == "agent_error"


def test_collect_helper() -> None:
    events = asyncio.run(collect(DemoRunner(), make_request("raise")))
    assert events[0].error.message == "ValueError: boom"
    events = asyncio.run(collect(DemoRunner(), make_request("context", user_id="zz")))
    assert json.loads(events[0].text_delta.text)["after"]["user_id"] == "zz"


def test_broker_records_host_announcements(tmp_path: object) -> None:
    async def main() -> None:
        broker = Broker()
        server = rpc.Server(1 << 20)
        server.add("/plugin.GRPCBroker/StartStream", rpc.STREAM_STREAM, BrokerService(broker).StartStream, broker_pb.ConnInfo.FromString)
        path = os.path.join(str(tmp_path), "b.sock")
        await server.start_unix(path)
        try:
            async with grpc.aio.insecure_channel(f"unix:{path}") as ch:
                stream = broker_grpc.GRPCBrokerStub(ch).StartStream()
                waiter = asyncio.create_task(broker.address(7, timeout=5))
                await asyncio.sleep(0.01)
                await stream.write(broker_pb.ConnInfo(service_id=7, network="unix", address="/x"))
                assert await waiter == ("unix", "/x")
                with pytest.raises(TimeoutError):
                    await broker.address(8, timeout=0.05)
                await stream.done_writing()
        finally:
            await server.stop(0.1)

    asyncio.run(main())


def test_trace_scope_joins_the_hosts_trace() -> None:
    # OpenTelemetry is optional: the compatibility environments do not have it.
    trace = pytest.importorskip("opentelemetry.trace")

    from agentengine_runner.tracing import available, trace_scope

    assert available()
    carrier = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    with trace_scope(carrier):
        sc = trace.get_current_span().get_span_context()
        assert format(sc.trace_id, "032x") == "4bf92f3577b34da6a3ce929d0e0e4736"
        assert format(sc.span_id, "016x") == "00f067aa0ba902b7" and sc.is_remote
    assert not trace.get_current_span().get_span_context().is_valid
    with trace_scope({}):
        assert not trace.get_current_span().get_span_context().is_valid


def test_trace_ids_for_log_lines() -> None:
    from agentengine_runner.tracing import trace_ids

    carrier = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    assert trace_ids(carrier) == {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7"}
    assert trace_ids({}) == {} and trace_ids({"traceparent": "garbage"}) == {}


def test_capabilities_old_keywords_are_ignored_with_a_warning() -> None:
    # Runners written for earlier SDKs pass streaming / multimodal_input: they still start.
    with pytest.warns(DeprecationWarning, match="ignored"):
        caps = Capabilities(streaming=True, resume=True, multimodal_input=True)
    assert caps == Capabilities(resume=True)
    assert "streaming" not in {f.name for f in fields(Capabilities)}
    assert "streaming" not in caps.__dict__


def test_artifacts_travel_both_ways() -> None:
    """Emitter.artifact / artifact_deleted build the protocol's Artifact events, and
    RunRequest.artifacts decodes the host's versions (a malformed meta is {})."""
    from agentengine_runner import Artifact
    from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
    from agentengine_runner.emitter import artifacts_from_pb

    sent: list[pb.RunEvent] = []

    async def sink(event: pb.RunEvent) -> None:
        sent.append(event)

    async def go() -> None:
        emit = Emitter(sink)
        await emit.artifact("user:a.md", 2, b"# a", "text/markdown", {"k": 1})
        await emit.artifact_deleted("b.txt")

    asyncio.run(go())
    a, d = sent[0].artifact, sent[1].artifact
    assert (a.name, a.version, a.data, a.mime_type, json.loads(a.meta_json), a.deleted) == ("user:a.md", 2, b"# a", "text/markdown", {"k": 1}, False)
    assert (d.name, d.deleted) == ("b.txt", True)
    got = artifacts_from_pb(
        [
            pb.Artifact(name="x", version=1, mime_type="text/plain", data=b"x", meta_json=b'{"text":true}', create_time=1.5),
            pb.Artifact(name="y", meta_json=b"not json", data_omitted=True),
        ]
    )
    assert got == (
        Artifact("x", 1, "text/plain", b"x", {"text": True}, 1.5, False),
        Artifact("y", 0, "", b"", {}, 0.0, True),
    )
