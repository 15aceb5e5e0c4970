"""gRPC services: the runner protocol plus go-plugin's controller, stdio and broker."""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

from google.protobuf import empty_pb2

from ._proto.plugin import grpc_broker_pb2 as broker_pb
from ._proto.plugin import grpc_controller_pb2 as controller_pb
from ._proto.plugin import grpc_stdio_pb2 as stdio_pb
from ._proto.runner.v1 import runner_pb2 as pb
from .context import InvocationContext, invocation_scope
from .emitter import Emitter, RunCheckpoints, artifacts_from_pb, checkpoint_scope, checkpoints_from_pb
from .expand import expand_request
from .handshake import RUNNER_PROTOCOL
from .hclog import get_logger
from .lifelong import LifelongObjects
from .rpc import STREAM_STREAM, UNARY_STREAM, UNARY_UNARY, Server, ServicerContext, StatusCode
from .runner import CallError, Runner, RunnerError, RunRequest, SummarizeRequest
from .stdio import StdioHub
from .tracing import trace_ids, trace_scope

log = get_logger()

# go-plugin's own servers chunk stdio at 1 KiB; bigger chunks are fine for the host and
# cheaper here.
STDIO_CHUNK = 32 * 1024


# Error codes, the same as the Go SDK's (pluginsdk.CodeAgentError, CodeInvalidRequest).
CODE_AGENT_ERROR = "agent_error"
CODE_INVALID_REQUEST = "invalid_request"


def error_event(exc: BaseException, detail: str) -> pb.RunEvent:
    code = (exc.code if isinstance(exc, RunnerError) else "") or CODE_AGENT_ERROR
    return pb.RunEvent(
        error=pb.Error(message=f"{type(exc).__name__}: {exc}", code=code, detail=detail)
    )


def decode_object(raw: bytes, what: str) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"runner could not decode the {what}: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(
            f"runner could not decode the {what}: want a JSON object, got {type(value).__name__}"
        )
    return value


# CallError codes → gRPC status codes (the host maps these to its error kinds).
CALL_CODES = {
    "invalid_argument": StatusCode.INVALID_ARGUMENT,
    "failed_precondition": StatusCode.FAILED_PRECONDITION,
    "not_found": StatusCode.NOT_FOUND,
}


