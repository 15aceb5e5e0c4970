"""An offline stand-in for a model, so this project runs without an API key.

OfflineTeamModel is a google-adk BaseLlm with a few fixed rules instead of a language
model. It is part of this project, not of any library: change it, or delete this file once
agent.py uses a real model (agent.py imports it only when OPENAI_API_KEY is unset).

The rules, for the latest user message:
- An agent with sub-agents transfers (transfer_to_agent) to the one its `delegate` map
  names for a word of the message ("note" -> "scribe").
- Otherwise, if the message names one of the agent's tools by the words of its name
  ("save note" -> save_note, "read notes" -> read_notes), call it with the message's
  key=value pairs as arguments (title=plan text="buy milk").
- Once the tools have answered, say what they did: "Saved plan.md (version 0)." for a
  saved note, else "Tool results:\\n<tool>: {...}".
- Otherwise answer "<agent> heard: <message>", and for files sent with it (inline data)
  " Files: <name or MIME type> (<size> bytes)".
When the runner streams (RunConfig(streaming_mode=StreamingMode.SSE)) text comes word by
word as partial responses, then once whole, as Gemini models do.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

KEY_VALUE = re.compile(r"(\w+)=(\"[^\"]*\"|'[^']*'|\S+)")
TRANSFER = "transfer_to_agent"
OTHER_AGENT = re.compile(r"For context:|\[[\w-]+\] ")


class OfflineTeamModel(BaseLlm):
    """A tool-calling model that follows the rules in this module's docstring."""

    model: str = "offline"
    # A word of the user's message -> the sub-agent to transfer to.
    delegate: dict[str, str] = Field(default_factory=dict)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        contents = llm_request.contents
        question = _last_user_text(contents)
        results = [p.function_response for p in (contents[-1].parts or [])] if contents else []
        results = [r for r in results if r is not None]
        if results:
            answer = "\n".join(_said(r) for r in results)
            if any(r.name != "save_note" for r in results):
                answer = "Tool results:\n" + answer
        else:
            calls = self._calls(question, llm_request.tools_dict, seed=f"{len(contents)}:{question}")
            if calls:
                parts = [types.Part(function_call=call) for call in calls]
                yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=_usage(question, len(calls)))
                return
            agent = llm_request.config.labels.get("adk_agent_name", "") if llm_request.config and llm_request.config.labels else ""
            answer = f"{agent or 'agent'} heard: {question}"
            files = _last_user_files(contents)
            if files:
                answer += " Files: " + ", ".join(f"{b.display_name or b.mime_type} ({len(b.data or b'')} bytes)" for b in files)
        if stream:
            for word in re.findall(r"\S+\s*|\s+", answer):
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=word)]), partial=True)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=answer)]),
            usage_metadata=_usage(question, len(answer.split())),
            turn_complete=True,
            finish_reason=types.FinishReason.STOP,
        )

    def _calls(self, question: str, tools: dict[str, Any], seed: str) -> list[types.FunctionCall]:
        words = set(re.findall(r"[a-z0-9]+", KEY_VALUE.sub("", question.lower())))
        if TRANSFER in tools:
            for word, agent in self.delegate.items():
                if word in words:
                    return [types.FunctionCall(id=_call_id(seed, TRANSFER), name=TRANSFER, args={"agent_name": agent})]
        args = {k: v.strip("\"'") for k, v in KEY_VALUE.findall(question)}
        calls = []
        for name in tools:
            if name == TRANSFER or name.startswith("adk_"):
                continue
            if all(part in words or part + "s" in words for part in name.split("_")):
                calls.append(types.FunctionCall(id=_call_id(seed, name), name=name, args=args if name == "save_note" else {}))
        return calls


def _said(r: types.FunctionResponse) -> str:
    response = r.response or {}
    if r.name == "save_note" and "filename" in response:
        return f"Saved {response['filename']} (version {response['version']})."
    return f"{r.name}: {json.dumps(response, sort_keys=True, default=str)}"


def _call_id(seed: str, name: str) -> str:
    return "call_" + hashlib.sha256(f"{seed}|{name}".encode()).hexdigest()[:16]


def _usage(question: str, output_tokens: int) -> types.GenerateContentResponseUsageMetadata:
    prompt = len(question.split())
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=output_tokens, total_token_count=prompt + output_tokens
    )


def _last_user_text(contents: list[types.Content]) -> str:
    """The user's latest words; ADK shows other agents' turns to an agent as user
    messages ("For context:" before 2.0, "[agent] ..." since), which are not the user's."""
    for content in reversed(contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text and not p.thought and not OTHER_AGENT.match(p.text)]
            if texts:
                return " ".join(texts)
    return ""


def _last_user_files(contents: list[types.Content]) -> list[types.Blob]:
    """The files (inline data) of the user's latest message."""
    for content in reversed(contents):
        if content.role == "user" and any(p.text and not OTHER_AGENT.match(p.text) for p in content.parts or []):
            return [p.inline_data for p in content.parts or [] if p.inline_data is not None]
    return []
