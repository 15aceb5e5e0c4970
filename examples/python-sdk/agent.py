"""A runner written directly on agentengine's Python runner SDK (no framework).

It is offline and deterministic, so every event kind is easy to see:

- any text: streamed back word by word, after a reasoning note;
- "weather CITY": a tool call and its result, then the answer;
- "remember TEXT": saves TEXT in the session's state; "recall" reads it back;
- "delete FILE": asks for approval and ends the run; the resume says what was decided.
"""

from __future__ import annotations

import asyncio
import json

from agentengine_runner import (
    Capabilities,
    Description,
    Emitter,
    Runner,
    RunnerError,
    RunRequest,
)


def _text(request: RunRequest) -> str:
    """The user's text: a string input, or the text parts of a message input."""
    value = request.input
    if isinstance(value, str):
        return value
    parts: list[str] = []
    for item in value if isinstance(value, list) else []:
        content = item.get("content") if isinstance(item, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        if isinstance(content, str):
            parts.append(content)
    return " ".join(parts)


class Notes(Runner):
    def describe(self) -> Description:
        return Description(
            framework="python",
            agent_name="python-sdk",
            description="An offline runner on the Python SDK: streaming, a tool, session state and an approval.",
            capabilities=Capabilities(resume=True),
        )

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        if request.is_resume:
            await self._resume(request, emit)
            return
        text = _text(request).strip()
        command, _, rest = text.partition(" ")
        command = command.lower()
        if command == "weather" and rest:
            await self._weather(rest, emit)
        elif command == "remember" and rest:
            await emit.state_delta({"note": rest})
            await emit.message_done(f"I will remember: {rest}")
        elif command == "recall":
            note = request.session_context.get("state", {}).get("note")
            await emit.message_done(
                f"You asked me to remember: {note}"
                if note
                else "Nothing to recall yet."
            )
        elif command == "delete" and rest:
            await emit.tool_call("call_delete", "delete_file", {"path": rest})
            await emit.approval_request(
                "apr_delete",
                call_id="call_delete",
                name="delete_file",
                arguments={"path": rest},
                message=f"Delete {rest}?",
            )
        else:
            await self._echo(text, emit)

    async def _echo(self, text: str, emit: Emitter) -> None:
        await emit.reasoning(f"Echoing {len(text.split())} words.")
        words = text.split() or ["(nothing)"]
        for i, word in enumerate(words):
            await emit.text(("" if i == 0 else " ") + word)
            await asyncio.sleep(0.02)  # a visible stream
        await emit.message_done()
        await emit.usage(input_tokens=len(words), output_tokens=len(words))

    async def _weather(self, city: str, emit: Emitter) -> None:
        await emit.tool_call("call_weather", "get_weather", {"city": city})
        forecast = {"city": city, "sky": "clear", "celsius": 21}
        await emit.tool_result("call_weather", "get_weather", forecast)
        await emit.message_done(
            f"It is {forecast['sky']} and {forecast['celsius']}°C in {city}."
        )

    async def _resume(self, request: RunRequest, emit: Emitter) -> None:
        # payload["resume"]: the decision on the approval this session's last run asked for.
        decision = request.payload.get("resume") or {}
        if not decision:
            raise RunnerError(
                "this resume carries no approval decision", code="nothing_to_resume"
            )
        try:
            path = json.loads(decision.get("arguments") or "{}").get("path", "?")
        except ValueError:
            path = "?"
        call_id = decision.get("call_id") or "call_delete"
        if decision.get("approve"):
            # Simulated: the example never touches the file system.
            await emit.tool_result(
                call_id, "delete_file", {"deleted": path, "simulated": True}
            )
            await emit.message_done(f"Approved: deleted {path}.")
        else:
            await emit.tool_result(
                call_id,
                "delete_file",
                {"skipped": path, "reason": decision.get("reason", "")},
            )
            await emit.message_done(f"Rejected: kept {path}.")
