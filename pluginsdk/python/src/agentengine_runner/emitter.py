"""Emitter: how a run reports what happens, one typed runnerv1.RunEvent per call.

Each method awaits the transport (gRPC flow control), so a fast producer is slowed to the
host's pace instead of buffering without bound.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ._proto.runner.v1 import runner_pb2 as pb

Sink = Callable[[pb.RunEvent], Awaitable[None]]


class Emitter:
    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._closed = False
        self.count = 0

    def close(self) -> None:
        self._closed = True

    async def send(self, event: pb.RunEvent) -> None:
        """Sends a prebuilt event (escape hatch; prefer the typed methods)."""
        if self._closed:
            raise RuntimeError("run already finished: events after the end are not delivered")
        await self._sink(event)
        self.count += 1

    async def text(self, text: str) -> None:
        await self.send(pb.RunEvent(text_delta=pb.TextDelta(text=text)))

    async def message_done(self, text: str = "") -> None:
        """Ends the current assistant message; text, if given, is its authoritative full text."""
        await self.send(pb.RunEvent(message_done=pb.MessageDone(text=text)))

    async def reasoning(self, text: str) -> None:
        await self.send(pb.RunEvent(reasoning_delta=pb.ReasoningDelta(text=text)))

    async def tool_call_delta(self, call_id: str, arguments_delta: str, name: str = "") -> None:
        """A piece of a call's arguments; give name on the first delta of a call."""
        await self.send(
            pb.RunEvent(
                tool_call_delta=pb.ToolCallDelta(
                    call_id=call_id, name=name, arguments_delta=arguments_delta
                )
            )
        )

    async def tool_call(self, call_id: str, name: str, arguments: str | Mapping[str, Any]) -> None:
        await self.send(
            pb.RunEvent(
                tool_call=pb.ToolCall(call_id=call_id, name=name, arguments=_json_text(arguments))
            )
        )

    async def tool_result(
        self, call_id: str, name: str, output: Any, *, is_error: bool = False
    ) -> None:
        """output: text as is, anything else as JSON."""
        await self.send(
            pb.RunEvent(
                tool_result=pb.ToolResult(
                    call_id=call_id, name=name, output=_json_text(output), is_error=is_error
                )
            )
        )

    async def approval_request(
        self,
        id: str,
        *,
        call_id: str = "",
        name: str = "",
        arguments: str | Mapping[str, Any] = "",
        message: str = "",
        detail: Any = None,
    ) -> None:
        """Asks for a human decision; end the run after sending the request(s)."""
        await self.send(
            pb.RunEvent(
                approval_request=pb.ApprovalRequest(
                    id=id,
                    call_id=call_id,
                    name=name,
                    arguments=_json_text(arguments),
                    message=message,
                    detail_json=b"" if detail is None else _json_bytes(detail),
                )
            )
        )

    async def state_delta(self, delta: Mapping[str, Any]) -> None:
        """State changes; "app:"/"user:"/"temp:" key prefixes pick the tier, None deletes."""
        await self.send(pb.RunEvent(state_delta=pb.StateDelta(delta_json=_json_bytes(delta))))

    async def usage(
        self,
        input_tokens: int = 0,
        output_tokens: int = 0,
        reasoning_tokens: int = 0,
        cached_tokens: int = 0,
    ) -> None:
        await self.send(
            pb.RunEvent(
                usage=pb.Usage(
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    reasoning_tokens=reasoning_tokens,
                    cached_tokens=cached_tokens,
                )
            )
        )

    async def native(self, framework: str, kind: str, data: Any = None) -> None:
        """A framework-native event, relayed live for debugging only (never stored)."""
        await self.send(
            pb.RunEvent(
                native=pb.Native(
                    framework=framework,
                    kind=kind,
                    data_json=b"" if data is None else _json_bytes(data),
                )
            )
        )


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=_jsonable, ensure_ascii=False)


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, default=_jsonable, ensure_ascii=False).encode()


def _jsonable(value: Any) -> Any:
    # Framework objects (pydantic models, dataclasses, bytes) reach native/tool events a lot;
    # degrade to something readable rather than failing the run over a debug payload.
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)
