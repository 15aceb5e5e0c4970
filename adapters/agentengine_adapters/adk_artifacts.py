"""ADK's artifact service for one run, kept with the host.

The host sends every stored version of the session's and the user's artifacts with the
run (RunRequest.artifacts: data newest first within its budget); the agent's saves go back
as Artifact events, which the host stores as they arrive, so the version a later event's
artifactDelta names can be fetched from the ADK-web routes at once. Names with ADK's
"user:" prefix are the user's (shared by their sessions), the others the session's.

Parts are stored as bytes and a MIME type: inline data as is, text as UTF-8 with
"text": true in the meta, a file reference (file_data) as its JSON in the meta.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from agentengine_runner import Artifact, Emitter
from google.adk.artifacts.base_artifact_service import BaseArtifactService
from google.genai import types

try:  # google-adk 1.x before 1.16 has no version metadata
    from google.adk.artifacts.base_artifact_service import ArtifactVersion
except ImportError:  # pragma: no cover - old google-adk
    ArtifactVersion = None  # type: ignore[assignment,misc]

USER_PREFIX = "user:"


class ArtifactNotSent(RuntimeError):
    """A version whose data the host left out of the run (its budget was spent)."""


@dataclass
class _Version:
    version: int
    mime_type: str
    data: bytes
    meta: dict[str, Any]
    create_time: float
    omitted: bool = False


def part_to_stored(part: types.Part, custom_metadata: dict[str, Any] | None) -> tuple[bytes, str, dict[str, Any]]:
    """An artifact part as the host stores it: data, MIME type and meta."""
    meta: dict[str, Any] = {}
    if custom_metadata:
        meta["customMetadata"] = copy.deepcopy(custom_metadata)
    if part.inline_data is not None:
        blob = part.inline_data
        if getattr(blob, "display_name", None):
            meta["displayName"] = blob.display_name
        return bytes(blob.data or b""), blob.mime_type or "application/octet-stream", meta
    if part.text is not None:
        meta["text"] = True
        return part.text.encode(), "text/plain", meta
    if part.file_data is not None:
        meta["fileData"] = part.file_data.model_dump(mode="json", by_alias=True, exclude_none=True)
        return b"", part.file_data.mime_type or "", meta
    raise ValueError("an artifact must be inline data, text or a file reference")


def stored_to_part(v: _Version) -> types.Part:
    if v.meta.get("text"):
        return types.Part(text=v.data.decode())
    if isinstance(v.meta.get("fileData"), dict):
        return types.Part(file_data=types.FileData.model_validate(v.meta["fileData"]))
    blob: dict[str, Any] = {"data": v.data, "mime_type": v.mime_type}
    if v.meta.get("displayName"):
        blob["display_name"] = v.meta["displayName"]
    return types.Part(inline_data=types.Blob(**blob))


class HostArtifactService(BaseArtifactService):
    """ADK's BaseArtifactService over one run's artifacts (see the module docstring).

    It answers for the run's own app, user and session; other scopes hold nothing (ADK
    only asks for the invocation's own)."""

    def __init__(self, emit: Emitter, app_name: str, user_id: str, session_id: str, artifacts: tuple[Artifact, ...] = ()) -> None:
        self._emit = emit
        self._scope = (app_name, user_id, session_id)
        self._files: dict[str, list[_Version]] = {}
        for a in sorted(artifacts, key=lambda a: (a.name, a.version)):
            self._files.setdefault(a.name, []).append(
                _Version(a.version, a.mime_type, a.data, dict(a.meta), a.create_time, a.data_omitted)
            )

    def _mine(self, app_name: str, user_id: str, filename: str, session_id: str | None) -> bool:
        app, user, session = self._scope
        if app_name != app or user_id != user:
            return False
        return filename.startswith(USER_PREFIX) or session_id == session

    def _versions(self, app_name: str, user_id: str, filename: str, session_id: str | None) -> list[_Version]:
        if not self._mine(app_name, user_id, filename, session_id):
            return []
        return self._files.get(filename, [])

    def _pick(self, versions: list[_Version], version: int | None) -> _Version | None:
        if not versions:
            return None
        if version is None:
            return versions[-1]
        return next((v for v in versions if v.version == version), None)

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        if not filename.startswith(USER_PREFIX) and session_id is None:
            raise ValueError("Session ID must be provided for session-scoped artifacts.")
        if not self._mine(app_name, user_id, filename, session_id):
            raise ValueError(f"artifact {filename!r}: only the run's own session and user keep artifacts here")
        part = artifact if isinstance(artifact, types.Part) else types.Part.model_validate(artifact)
        data, mime, meta = part_to_stored(part, custom_metadata)
        versions = self._files.setdefault(filename, [])
        version = versions[-1].version + 1 if versions else 0
        await self._emit.artifact(filename, version, data, mime, meta)
        versions.append(_Version(version, mime, data, meta, time.time()))
        return version

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        v = self._pick(self._versions(app_name, user_id, filename, session_id), version)
        if v is None:
            return None
        if v.omitted:
            raise ArtifactNotSent(
                f"artifact {filename!r} version {v.version} was not sent to the runner: the host's budget of "
                "artifact bytes per run went to newer versions"
            )
        return stored_to_part(v)

    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        return sorted(n for n, vs in self._files.items() if vs and self._mine(app_name, user_id, n, session_id))

    async def delete_artifact(self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None) -> None:
        if not self._versions(app_name, user_id, filename, session_id):
            return
        await self._emit.artifact_deleted(filename)
        self._files.pop(filename, None)

    async def list_versions(self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None) -> list[int]:
        return [v.version for v in self._versions(app_name, user_id, filename, session_id)]

    def _metadata(self, app_name: str, user_id: str, filename: str, session_id: str | None, v: _Version) -> Any:
        if filename.startswith(USER_PREFIX):
            uri = f"agentengine://apps/{app_name}/users/{user_id}/artifacts/{filename}/versions/{v.version}"
        else:
            uri = f"agentengine://apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts/{filename}/versions/{v.version}"
        return ArtifactVersion(
            version=v.version,
            canonical_uri=uri,
            custom_metadata=copy.deepcopy(v.meta.get("customMetadata") or {}),
            create_time=v.create_time,
            mime_type=v.mime_type or None,
        )

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[Any]:
        return [self._metadata(app_name, user_id, filename, session_id, v) for v in self._versions(app_name, user_id, filename, session_id)]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> Any:
        v = self._pick(self._versions(app_name, user_id, filename, session_id), version)
        return None if v is None else self._metadata(app_name, user_id, filename, session_id, v)
