"""A Google ADK team: a coordinator that hands note-taking to a scribe, whose tools keep
the notes as ADK artifacts (tool_context.save_artifact / load_artifact / list_artifacts).

A note's file is "<title>.md"; shared=true saves it as "user:<title>.md", ADK's name for
an artifact of the user (every session of theirs sees it) rather than of the session.

adk_model() is ADK's LiteLlm on an OpenAI-compatible endpoint when OPENAI_API_KEY is set
(OPENAI_API_BASE or OPENAI_BASE_URL, OPENAI_MODEL_NAME), else the offline model in
offline_model.py.
"""

from __future__ import annotations

import os
import re
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.tools import ToolContext
from google.genai import types


def adk_model(delegate: dict[str, str] | None = None) -> BaseLlm:
    if os.environ.get("OPENAI_API_KEY"):
        # litellm's bundled model list, instead of downloading one each time it is imported.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        from google.adk.models.lite_llm import LiteLlm

        return LiteLlm(
            model="openai/" + os.environ.get("OPENAI_MODEL_NAME", "gpt-4o-mini"),
            api_base=os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL"),
        )
    from offline_model import OfflineTeamModel

    return OfflineTeamModel(delegate=delegate or {})


async def save_note(title: str, text: str, tool_context: ToolContext, shared: str = "false") -> dict[str, Any]:
    """Saves a note as a markdown file (a new version when the title exists already).
    shared=true keeps it for the user across sessions."""
    name = (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "note") + ".md"
    if str(shared).lower() in ("true", "yes", "1"):
        name = "user:" + name
    part = types.Part(inline_data=types.Blob(mime_type="text/markdown", data=f"# {title}\n\n{text}\n".encode()))
    version = await tool_context.save_artifact(name, part)
    return {"filename": name, "version": version}


async def read_notes(tool_context: ToolContext) -> dict[str, str]:
    """Reads every note of the session and the user (the latest version of each)."""
    notes = {}
    for name in await tool_context.list_artifacts():
        part = await tool_context.load_artifact(name)
        if part is not None and part.inline_data is not None and part.inline_data.data is not None:
            notes[name] = part.inline_data.data.decode()
    return notes


scribe = LlmAgent(
    name="scribe",
    model=adk_model(),
    description="Writes notes down and reads them back.",
    instruction="You keep the user's notes with your tools.",
    tools=[save_note, read_notes],
)

root_agent = LlmAgent(
    name="coordinator",
    model=adk_model(delegate={"note": "scribe", "notes": "scribe", "scribe": "scribe"}),
    description="Answers the user, and hands anything about notes to the scribe.",
    instruction="You coordinate. Transfer to the scribe for anything about notes.",
    sub_agents=[scribe],
)
