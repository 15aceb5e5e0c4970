"""Projecting agentengine's session into an ADK session, per turn.

agentengine's store is the source of truth. Each run gets a fresh InMemorySessionService
holding one session keyed by the run's real (app, user, session), rebuilt from:

- session_context.state_tiers: session keys as is, app and user tiers with their ADK
  prefixes ("app:k", "user:k"), so ADK's State sees exactly what the host stores;
- payload.history (host-projected messages): user / assistant text as user / model
  contents, tool call + result pairs as function_call / function_response events with the
  original call ids (a call without a result is dropped), a context summary as text;
- on resume, the ADK events of the pending approval (kept in the approval request's
  detail, or rebuilt from payload.resume) so ADK can match the answer to its call.

Nothing is shared between runs, users or sessions: ADK's own writes go to the throwaway
service and reach the host only as runner events (text, tool calls, state deltas).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from . import history as hist

TRANSFER_CALL = "transfer_to_agent"
CONFIRMATION_CALL = "adk_request_confirmation"
APP_PREFIX, USER_PREFIX, TEMP_PREFIX = "app:", "user:", "temp:"


def initial_state(session_context: Mapping[str, Any]) -> dict[str, Any]:
    """The ADK session state for the host's state tiers (merged state as a fallback)."""
    tiers = session_context.get("state_tiers")
    if isinstance(tiers, Mapping) and any(isinstance(tiers.get(k), Mapping) for k in ("app", "user", "session")):
        state: dict[str, Any] = {}
        state.update({f"{APP_PREFIX}{k}": v for k, v in _mapping(tiers.get("app")).items()})
        state.update({f"{USER_PREFIX}{k}": v for k, v in _mapping(tiers.get("user")).items()})
        state.update(_mapping(tiers.get("session")))
        return state
    return {k: v for k, v in _mapping(session_context.get("state")).items() if not k.startswith(TEMP_PREFIX)}


def host_state_delta(delta: Mapping[str, Any] | None) -> dict[str, Any]:
    """An ADK state_delta as the host wants it: app:/user: prefixes kept, temp: dropped."""
    return {k: v for k, v in (delta or {}).items() if not k.startswith(TEMP_PREFIX)}


def history_events(history: Any, agent_name: str, *, skip_call_ids: Iterable[str] = ()) -> list[Event]:
    """Host-projected history (session.Message dicts) as ADK session events.

    The history names no agents: events are the root agent's until a transfer_to_agent
    call with its result, then the agent it named's, as ADK records them. ADK resumes a
    session with the agent that answered last, so the next turn starts where ADK's would."""
    items = hist.messages(history)
    names = hist.call_names(items)
    skip = set(skip_call_ids)
    results = {m.get("call_id") for m in items if m.get("type") == "tool_result" and m.get("call_id")}
    calls = {m.get("call_id") for m in items if m.get("type") == "tool_call" and m.get("call_id")}
    paired = (results & calls) - skip
    out: list[Event] = []
    invocation = "h-0"
    author = agent_name
    transfers = {
        str(m.get("call_id")): str(_args(m.get("arguments")).get("agent_name") or "")
        for m in items
        if m.get("type") == "tool_call" and m.get("name") == TRANSFER_CALL and m.get("call_id")
    }
    for m in items:
        kind, role, text = m.get("type"), m.get("role"), str(m.get("content") or "")
        call_id = str(m.get("call_id") or "")
        if kind in ("tool_call", "tool_result", "approval_request", "approval_response"):
            if call_id not in paired or kind not in ("tool_call", "tool_result"):
                continue
            if kind == "tool_call":
                call = types.FunctionCall(id=call_id, name=str(m.get("name") or ""), args=_args(m.get("arguments")))
                prev = out[-1] if out else None
                # Parallel calls of one model turn share one event.
                if prev is not None and prev.author == author and prev.get_function_calls() and prev.content:
                    prev.content.parts = [*(prev.content.parts or []), types.Part(function_call=call)]
                else:
                    out.append(_event(author, invocation, "model", [types.Part(function_call=call)]))
            else:
                response = types.FunctionResponse(
                    id=call_id, name=hist.result_name(m, names), response=hist.output_object(hist.result_output(m))
                )
                prev = out[-1] if out else None
                if prev is not None and prev.get_function_responses() and prev.content:
                    prev.content.parts = [*(prev.content.parts or []), types.Part(function_response=response)]
                else:
                    out.append(_event(author, invocation, "user", [types.Part(function_response=response)]))
                if transfers.get(call_id):
                    author = transfers[call_id]  # the agent ADK transferred to answers from here
        elif kind == "context_checkpoint":
            out.append(_event(agent_name, invocation, "model", [types.Part(text=f"Summary of the earlier conversation:\n{text}")]))
        elif role == "user" and text:
            invocation = f"h-{m.get('seq') or len(out)}"
            out.append(_event("user", invocation, "user", [types.Part(text=text)]))
        elif role == "assistant" and text:
            out.append(_event(author, invocation, "model", [types.Part(text=text)]))
    return out


