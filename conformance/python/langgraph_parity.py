"""The same requests to `langgraph dev` and to agentengine's LangGraph server API.

One scenario on examples/langgraph-chat (its offline model: plain text, a tool call, and an
interrupt before send_email), sent as raw HTTP so that the wire is what is compared: a thread
is created, a run is streamed in each stream mode, a run is waited for, a run pauses on the
interrupt, the state is read, a Command resumes it, then the state and the history are read.

`record()` runs it against a server and returns each exchange normalised (ids and times
replaced by placeholders); `langgraph dev`'s answers are kept as golden files under
testdata/langgraph-dev/ (re-recorded by record_langgraph_dev.py), and
test_langgraph_dev_parity.py compares agentengine's with them field by field.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

GRAPH = "langgraph-chat"

# (name, method, path, body): {thread} is the thread the first request creates.
SCENARIO: list[tuple[str, str, str, Any]] = [
    ("thread_create", "POST", "/threads", {"metadata": {"case": "parity"}}),
    ("stream_values", "POST", "/threads/{thread}/runs/stream",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "hello"}]}, "stream_mode": "values"}),
    ("stream_updates", "POST", "/threads/{thread}/runs/stream",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "hello again"}]}, "stream_mode": "updates"}),
    ("stream_messages_tuple", "POST", "/threads/{thread}/runs/stream",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "one more"}]}, "stream_mode": "messages-tuple"}),
    ("stream_messages", "POST", "/threads/{thread}/runs/stream",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "and more"}]}, "stream_mode": "messages"}),
    ("stream_custom", "POST", "/threads/{thread}/runs/stream",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "quiet"}]}, "stream_mode": "custom"}),
    ("wait_tool_call", "POST", "/threads/{thread}/runs/wait",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "what is the weather in Paris"}]}}),
    ("stream_interrupt", "POST", "/threads/{thread}/runs/stream",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "send an email to bob"}]},
      "stream_mode": ["values", "updates"]}),
    ("thread_interrupted", "GET", "/threads/{thread}", None),
    ("state_interrupted", "GET", "/threads/{thread}/state", None),
    ("wait_resume", "POST", "/threads/{thread}/runs/wait",
     {"assistant_id": GRAPH, "command": {"resume": {"approve": True}}}),
    ("state_final", "GET", "/threads/{thread}/state", None),
    ("history", "POST", "/threads/{thread}/history", {"limit": 1}),
    ("threads_search", "POST", "/threads/search", {"metadata": {"case": "parity"}, "limit": 5}),
    ("stateless_wait", "POST", "/runs/wait",
     {"assistant_id": GRAPH, "input": {"messages": [{"role": "user", "content": "no thread"}]}}),
]

# Keys whose values are generated: replaced whole.
_GENERATED = {
    "thread_id": "<thread>", "run_id": "<run>", "checkpoint_id": "<checkpoint>", "id": "<id>",
    "created_at": "<time>", "updated_at": "<time>", "state_updated_at": "<time>", "assistant_id": "<assistant>", "graph_id": "<graph>",
}
# A uuid, or LangChain's run id of a model call as a message id ("lc_run--<uuid>", "run-<uuid>-0").
_UUID = re.compile(r"(?:lc_run--|run-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d+)?")
_LOCAL_URL = re.compile(r"^http://127\.0\.0\.1:\d+$")
_OUR_ID = re.compile(r"\b(?:run|sess|msg|apr|item|inv)_[0-9a-f]{12,32}\b")


def normalise(v: Any, key: str = "") -> Any:
    """Ids and times become placeholders; everything else is kept."""
    if key in _GENERATED and isinstance(v, str):
        return _GENERATED[key]
    if isinstance(v, dict):
        # A thread's interrupts are keyed by task id.
        return {normalise(k): normalise(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [normalise(x, key) for x in v]
    if isinstance(v, str):
        if _LOCAL_URL.match(v):
            return "<server>"
        return _OUR_ID.sub("<id>", _UUID.sub("<id>", v))
    return v


def parse_sse(text: str) -> list[dict[str, Any]]:
    """SSE events as {"event", "data"}; comments and ids are dropped."""
    out: list[dict[str, Any]] = []
    event, data = "", None
    for line in text.splitlines():
        if line == "":
            if event or data is not None:
                out.append({"event": event, "data": data})
            event, data = "", None
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data = json.loads(line[5:].strip())
    if event or data is not None:
        out.append({"event": event, "data": data})
    return out


def record(base_url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Sends the scenario to the server at base_url; returns {name: {status, body}} normalised."""
    out: dict[str, Any] = {}
    thread = ""
    with httpx.Client(base_url=base_url, headers=headers or {}, timeout=60.0) as client:
        for name, method, path, body in SCENARIO:
            r = client.request(method, path.format(thread=thread), json=body)
            if name == "thread_create":
                thread = r.json()["thread_id"]
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                answer: Any = parse_sse(r.text)
            else:
                answer = r.json()
            out[name] = {"status": r.status_code, "body": normalise(answer)}
    return out


def diff(want: Any, got: Any, path: str = "") -> list[str]:
    """The paths where got differs from want, each with both values."""
    if isinstance(want, dict) and isinstance(got, dict):
        out: list[str] = []
        for k in sorted(set(want) | set(got), key=str):
            p = f"{path}.{k}"
            if k not in got:
                out.append(f"{p}: missing (want {json.dumps(want[k])[:120]})")
            elif k not in want:
                out.append(f"{p}: unexpected ({json.dumps(got[k])[:120]})")
            else:
                out.extend(diff(want[k], got[k], p))
        return out
    if isinstance(want, list) and isinstance(got, list):
        out = []
        if len(want) != len(got):
            out.append(f"{path}: length {len(got)}, want {len(want)}")
        for i, (w, g) in enumerate(zip(want, got)):
            out.extend(diff(w, g, f"{path}[{i}]"))
        return out
    if want != got:
        return [f"{path}: {json.dumps(got)[:120]}, want {json.dumps(want)[:120]}"]
    return []
