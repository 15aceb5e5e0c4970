"""Message size limits of the runner transport, as the host uses them."""

from __future__ import annotations

import asyncio

import grpc
from client import request
from conftest import Plugin

from agentengine_runner._proto.runner.v1 import runner_pb2_grpc as runner_grpc
from agentengine_runner.server import MAX_MESSAGE_BYTES


def test_input_over_grpc_default_limit(plugin: Plugin) -> None:
    """A 5 MiB input (over gRPC's 4 MiB default) reaches the runner and comes back."""
    big = "x" * (5 << 20)

    async def go() -> str:
        opts = [
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ]
        async with grpc.aio.insecure_channel(plugin.target, options=opts) as ch:
            stub = runner_grpc.RunnerStub(ch)
            text = ""
            async for ev in stub.Run(request(big)):
                if ev.WhichOneof("event") == "text_delta":
                    text += ev.text_delta.text
            return text

    assert asyncio.run(go()) == big
