"""{{.Name}}: a runner written on agentengine's Python runner SDK (no framework).

`agentengine run .` starts it as `python -m agentengine_runner agent:Agent`, with the SDK
that ships inside agentengine. Replace the body of `run` with your agent; the emitter
methods below are what a client sees (streamed text, tool calls and results, state
changes, approval requests).
"""

from __future__ import annotations

import json

from agentengine_runner import Capabilities, Description, Emitter, Runner, RunRequest


class Agent(Runner):
    def describe(self) -> Description:
        return Description(
            framework="python",
            agent_name="{{.Name}}",
            capabilities=Capabilities(resume=True),
        )

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        if request.is_resume:
            # The answer to the approval the last run asked for.
            decision = request.payload.get("resume") or {}
            verdict = "approved" if decision.get("approve") else "rejected"
            await emit.tool_result(decision.get("call_id") or "call_1", "publish", {"verdict": verdict})
            await emit.message_done(f"Publishing was {verdict}.")
            return
        text = request.input if isinstance(request.input, str) else json.dumps(request.input)
        if text.strip().lower() == "publish":
            await emit.tool_call("call_1", "publish", {"what": "the draft"})
            await emit.approval_request(
                "apr_1", call_id="call_1", name="publish", arguments={"what": "the draft"}, message="Publish the draft?"
            )
            return  # the run ends waiting for the decision
        turns = int(request.session_context.get("state", {}).get("turns", 0)) + 1
        await emit.state_delta({"turns": turns})
        for i, word in enumerate(text.split()):
            await emit.text(("" if i == 0 else " ") + word)
        await emit.message_done()