class RunnerService:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        # The run lane's socket path once it serves (lane.LaneServer), for Describe.
        self.run_lane = ""
        self._framework = ""
        self._checkpoints: bool | None = None
        self.lifelong = LifelongObjects()

    def _framework_name(self) -> str:
        # Normally cached by Describe, which the host calls first; a host that doesn't
        # still gets runner_type filled in.
        if not self._framework:
            try:
                d = self._runner.describe()
                self._framework, self._checkpoints = d.framework, d.capabilities.checkpoints
            except Exception:
                pass
        return self._framework

    def _keeps_checkpoints(self) -> bool:
        """Only a runner that declares the checkpoints capability exchanges checkpoints
        with the host; for others a saver keeps them in the process alone."""
        if self._checkpoints is None:
            self._framework_name()
        return bool(self._checkpoints)

    async def Describe(
        self, request: pb.DescribeRequest, context: ServicerContext
    ) -> pb.DescribeResponse:
        try:
            d = self._runner.describe()
        except Exception as exc:
            log.error("describe failed", exc_info=True)
            await context.abort(StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}")
        self._framework = d.framework
        caps = d.capabilities
        self._checkpoints = caps.checkpoints
        summarize = caps.summarize
        if summarize is None:
            summarize = self._runner.supports_summarize()
        return pb.DescribeResponse(
            protocol_version=RUNNER_PROTOCOL,
            framework=d.framework,
            agent_name=d.agent_name,
            description=d.description,
            capabilities=pb.Capabilities(
                resume=caps.resume,
                summarize=summarize,
                checkpoints=caps.checkpoints,
                artifacts=caps.artifacts,
                # Run expands every request (expand_request).
                expands_payload=True,
            ),
            run_lane=self.run_lane,
            native_json=b"" if d.native is None else json.dumps(d.native, separators=(",", ":"), default=str).encode(),
        )

    async def Run(self, request: pb.RunRequest, context: ServicerContext) -> None:
        # A coroutine handler writing with context.write (not an async generator pulling from
        # a queue): user code then runs in this RPC's own task, so a client cancel cancels
        # it directly, and each run gets its own contextvars copy.
        await self.run(request, context.write)

    async def run(
        self,
        request: pb.RunRequest,
        write: Callable[[pb.RunEvent], Awaitable[None]],
        *,
        batches: bool = True,
    ) -> None:
        """One run, its events written with write: what Run and the run lane both serve.
        Call it in a task of the run's own (cancelling the task cancels the run). batches:
        the emitter coalesces events into RunEventBatches (for a write that is slow, as a
        gRPC call's is)."""
        self.lifelong.run_started()
        try:
            await self._run(request, write, batches)
        finally:
            self.lifelong.run_ended()

    async def _run(
        self,
        request: pb.RunRequest,
        write: Callable[[pb.RunEvent], Awaitable[None]],
        batches: bool,
    ) -> None:
        try:
            payload = decode_object(request.payload_json, "run payload (payload_json)")
            session_context = decode_object(
                request.session_context_json, "session context (session_context_json)"
            )
            expand_request(payload, session_context)
        except ValueError as exc:
            # An Error event, not a gRPC status: the host records a clean failed run.
            log.error(
                "run failed", extra={"invocation_id": request.invocation_id, "error": str(exc)}
            )
            await write(pb.RunEvent(error=pb.Error(message=str(exc), code=CODE_INVALID_REQUEST)))
            return
        req = RunRequest(
            app_name=request.app_name,
            user_id=request.user_id,
            session_id=request.session_id,
            invocation_id=request.invocation_id,
            payload=payload,
            session_context=session_context,
            checkpoints=checkpoints_from_pb(request.checkpoints),
            artifacts=artifacts_from_pb(request.artifacts),
        )
        ictx = InvocationContext.from_request(
            payload,
            session_context,
            app_name=request.app_name,
            user_id=request.user_id,
            session_id=request.session_id,
            invocation_id=request.invocation_id,
            runner_type=self._framework_name(),
        )
        emit = Emitter(write, batches=batches)
        ids = {"invocation_id": request.invocation_id, "session_id": request.session_id, **trace_ids(request.trace_context)}
        started = time.monotonic()
        checkpoints = RunCheckpoints(emit, req.checkpoints) if self._keeps_checkpoints() else None
        try:
            with invocation_scope(ictx), checkpoint_scope(checkpoints), trace_scope(request.trace_context):
                await self._runner.run(req, emit)
            # What the run saved (and any deferred usage) goes out before the stream ends.
            if checkpoints is not None:
                await checkpoints.flush()
            await emit.flush()
        except asyncio.CancelledError:
            log.debug("run cancelled", extra={**ids, "events": emit.count})
            raise
        except Exception as exc:
            detail = traceback.format_exc()
            log.error("run failed", extra={**ids, "error": detail})
            try:
                # What the run saved before failing is still its state.
                if checkpoints is not None:
                    await checkpoints.flush()
                await emit.flush()
            except Exception:
                pass
            emit.close()
            try:
                await write(error_event(exc, detail))
            except Exception:  # the host went away; nothing left to tell it
                pass
            return
        finally:
            emit.close()
        log.debug(
            "run finished",
            extra={**ids, "events": emit.count, "ms": f"{(time.monotonic() - started) * 1e3:.1f}"},
        )

    async def Summarize(
        self, request: pb.SummarizeRequest, context: ServicerContext
    ) -> pb.SummarizeResponse:
        if not self._runner.supports_summarize():
            await context.abort(StatusCode.UNIMPLEMENTED, "runner does not summarize")
        try:
            history = json.loads(request.history_json) if request.history_json else []
            if not isinstance(history, list):
                raise ValueError("history_json must be a JSON array")
        except ValueError as exc:
            await context.abort(StatusCode.INVALID_ARGUMENT, str(exc))
        try:
            summary = await self._runner.summarize(
                SummarizeRequest(history=history, instructions=request.instructions)
            )
        except NotImplementedError:
            await context.abort(StatusCode.UNIMPLEMENTED, "runner does not summarize")
        except Exception as exc:
            log.error("summarize failed", extra={"error": traceback.format_exc()})
            await context.abort(StatusCode.UNKNOWN, f"{type(exc).__name__}: {exc}")
        return pb.SummarizeResponse(summary=summary)

    async def Call(self, request: pb.CallRequest, context: ServicerContext) -> pb.CallResponse:
        try:
            arg = json.loads(request.json) if request.json else None
        except ValueError as exc:
            await context.abort(StatusCode.INVALID_ARGUMENT, f"{request.method}: the argument is not JSON: {exc}")
        try:
            result = await self._runner.call(request.method, arg)
            out = json.dumps(result, separators=(",", ":")).encode()
        except NotImplementedError:
            await context.abort(StatusCode.UNIMPLEMENTED, f"the runner has no method {request.method!r}")
        except CallError as exc:
            await context.abort(CALL_CODES.get(exc.code, StatusCode.INVALID_ARGUMENT), str(exc))
        except Exception as exc:
            log.error("call failed", extra={"method": request.method, "error": traceback.format_exc()})
            await context.abort(StatusCode.UNKNOWN, f"{type(exc).__name__}: {exc}")
        return pb.CallResponse(json=out)


