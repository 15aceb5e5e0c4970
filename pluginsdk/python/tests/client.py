"""A minimal host-side gRPC client for the tests (what go-plugin's host calls)."""

from __future__ import annotations

import json
from typing import Any

import grpc
from google.protobuf import empty_pb2

from agentengine_runner._proto.grpc_health.v1 import health_pb2, health_pb2_grpc
from agentengine_runner._proto.plugin import grpc_controller_pb2 as controller_pb
from agentengine_runner._proto.plugin import grpc_controller_pb2_grpc as controller_grpc
from agentengine_runner._proto.plugin import grpc_stdio_pb2_grpc as stdio_grpc
from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from agentengine_runner._proto.runner.v1 import runner_pb2_grpc as runner_grpc
from agentengine_runner.emitter import unbatch


class Host:
    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.runner = runner_grpc.RunnerStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)
        self.controller = controller_grpc.GRPCControllerStub(self.channel)
        self.stdio = stdio_grpc.GRPCStdioStub(self.channel)

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()

    async def check(self, service: str = "plugin") -> int:
        resp = await self.health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        return int(resp.status)

    def run(self, input: Any, **kw: Any) -> Any:
        return self.runner.Run(request(input, **kw))

    async def events(self, input: Any, **kw: Any) -> list[pb.RunEvent]:
        return [ev async for e in self.run(input, **kw) for ev in unbatch(e)]

    async def shutdown(self) -> None:
        await self.controller.Shutdown(controller_pb.Empty(), timeout=5)

    def stream_stdio(self) -> Any:
        return self.stdio.StreamStdio(empty_pb2.Empty())


def request(
    input: Any,
    *,
    user_id: str = "u1",
    session_id: str = "s1",
    invocation_id: str = "i1",
    payload: dict[str, Any] | None = None,
    session_context: dict[str, Any] | None = None,
) -> pb.RunRequest:
    body = {"input": input, **(payload or {})}
    ctx = session_context or {
        "platform_context": {
            "agent_id": "agent-1",
            "app_name": "app",
            "user_id": user_id,
            "session_id": session_id,
            "invocation_id": invocation_id,
        },
        "history": [],
        "kb_context": {"docs": [session_id]},
        "is_resume": False,
    }
    return pb.RunRequest(
        app_name="app",
        user_id=user_id,
        session_id=session_id,
        invocation_id=invocation_id,
        payload_json=json.dumps(body).encode(),
        session_context_json=json.dumps(ctx).encode(),
    )


def kinds(events: list[pb.RunEvent]) -> list[str]:
    return [e.WhichOneof("event") for e in events]
