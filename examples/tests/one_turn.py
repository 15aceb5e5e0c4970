"""One turn of a project's agent through its framework's own API, printed as JSON.

Run with the project as the working directory, in the project's virtualenv, as
`python -c "$(cat one_turn.py)" FRAMEWORK MODULE VARIABLE QUESTION` (so the project, not
this directory, is first on sys.path, as with `python -c` in the project). It never
imports agentengine: it reports whether agentengine's modules are importable at all.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import sys
from typing import Any


def langchain_turn(agent: Any, question: str) -> dict[str, Any]:
    # ainvoke: graphs with async nodes have no synchronous invoke.
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": question}]}))
    messages = state["messages"]
    ai = [m for m in messages if m.type == "ai"]
    return {
        "calls": [c["name"] for m in ai for c in m.tool_calls],
        "results": [str(m.content) for m in messages if m.type == "tool"],
        "answer": ai[-1].content if ai and isinstance(ai[-1].content, str) else str(ai[-1].content if ai else ""),
    }


async def adk_turn(agent: Any, question: str) -> dict[str, Any]:
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    sessions = InMemorySessionService()
    runner = Runner(app_name="app", agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name="app", user_id="user")
    message = types.Content(role="user", parts=[types.Part(text=question)])
    out: dict[str, Any] = {"calls": [], "results": [], "answer": ""}
    async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
        out["calls"] += [c.name for c in event.get_function_calls()]
        out["results"] += [json.dumps(r.response, default=str) for r in event.get_function_responses()]
        if event.is_final_response() and event.content and event.content.parts:
            out["answer"] += "".join(p.text or "" for p in event.content.parts)
    return out


def main() -> None:
    framework, module_name, variable, question = sys.argv[1:5]
    bridges = ["agentengine_adapters", "agentengine_runner", "ksadk"]
    importable = [name for name in bridges if importlib.util.find_spec(name) is not None]
    agent = getattr(importlib.import_module(module_name), variable)
    if framework == "adk":
        result = asyncio.run(adk_turn(agent, question))
    else:
        result = langchain_turn(agent, question)
    result["agentengine_importable"] = importable
    print(json.dumps(result))


main()