class ControllerService:
    """plugin.GRPCController: the host's Kill() asks for a graceful exit here."""

    def __init__(self, request_stop: Callable[[str], None]) -> None:
        self._request_stop = request_stop

    async def Shutdown(
        self, request: controller_pb.Empty, context: ServicerContext
    ) -> controller_pb.Empty:
        # Answer first; stopping is scheduled so this reply still goes out.
        asyncio.get_running_loop().call_soon(self._request_stop, "shutdown requested by host")
        return controller_pb.Empty()


class StdioService:
    """plugin.GRPCStdio: forwards captured stdout to the host's SyncStdout."""

    def __init__(self, hub: StdioHub) -> None:
        self._hub = hub

    async def StreamStdio(
        self, request: empty_pb2.Empty, context: ServicerContext
    ) -> AsyncIterator[stdio_pb.StdioData]:
        while True:
            await self._hub.wait()
            for channel, data in self._hub.drain():
                for i in range(0, len(data), STDIO_CHUNK):
                    yield stdio_pb.StdioData(
                        channel=cast(Any, channel), data=data[i : i + STDIO_CHUNK]
                    )


class Broker:
    """Servers the host brokers for this runner (host callbacks), by service id.

    The host announces each one on the plugin.GRPCBroker stream; dial() connects to it.
    """

    def __init__(self) -> None:
        self._infos: dict[int, broker_pb.ConnInfo] = {}
        self._changed: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def add(self, info: broker_pb.ConnInfo) -> None:
        self._infos[info.service_id] = info
        event = self._event()
        event.set()
        self._changed = None  # wake current waiters; later waiters get a fresh event

    async def address(self, service_id: int, timeout: float = 5.0) -> tuple[str, str]:
        """(network, address) of a brokered host server, waiting for its announcement."""
        async with asyncio.timeout(timeout):
            while service_id not in self._infos:
                await self._event().wait()
        info = self._infos[service_id]
        return info.network, info.address

    async def dial(self, service_id: int, timeout: float = 5.0) -> Any:
        """A grpc.aio channel to a brokered host server. It needs grpcio in the agent's
        environment: the runner itself serves without it."""
        import grpc  # a client of the host's servers only: most runners never dial one

        network, address = await self.address(service_id, timeout)
        target = f"unix:{address}" if network == "unix" else address
        return grpc.aio.insecure_channel(target)


class BrokerService:
    def __init__(self, broker: Broker) -> None:
        self._broker = broker

    async def StartStream(
        self,
        request_iterator: AsyncIterator[broker_pb.ConnInfo],
        context: ServicerContext,
    ) -> None:
        # We never announce servers of our own, so nothing is written back.
        async for info in request_iterator:
            if info.HasField("knock"):
                continue  # multiplexing knocks; we don't advertise multiplexing
            self._broker.add(info)


def add_services(
    server: Server, runner: RunnerService, controller: ControllerService, stdio: StdioService, broker: BrokerService
) -> None:
    """Registers the runner protocol and go-plugin's controller, stdio and broker."""
    server.add_service(
        "agentengine.runner.v1.Runner",
        {
            "Describe": (UNARY_UNARY, runner.Describe, pb.DescribeRequest.FromString),
            "Run": (UNARY_STREAM, runner.Run, pb.RunRequest.FromString),
            "Summarize": (UNARY_UNARY, runner.Summarize, pb.SummarizeRequest.FromString),
            "Call": (UNARY_UNARY, runner.Call, pb.CallRequest.FromString),
        },
    )
    server.add_service("plugin.GRPCController", {"Shutdown": (UNARY_UNARY, controller.Shutdown, controller_pb.Empty.FromString)})
    server.add_service("plugin.GRPCStdio", {"StreamStdio": (UNARY_STREAM, stdio.StreamStdio, empty_pb2.Empty.FromString)})
    server.add_service("plugin.GRPCBroker", {"StartStream": (STREAM_STREAM, broker.StartStream, broker_pb.ConnInfo.FromString)})
