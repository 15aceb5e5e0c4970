"""grpc.health.v1.Health, over the SDK's own messages.

The SDK used to depend on grpcio-health-checking for this; its releases pin narrow protobuf
ranges, which made the runner uninstallable next to common project dependencies. The host
(go-plugin) only calls Check("plugin"); Watch is served for completeness.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ._proto.grpc_health.v1 import health_pb2
from .rpc import UNARY_STREAM, UNARY_UNARY, Server, ServicerContext, StatusCode

ServingStatus = health_pb2.HealthCheckResponse.ServingStatus
SERVING: ServingStatus = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING: ServingStatus = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE_UNKNOWN: ServingStatus = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN


class HealthServicer:
    def __init__(self) -> None:
        self._status: dict[str, ServingStatus] = {}
        self._changed = asyncio.Condition()
        self._shutting_down = False

    async def set(self, service: str, status: ServingStatus) -> None:
        async with self._changed:
            if self._shutting_down:
                return
            self._status[service] = status
            self._changed.notify_all()

    async def enter_graceful_shutdown(self) -> None:
        """Every service reports NOT_SERVING from now on; later set() calls are ignored."""
        async with self._changed:
            self._shutting_down = True
            for service in self._status:
                self._status[service] = NOT_SERVING
            self._changed.notify_all()

    async def Check(  # noqa: N802 (gRPC method name)
        self, request: health_pb2.HealthCheckRequest, context: ServicerContext
    ) -> health_pb2.HealthCheckResponse:
        status = self._status.get(request.service)
        if status is None:
            await context.abort(StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return health_pb2.HealthCheckResponse(status=status)

    async def Watch(  # noqa: N802 (gRPC method name)
        self, request: health_pb2.HealthCheckRequest, context: ServicerContext
    ) -> AsyncIterator[health_pb2.HealthCheckResponse]:
        last: ServingStatus | None = None
        while True:
            async with self._changed:
                status = self._status.get(request.service, SERVICE_UNKNOWN)
                while status == last:
                    await self._changed.wait()
                    status = self._status.get(request.service, SERVICE_UNKNOWN)
            last = status
            yield health_pb2.HealthCheckResponse(status=status)


def add_to_server(servicer: HealthServicer, server: Server) -> None:
    server.add_service(
        "grpc.health.v1.Health",
        {
            "Check": (UNARY_UNARY, servicer.Check, health_pb2.HealthCheckRequest.FromString),
            "Watch": (UNARY_STREAM, servicer.Watch, health_pb2.HealthCheckRequest.FromString),
        },
    )