def user_content(payload: Mapping[str, Any]) -> types.Content:
    """The turn's input as an ADK user Content: text plus inline images/files (data URLs)."""
    parts: list[types.Part] = []
    blocks = payload.get("input_content")
    if isinstance(blocks, list) and blocks:
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "input_text" and block.get("text"):
                parts.append(types.Part(text=str(block["text"])))
            else:
                blob = _data_url(str(block.get("image_url") or block.get("file_data") or ""))
                if blob is not None:
                    if block.get("filename"):
                        # The file's name, as ADK's web UI sends it (displayName) and ADK
                        # hands it to the agent; its Gemini model drops it for the API.
                        blob.display_name = str(block["filename"])
                    parts.append(types.Part(inline_data=blob))
    if not any(p.text for p in parts):
        raw = payload.get("input")
        text = raw if isinstance(raw, str) else json.dumps(raw) if raw is not None else ""
        parts.insert(0, types.Part(text=text))
    return types.Content(role="user", parts=parts)


def confirmation_events(
    agent_name: str,
    confirmation_id: str,
    call: types.FunctionCall,
    hint: str = "",
) -> list[Event]:
    """The three events ADK writes when a tool asks for confirmation, rebuilt: the model's
    original call, its placeholder response requesting confirmation, and the
    adk_request_confirmation call the answer refers to."""
    invocation = "resume-" + uuid.uuid4().hex[:8]
    confirmation = ToolConfirmation(hint=hint, confirmed=False)
    placeholder = types.FunctionResponse(
        id=call.id, name=call.name, response={"error": "This tool call requires confirmation, please approve or reject."}
    )
    request = types.FunctionCall(
        id=confirmation_id,
        name=CONFIRMATION_CALL,
        args={
            "originalFunctionCall": call.model_dump(exclude_none=True, mode="json"),
            "toolConfirmation": confirmation.model_dump(by_alias=True, exclude_none=True, mode="json"),
        },
    )
    return [
        _event(agent_name, invocation, "model", [types.Part(function_call=call)]),
        _event(
            agent_name,
            invocation,
            "user",
            [types.Part(function_response=placeholder)],
            actions=EventActions(requested_tool_confirmations={call.id or "": confirmation}, skip_summarization=True),
        ),
        _event(agent_name, invocation, "model", [types.Part(function_call=request)], long_running={confirmation_id}),
    ]


def long_running_events(agent_name: str, call: types.FunctionCall) -> list[Event]:
    """The model's call to a long-running tool, rebuilt for a resume."""
    invocation = "resume-" + uuid.uuid4().hex[:8]
    return [_event(agent_name, invocation, "model", [types.Part(function_call=call)], long_running={call.id or ""})]


def dump_events(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in events]


def load_events(data: Any) -> list[Event]:
    return [Event.model_validate(d) for d in data if isinstance(d, Mapping)] if isinstance(data, list) else []


def _event(
    author: str,
    invocation: str,
    role: str,
    parts: list[types.Part],
    *,
    actions: EventActions | None = None,
    long_running: set[str] | None = None,
) -> Event:
    return Event(
        author=author,
        invocation_id=invocation,
        content=types.Content(role=role, parts=parts),
        actions=actions or EventActions(),
        long_running_tool_ids=long_running,
    )


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def _data_url(url: str) -> types.Blob | None:
    if not url.startswith("data:") or ";base64," not in url:
        return None
    import base64
    import binascii

    head, data = url[5:].split(";base64,", 1)
    try:
        return types.Blob(mime_type=head or "application/octet-stream", data=base64.b64decode(data))
    except (binascii.Error, ValueError):
        return None
