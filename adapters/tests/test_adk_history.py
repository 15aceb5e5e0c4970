"""The ADK bridge's history projection: which agent authored what."""

from __future__ import annotations

import json

from agentengine_adapters.adk_session import history_events


def test_events_after_a_transfer_are_the_target_agents() -> None:
    """The host's history names no agents: after a transfer_to_agent call and its result
    the events are the agent it named's, so ADK resumes the session with that agent."""
    history = [
        {"role": "user", "type": "user_message", "content": "save a note", "seq": 1},
        {"role": "assistant", "type": "tool_call", "call_id": "c1", "name": "transfer_to_agent", "arguments": json.dumps({"agent_name": "scribe"})},
        {"role": "assistant", "type": "tool_result", "call_id": "c1", "name": "transfer_to_agent", "output": "null", "content": "{}"},
        {"role": "assistant", "type": "tool_call", "call_id": "c2", "name": "save_note", "arguments": "{}"},
        {"role": "assistant", "type": "tool_result", "call_id": "c2", "name": "save_note", "output": json.dumps({"ok": True}), "content": "{}"},
        {"role": "assistant", "type": "assistant_message", "content": "Saved."},
        {"role": "user", "type": "user_message", "content": "thanks", "seq": 7},
        {"role": "assistant", "type": "assistant_message", "content": "You are welcome."},
    ]
    events = history_events(history, "coordinator")
    assert [e.author for e in events] == ["user", "coordinator", "coordinator", "scribe", "scribe", "scribe", "user", "scribe"]
    # Without a transfer, everything is the root agent's.
    assert {e.author for e in history_events(history[:1] + history[5:6], "coordinator")} == {"user", "coordinator"}
