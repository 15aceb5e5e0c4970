"""The ADK bridge's artifact service (adk_artifacts.py) with the real google-adk types:
what it sends the host, what it serves from the run's artifacts."""

from __future__ import annotations

import asyncio
import json

import pytest
from agentengine_runner import Artifact, Emitter
from agentengine_runner._proto.runner.v1 import runner_pb2 as pb
from google.genai import types

from agentengine_adapters.adk_artifacts import ArtifactNotSent, HostArtifactService

SCOPE = {"app_name": "app", "user_id": "u", "session_id": "s"}


def service(*artifacts: Artifact) -> tuple[HostArtifactService, list[pb.RunEvent]]:
    sent: list[pb.RunEvent] = []

    async def sink(event: pb.RunEvent) -> None:
        sent.append(event)

    return HostArtifactService(Emitter(sink), "app", "u", "s", artifacts), sent


def test_saves_go_to_the_host_as_the_next_versions() -> None:
    async def go() -> None:
        svc, sent = service(Artifact("a.txt", 0, "text/plain", b"old", {}, 1.0))
        part = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
        assert await svc.save_artifact(filename="a.txt", artifact=part, custom_metadata={"k": 1}, **SCOPE) == 1
        assert await svc.save_artifact(filename="user:t.md", artifact=types.Part(text="hi"), **SCOPE) == 0
        a, t = (e.artifact for e in sent)
        assert (a.name, a.version, a.mime_type, a.data) == ("a.txt", 1, "image/png", b"\x89PNG")
        assert json.loads(a.meta_json) == {"customMetadata": {"k": 1}}
        assert (t.name, t.version, t.mime_type, t.data, json.loads(t.meta_json)) == ("user:t.md", 0, "text/plain", b"hi", {"text": True})
        # What it saved, it serves in the same run.
        assert await svc.list_versions(filename="a.txt", **SCOPE) == [0, 1]
        loaded = await svc.load_artifact(filename="a.txt", **SCOPE)
        assert loaded is not None and loaded.inline_data is not None and loaded.inline_data.data == b"\x89PNG"
        text = await svc.load_artifact(filename="user:t.md", **SCOPE)
        assert text is not None and text.text == "hi"
        meta = await svc.get_artifact_version(filename="a.txt", version=1, **SCOPE)
        assert meta.version == 1 and meta.custom_metadata == {"k": 1} and meta.mime_type == "image/png"
        assert "/sessions/s/" in meta.canonical_uri

    asyncio.run(go())


def test_serves_the_runs_artifacts_in_their_scope_only() -> None:
    async def go() -> None:
        svc, sent = service(
            Artifact("b.txt", 1, "text/plain", b"v1", {"text": True}, 2.0),
            Artifact("b.txt", 0, "text/plain", b"", {"text": True}, 1.0, data_omitted=True),
            Artifact("user:p.json", 0, "application/json", b"{}", {}, 1.0),
        )
        assert await svc.list_artifact_keys(**SCOPE) == ["b.txt", "user:p.json"]
        latest = await svc.load_artifact(filename="b.txt", **SCOPE)
        assert latest is not None and latest.text == "v1"
        with pytest.raises(ArtifactNotSent, match="budget"):
            await svc.load_artifact(filename="b.txt", version=0, **SCOPE)
        assert await svc.load_artifact(filename="b.txt", version=5, **SCOPE) is None
        # Another session or user of the same runner sees nothing of this run's.
        assert await svc.load_artifact(app_name="app", user_id="u", session_id="other", filename="b.txt") is None
        user = await svc.load_artifact(app_name="app", user_id="u", session_id="other", filename="user:p.json")
        assert user is not None
        assert await svc.list_artifact_keys(app_name="app", user_id="x", session_id="s") == []
        with pytest.raises(ValueError):
            await svc.save_artifact(app_name="app", user_id="x", session_id="s", filename="c", artifact=types.Part(text="x"))
        await svc.delete_artifact(filename="b.txt", **SCOPE)
        await svc.delete_artifact(filename="never.txt", **SCOPE)
        assert [(e.artifact.name, e.artifact.deleted) for e in sent] == [("b.txt", True)]
        assert await svc.list_artifact_keys(**SCOPE) == ["user:p.json"]

    asyncio.run(go())


def test_file_references_round_trip() -> None:
    async def go() -> None:
        svc, sent = service()
        ref = types.Part(file_data=types.FileData(file_uri="gs://b/x.pdf", mime_type="application/pdf"))
        await svc.save_artifact(filename="x.pdf", artifact=ref, **SCOPE)
        assert sent[0].artifact.data == b"" and json.loads(sent[0].artifact.meta_json)["fileData"]["fileUri"] == "gs://b/x.pdf"
        loaded = await svc.load_artifact(filename="x.pdf", **SCOPE)
        assert loaded is not None and loaded.file_data is not None and loaded.file_data.file_uri == "gs://b/x.pdf"

    asyncio.run(go())
