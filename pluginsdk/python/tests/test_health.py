"""The SDK's own grpc.health.v1.Health service, served by rpc.Server to a grpcio client."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pytest

from agentengine_runner import health, rpc
from agentengine_runner._proto.grpc_health.v1 import health_pb2, health_pb2_grpc


@asynccontextmanager
async def _serve(servicer: health.HealthServicer) -> AsyncIterator[health_pb2_grpc.HealthStub]:
    with tempfile.TemporaryDirectory(prefix="aeh-", dir="/tmp") as d:
        server = rpc.Server(1 << 20)
        health.add_to_server(servicer, server)
        path = os.path.join(d, "h.sock")
        await server.start_unix(path)
        async with grpc.aio.insecure_channel(f"unix:{path}") as channel:
            yield health_pb2_grpc.HealthStub(channel)
        await server.stop(0.1)


def test_check_watch_and_shutdown() -> None:
    async def scenario() -> None:
        servicer = health.HealthServicer()
        await servicer.set("plugin", health.SERVING)
        async with _serve(servicer) as stub:
            req = health_pb2.HealthCheckRequest(service="plugin")
            assert (await stub.Check(req, timeout=5)).status == health.SERVING

            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=5)
            assert err.value.code() == grpc.StatusCode.NOT_FOUND

            watch = stub.Watch(health_pb2.HealthCheckRequest(service="later"), timeout=5)
            assert (await watch.read()).status == health.SERVICE_UNKNOWN
            await servicer.set("later", health.SERVING)
            assert (await watch.read()).status == health.SERVING
            await servicer.enter_graceful_shutdown()
            assert (await watch.read()).status == health.NOT_SERVING
            watch.cancel()

            assert (await stub.Check(req, timeout=5)).status == health.NOT_SERVING
            await servicer.set("plugin", health.SERVING)  # ignored once shutting down
            assert (await stub.Check(req, timeout=5)).status == health.NOT_SERVING

    asyncio.run(scenario())
