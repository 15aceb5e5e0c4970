"""A tiny runner for the SDK's own tests (pytest and the Go host test).

payload["input"] picks the behaviour:
  "all"        one event of every kind
  "print"      print() a line (must reach the host over GRPCStdio), then a text event
  "sleep"      a text event, then sleep for an hour; when run() ends, writes the time
               and how it ended (e.g. "CancelledError") to payload["marker"], a file path
  "context"    reports the invocation context (via the ksadk shim) before and after
               payload["delay"] seconds, from a child task and from asyncio.to_thread
  "raise"      raises ValueError("boom")
  "count"      payload["n"] text deltas of payload["size"] bytes, as fast as possible
  anything else: echoes the input as text

call(): "demo.echo" answers its argument, "demo.refuse" refuses (CallError
failed_precondition), "demo.raise" raises ValueError; other methods are unknown.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from agentengine_runner import CallError, Capabilities, Description, Emitter, Runner, RunRequest, serve
from agentengine_runner.runner import SummarizeRequest


class DemoRunner(Runner):
    def describe(self) -> Description:
        return Description(
            framework="langgraph",
            agent_name="demo",
            description="agentengine_runner test runner",
            capabilities=Capabilities(resume=True),
        )

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        kind = request.input
        p = request.payload
        if kind == "all":
            await every_event(emit)
        elif kind == "print":
            print("hello from user code")
            await emit.text("printed")
        elif kind == "sleep":
            # The cancel may land while "sleeping" is still being written, so the marker
            # records when run() ended and how, wherever that happened.
            how = "returned"
            try:
                await emit.text("sleeping")
                await asyncio.sleep(3600)
            except BaseException as exc:
                how = type(exc).__name__
                raise
            finally:
                # Written aside and renamed, so a reader that sees the marker sees all of it.
                tmp = p["marker"] + ".tmp"
                with open(tmp, "w") as f:
                    f.write(f"{time.time()!r} {how}")
                os.replace(tmp, p["marker"])
        elif kind == "context":
            before = context_view()
            await asyncio.sleep(float(p.get("delay", 0)))
            after = context_view()
            child = await asyncio.create_task(child_view())
            thread = await asyncio.to_thread(context_view)
            await emit.text(
                json.dumps({"before": before, "after": after, "child": child, "thread": thread})
            )
        elif kind == "raise":
            raise ValueError("boom")
        elif kind == "count":
            chunk = "x" * int(p.get("size", 16))
            for _ in range(int(p["n"])):
                await emit.text(chunk)
        else:
            await emit.text(str(kind))
        await emit.message_done()

    async def call(self, method: str, arg: Any) -> Any:
        if method == "demo.echo":
            return {"echo": arg}
        if method == "demo.refuse":
            raise CallError("the demo lacks what this needs", "failed_precondition")
        if method == "demo.raise":
            raise ValueError("boom")
        raise NotImplementedError(method)

    async def summarize(self, request: SummarizeRequest) -> str:
        return f"{len(request.history)} messages"


async def child_view() -> dict[str, Any] | None:
    await asyncio.sleep(0)
    return context_view()


def context_view() -> dict[str, Any] | None:
    # Imported here: `ksadk` is importable once the runner has started (prepare()).
    # Only what both the stand-in and the real ksadk provide.
    from ksadk.runtime_context import (
        get_current_invocation_context,
        get_current_tool_execution_context_or_default,
    )

    ctx = get_current_invocation_context()
    if ctx is None:
        return None
    return {
        "user_id": ctx.user_id,
        "session_id": ctx.session_id,
        "invocation_id": get_current_tool_execution_context_or_default().invocation_id,
        "agent_id": ctx.agent_id,
        "model": ctx.model,
        "input_content": ctx.input_content,
        "has_current_files": ctx.has_current_files,
        "kb_context": ctx.kb_context,
    }


async def every_event(emit: Emitter) -> None:
    await emit.reasoning("thinking")
    await emit.text("Hello")
    await emit.message_done("Hello")
    await emit.tool_call_delta("c1", '{"q":', name="search")
    await emit.tool_call("c1", "search", {"q": "go"})
    await emit.tool_result("c1", "search", {"hits": 1})
    await emit.approval_request(
        "a1", call_id="c2", name="delete", arguments={"path": "/"}, message="ok?",
        detail={"kind": "interrupt"},
    )
    await emit.state_delta({"k": 1, "temp:x": None})
    await emit.usage(input_tokens=3, output_tokens=5, reasoning_tokens=1, cached_tokens=2)
    await emit.native("langgraph", "on_chain_end", {"n": 1})


if __name__ == "__main__":
    serve(DemoRunner())
