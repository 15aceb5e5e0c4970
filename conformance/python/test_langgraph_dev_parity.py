"""agentengine's LangGraph server API against `langgraph dev`, request for request.

The same scenario (langgraph_parity.SCENARIO: a thread, a run streamed in each stream mode, a
waited run with a tool call, a run paused on interrupt(), the state, a Command resume, the
state and history again, a stateless run) is sent to agentengine serving
examples/langgraph-chat, and each answer is compared field by field with what `langgraph dev`
answered to the same requests, recorded in testdata/langgraph-dev/ (versions in
_versions.json; re-record with record_langgraph_dev.py). Ids and times are placeholders on
both sides.

Every difference must be listed in KNOWN with its reason, and every KNOWN entry must still
match a difference: the list is the current, complete account of where the two servers
differ for this scenario.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance_fixtures import agentengine_bin  # noqa: F401 (fixture)
from conformance_server import REPO_ROOT, Server, start_server, stop_server
from langgraph_parity import GRAPH, SCENARIO, diff, record

GOLDEN = Path(__file__).resolve().parent / "testdata" / "langgraph-dev"

# (exchange names, regular expression over a difference line, reason).
KNOWN: list[tuple[set[str] | None, str, str]] = [
    ({"thread_create"}, r"^\.body\.(error|interrupts): unexpected",
     "agentengine's Thread always has error and interrupts; langgraph dev adds them once the thread has run"),
    ({"thread_create"}, r"^\.body\.metadata\.(assistant_id|graph_id): unexpected",
     ("a thread is bound to its assistant when it is created (the session is the assistant's); langgraph dev "
     "adds graph_id and assistant_id to the metadata at the first run")),
    ({"stream_messages_tuple"}, r"^\.body: length 5, want 7$",
     ("the model's two closing chunks (empty: usage only, then chunk_position \"last\") are not streamed; "
     "the bridge forwards text and tool-call deltas")),
    ({"stream_messages"}, r"^\.body: length 7, want 8$",
     ("the model's two closing chunks are not streamed (as in messages-tuple), and a streamed message ends "
     "with messages/complete, the message whole, which langgraph dev does not send after partials")),
    ({"stream_messages"}, r"^\.body\[6\]\.event: \"messages/complete\", want \"messages/partial\"$",
     "as above: the closing messages/complete where langgraph dev sends the closing chunks as partials"),
    ({"stream_messages_tuple", "stream_messages"},
     r"^\.body\[\d+\]\.data(\[1\]|\.<id>\.metadata)\.(case|checkpoint_ns|created_by|langgraph_\w+|lc_versions|ls_\w+|run_attempt): missing",
     ("a messages part's metadata names the run, thread, assistant and user; the graph's node, step and "
     "checkpoint namespace, the model's LangSmith fields and the server's own fields are not forwarded")),
    ({"stream_messages_tuple", "stream_messages"}, r"^\.body\[\d+\]\.data(\[1\]|\.<id>\.metadata)\.user_id: unexpected",
     "agentengine names the user a run belongs to in its metadata"),
    (None, r"\.usage_metadata: null, want \{",
     ("a thread's AI messages are rebuilt from stored session events, which keep a run's token usage apart "
     "from its messages: usage_metadata is null")),
    ({"stream_interrupt"}, r"\.__interrupt__\[0\]\.response_schema: missing",
     "the LangGraph bridge does not report an interrupt's response_schema"),
    ({"state_interrupted", "state_final", "history"},
     r"\.metadata\.(case|created_by|langgraph_\w+|parents|run_attempt|user_id): missing",
     ("a checkpoint's metadata is the run's (source, step, run_id, thread, graph); langgraph dev copies "
     "the thread's metadata and its server's fields into every checkpoint")),
    ({"state_interrupted", "state_final", "history"}, r"\.metadata\.step: \d+, want \d+$",
     "checkpoints here are runs' ends (the host keeps a graph's checkpoints, not its steps): step counts runs"),
]


@pytest.fixture(scope="module")
def exchanges(agentengine_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:  # noqa: F811
    project = tmp_path_factory.mktemp("parity") / GRAPH
    shutil.copytree(REPO_ROOT / "examples" / GRAPH, project,
                    ignore=shutil.ignore_patterns(".venv", "venv", ".agentengine", "__pycache__"))
    with open(project / "agentengine.yaml", "a") as f:
        f.write(f"\npython: {sys.executable}\n")
    srv: Server = start_server(agentengine_bin, [str(project)])
    try:
        yield record(srv.origin)
    finally:
        stop_server(srv.proc)


def known(name: str, line: str) -> bool:
    return any((names is None or name in names) and re.search(rx, line) for names, rx, _ in KNOWN)


def golden(name: str) -> Any:
    path = GOLDEN / f"{name}.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: run conformance/python/record_langgraph_dev.py")
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", [s[0] for s in SCENARIO])
def test_same_answer_as_langgraph_dev(exchanges: dict[str, Any], name: str) -> None:
    unexplained = [d for d in diff(golden(name), exchanges[name]) if not known(name, d)]
    assert not unexplained, f"{name} differs from langgraph dev:\n" + "\n".join(unexplained)


def test_every_known_difference_is_current(exchanges: dict[str, Any]) -> None:
    lines = {s[0]: diff(golden(s[0]), exchanges[s[0]]) for s in SCENARIO}
    stale = [rx for names, rx, _ in KNOWN
             if not any((names is None or n in names) and re.search(rx, d) for n, ds in lines.items() for d in ds)]
    assert not stale, f"KNOWN entries that no longer differ (remove them): {stale}"
