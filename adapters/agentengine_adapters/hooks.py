"""The KsADK hooks a project may define next to its agent.

- ksadk_prepare_state(payload, session_context) -> graph input (LangGraph graphs)
- ksadk_prepare_input(payload, session_context) -> chain input (LangChain; KsADK documents
  it but never calls it, we do)

Both get the payload / session context dicts as the host sent them; they may be async.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

PREPARE_STATE = "ksadk_prepare_state"
PREPARE_INPUT = "ksadk_prepare_input"
HOOK_NAMES = (PREPARE_STATE, PREPARE_INPUT)
SIGNATURE = "(payload: dict, session_context: dict)"

Hook = Callable[[dict[str, Any], dict[str, Any]], Any]


def find_hook(module: ModuleType | None, *names: str) -> tuple[str, Hook] | None:
    """The first of names the module defines (as a callable)."""
    for name in names:
        hook = getattr(module, name, None) if module is not None else None
        if callable(hook):
            return name, hook
    return None


def signature_problem(hook: Callable[..., Any]) -> str | None:
    """Why hook cannot be called as hook(payload, session_context), or None."""
    try:
        sig = inspect.signature(hook)
    except (TypeError, ValueError) as exc:
        return f"cannot read its signature: {exc}"
    try:
        sig.bind({}, {})
    except TypeError as exc:
        return f"signature {sig} does not accept {SIGNATURE}: {exc}"
    return None


async def call_hook(hook: Hook, payload: Mapping[str, Any], session_context: Mapping[str, Any]) -> Any:
    # Copies: a hook that mutates its arguments must not change what later code sees.
    result = hook(dict(payload), dict(session_context))
    if inspect.isawaitable(result):
        result = await result
    return result
