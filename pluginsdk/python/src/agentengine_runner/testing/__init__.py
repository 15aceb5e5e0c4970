"""Helpers for testing runners in-process, without a host or a subprocess."""

from __future__ import annotations

import functools
import traceback
from typing import Any

from .._proto.runner.v1 import runner_pb2 as pb
from ..context import InvocationContext, invocation_scope, use_ksadk
from ..emitter import Emitter, RunCheckpoints, checkpoint_scope
from ..runner import Runner, RunRequest
from ..services import error_event


def make_request(
    input: Any = "hello",
    *,
    payload: dict[str, Any] | None = None,
    session_context: dict[str, Any] | None = None,
    app_name: str = "app",
    user_id: str = "user",
    session_id: str = "session",
    invocation_id: str = "invocation",
) -> RunRequest:
    body = {"input": input, **(payload or {})}
    ctx = session_context or {
        "platform_context": {
            "app_name": app_name,
            "user_id": user_id,
            "session_id": session_id,
            "invocation_id": invocation_id,
        }
    }
    return RunRequest(app_name, user_id, session_id, invocation_id, body, ctx)


# use_ksadk looks for an installed ksadk on sys.path (a few stat calls) each time; once
# is what the server does too, and benchmarks call collect thousands of times.
_use_ksadk_once = functools.cache(use_ksadk)


async def collect(runner: Runner, request: RunRequest) -> list[pb.RunEvent]:
    """Runs one turn the way the server does (`import ksadk` usable, context set,
    exceptions become an Error event) and returns the events."""
    _use_ksadk_once()
    events: list[pb.RunEvent] = []

    async def sink(event: pb.RunEvent) -> None:
        events.append(event)

    emit = Emitter(sink)
    described = runner.describe()
    ictx = InvocationContext.from_request(
        request.payload,
        request.session_context,
        app_name=request.app_name,
        user_id=request.user_id,
        session_id=request.session_id,
        invocation_id=request.invocation_id,
        runner_type=described.framework,
    )
    keeps = described.capabilities.checkpoints
    checkpoints = RunCheckpoints(emit, request.checkpoints) if keeps else None
    try:
        with invocation_scope(ictx), checkpoint_scope(checkpoints):
            await runner.run(request, emit)
        if checkpoints is not None:
            await checkpoints.flush()
    except Exception as exc:
        if checkpoints is not None:
            await checkpoints.flush()
        events.append(error_event(exc, traceback.format_exc()))
    finally:
        emit.close()
    return events
