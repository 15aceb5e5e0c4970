"""The host's payload and session context, as the Go types produce them, against what
Python reads.

pluginsdk/testdata/{payload,session_context}.json are generated from the Go types
(`go test ./pluginsdk -run TestPayloadFixtures -update`) with every field set. A key that
Python code reads from the payload, the session context, its platform_context or a resume
answer must be one of theirs: a field read on one side and not sent by the other fails
here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentengine_runner.context import InvocationContext
from agentengine_runner.expand import expand_request

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "pluginsdk" / "testdata"
SOURCES = [REPO / "pluginsdk" / "python" / "src" / "agentengine_runner", REPO / "adapters" / "agentengine_adapters"]

# Reads of these names, by the variable that holds the document.
READ = re.compile(r"\b(payload|session_context|platform|resume)(?:\.get\(|\[)\s*\"([A-Za-z_]+)\"")

# Keys read under those names that are not the host's, and why.
NOT_HOST = {
    # testing/demo.py's test runner reads knobs from its own test payloads.
    ("payload", "marker"), ("payload", "delay"), ("payload", "n"), ("payload", "size"),
    # context.py: the platform dict of a real ksadk's own context objects.
    ("platform", "identity"), ("platform", "session"),
    # context.py's docstring of to_payload: KsADK hands the context to hooks that way.
    ("payload", "platform_context"),
}


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text("utf-8"))


def host_keys() -> dict[str, set[str]]:
    payload, ctx = load("payload.json"), load("session_context.json")
    resume_keys = set(payload["resume"]).union(*(set(r) for r in payload["resumes"]))
    return {
        "payload": set(payload),
        "session_context": set(ctx),
        "platform": set(ctx["platform_context"]),
        "resume": resume_keys,
    }


def reads() -> list[tuple[str, str, str]]:
    out = []
    for root in SOURCES:
        for path in sorted(root.rglob("*.py")):
            if "_proto" in path.parts:
                continue
            text = path.read_text("utf-8")
            for m in READ.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                out.append((m.group(1), m.group(2), f"{path.relative_to(REPO)}:{line}"))
    return out


def test_every_field_python_reads_is_sent_by_the_host() -> None:
    keys = host_keys()
    found = reads()
    assert len(found) > 20  # the scan sees the SDK and the bridges
    missing = [f"{where}: {doc}[{key!r}]" for doc, key, where in found
               if key not in keys[doc] and (doc, key) not in NOT_HOST]
    assert not missing, "read but never sent by the host:\n" + "\n".join(missing)


def test_the_scan_catches_a_field_the_host_does_not_send() -> None:
    assert ("payload", "tool_mode") not in NOT_HOST
    assert "tool_mode" not in host_keys()["payload"]
    assert READ.search('x = payload.get("tool_mode")').group(2) == "tool_mode"


@pytest.mark.parametrize("field,want", [
    ("account_id", "acct_1"),
    ("tool_approval_mode", "ask"),
    ("user_id", "u1"),
    ("agent_id", "assistant"),
    ("session_id", "sess_1"),
    ("invocation_id", "run_1"),
    ("model", "assistant"),
    ("instructions", "Be brief."),
    ("is_resume", True),
    ("has_current_files", True),
])
def test_the_invocation_context_is_filled_from_the_fixtures(field: str, want: Any) -> None:
    ctx = InvocationContext.from_request(load("payload.json"), load("session_context.json"))
    assert getattr(ctx, field) == want


def test_every_resume_answer_arrives() -> None:
    payload = load("payload.json")
    assert [r["approval_request_id"] for r in payload["resumes"]] == ["apr_1", "apr_2"]
    assert payload["resume"] == payload["resumes"][0]


@pytest.mark.parametrize("omitted", [False, True])
def test_a_compact_request_expands_to_the_full_one(omitted: bool) -> None:
    # The host leaves the derived fields out (omitted) for a runner that expands payloads;
    # the fixtures hold them as null. Either way the expansion gives the full documents.
    payload, ctx = load("payload_compact.json"), load("session_context_compact.json")
    if omitted:
        for key in ("input_messages", "input_parts"):
            payload.pop(key)
        ctx.pop("history")
    expand_request(payload, ctx)
    assert payload == load("payload.json")
    assert ctx == load("session_context.json")


def test_a_full_request_is_left_as_it_is() -> None:
    payload, ctx = load("payload.json"), load("session_context.json")
    payload["input_parts"] = []  # set, even if it disagrees with input_content: kept
    expand_request(payload, ctx)
    assert payload["input_parts"] == [] and payload["input_messages"] == load("payload.json")["input_messages"]
    assert ctx == load("session_context.json")


def test_the_input_text_is_derived_as_the_host_joins_it() -> None:
    # The Go side's wire.InputText, checked by wire's tests with the same blocks.
    blocks = [
        {"type": "input_text", "text": ""},
        {"type": "input_image", "image_url": "https://x/y.png"},
        {"type": "input_text", "text": "a"},
        {"type": "input_text", "text": "b"},
    ]
    payload: dict[str, Any] = {"input_content": blocks, "history": []}
    expand_request(payload, {})
    assert payload["input"] == "a\nb"
    assert payload["input_parts"] == [
        {"text": ""},
        {"file_data": {"file_uri": "https://x/y.png", "display_name": ""}},
        {"text": "a"},
        {"text": "b"},
    ]
