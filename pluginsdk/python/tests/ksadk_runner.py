"""A runner that reports what `ksadk.runtime_context` says during a run, and whether another
ksadk submodule (payload["submodule"]) imports; used by test_ksadk.py."""

from __future__ import annotations

import asyncio
import importlib
import json
from typing import Any

from agentengine_runner import Description, Emitter, Runner, RunRequest


class KsadkRunner(Runner):
    def describe(self) -> Description:
        return Description(framework="langgraph", agent_name="ksadk-probe")

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        import ksadk
        from ksadk import runtime_context as rc

        report: dict[str, Any] = {
            "standin": bool(getattr(ksadk, "AGENTENGINE_STANDIN", False)),
            "here": _view(rc),
            "in_thread": await asyncio.to_thread(_view, rc),
        }
        name = request.payload.get("submodule")
        if name:
            try:
                importlib.import_module(name)
                report["submodule"] = "ok"
            except ImportError as exc:
                report["submodule"] = f"{type(exc).__name__}: {exc}"
        await emit.text(json.dumps(report))
        await emit.message_done()


def _view(rc: Any) -> dict[str, Any]:
    ctx = rc.get_current_invocation_context()
    tool = rc.get_current_tool_execution_context_or_default()
    return {
        "user_id": rc.get_current_user_id(),
        "account_id": rc.get_current_account_id(),
        "session_id": getattr(ctx, "session_id", None),
        "agent_id": getattr(ctx, "agent_id", None),
        "tool_invocation_id": tool.invocation_id,
        "tool_session_id": tool.session_id,
        "type": f"{type(ctx).__module__}.{type(ctx).__name__}",
    }
