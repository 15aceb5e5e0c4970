"""`import ksadk` inside a runner: the stand-in where ksadk is absent, the project's own
ksadk (with this run's context set through its API) where it is installed.

Which half runs depends on the environment: the SDK's own test venv has no ksadk; the
`ksadk` step of tests/compat/run.sh installs it and sets AGENTENGINE_TEST_REAL_KSADK=1,
which turns a missing ksadk into a failure instead of a skip.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from client import Host
from conftest import start_plugin, stop

REAL = importlib.util.find_spec("ksadk") is not None
if os.environ.get("AGENTENGINE_TEST_REAL_KSADK") == "1" and not REAL:
    raise RuntimeError("AGENTENGINE_TEST_REAL_KSADK=1 but ksadk is not installed")

needs_real = pytest.mark.skipif(not REAL, reason="ksadk not installed (tests/compat/run.sh ksadk)")
needs_absent = pytest.mark.skipif(REAL, reason="ksadk installed: the stand-in is not used")

RUNNER = "ksadk_runner:KsadkRunner"


def _python(code: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    # A fresh interpreter: sys.path and sys.meta_path changes must not leak into pytest's.
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def _run(socket_dir: str, submodule: str) -> dict[str, Any]:
    p = start_plugin(socket_dir, RUNNER)
    try:

        async def go() -> dict[str, Any]:
            async with Host(p.target) as host:
                events = await host.events(
                    "hi",
                    user_id="user-7",
                    session_id="sess-7",
                    invocation_id="inv-7",
                    payload={"submodule": submodule},
                )
            texts = [e.text_delta.text for e in events if e.WhichOneof("event") == "text_delta"]
            assert texts, (events, p.stderr())
            return json.loads("".join(texts))

        return asyncio.run(go())
    finally:
        stop(p)


@needs_absent
def test_standin_provides_runtime_context_only(socket_dir: str) -> None:
    report = _run(socket_dir, "ksadk.skills")
    assert report["standin"] is True
    for view in (report["here"], report["in_thread"]):
        assert view["user_id"] == "user-7"
        assert (view["session_id"], view["agent_id"]) == ("sess-7", "agent-1")
        assert (view["tool_session_id"], view["tool_invocation_id"]) == ("sess-7", "inv-7")
    assert report["submodule"].startswith("ModuleNotFoundError: No module named 'ksadk.skills'")
    assert "pip install ksadk" in report["submodule"]


@needs_absent
def test_standin_is_appended_not_prepended(tmp_path: Path) -> None:
    # A directory merely named ksadk on sys.path (here the cwd) is no ksadk installation.
    (tmp_path / "ksadk").mkdir()
    out = _python(
        """
        import sys
        from agentengine_runner.context import KSADK_STANDIN_DIR, use_ksadk
        assert use_ksadk() == "stand-in"
        assert use_ksadk() == "stand-in"
        assert sys.path.count(str(KSADK_STANDIN_DIR)) == 1
        assert sys.path[-1] == str(KSADK_STANDIN_DIR)
        from ksadk.runtime_context import get_current_user_id
        from agentengine_runner.context import InvocationContext, invocation_scope
        with invocation_scope(InvocationContext(user_id="u")):
            assert get_current_user_id() == "u"
        assert get_current_user_id("d") == "d"
        try:
            from ksadk import skills
        except ModuleNotFoundError as exc:
            assert "'ksadk.skills'" in str(exc) and "pip install ksadk" in str(exc), exc
        else:
            raise AssertionError("ksadk.skills imported from the stand-in")
        try:
            import ksadk.tools.builtin
        except ModuleNotFoundError as exc:
            assert "'ksadk.tools'" in str(exc) and "pip install ksadk" in str(exc), exc
        else:
            raise AssertionError("ksadk.tools imported from the stand-in")
        print("ok")
        """,
        cwd=str(tmp_path),
    )
    assert out.stdout.strip() == "ok", out.stderr


@needs_real
def test_real_ksadk_is_used_and_gets_the_run_context(socket_dir: str) -> None:
    report = _run(socket_dir, "ksadk.skills")
    assert report["standin"] is False
    assert report["submodule"] == "ok"
    for view in (report["here"], report["in_thread"]):
        assert view["type"] == "ksadk.runtime_context.PlatformInvocationContext"
        assert view["user_id"] == "user-7"
        assert (view["session_id"], view["agent_id"]) == ("sess-7", "agent-1")
        assert (view["tool_session_id"], view["tool_invocation_id"]) == ("sess-7", "inv-7")


@needs_real
def test_real_ksadk_scope_is_entered_and_left() -> None:
    out = _python(
        """
        import sys
        from agentengine_runner.context import (
            KSADK_STANDIN_DIR, InvocationContext, invocation_scope, use_ksadk)
        assert use_ksadk() == "installed"
        assert str(KSADK_STANDIN_DIR) not in sys.path
        from ksadk import runtime_context as rc
        ctx = InvocationContext.from_request(
            {"model": "m1"},
            {"platform_context": {"agent_id": "a", "account_id": "acct", "identity": {
                "identity_namespace": "ns", "tenant_id": "t1", "subject_type": "user",
                "subject_id": "sub"}}},
            user_id="u1", session_id="s1", invocation_id="i1", runner_type="langgraph")
        with invocation_scope(ctx):
            k = rc.get_current_invocation_context()
            assert (k.user_id, k.session_id, k.agent_id, k.runner_type, k.model) == (
                "u1", "s1", "a", "langgraph", "m1"), k
            assert rc.get_current_user_id() == "u1"
            assert rc.get_current_account_id() == "acct"
            t = rc.get_current_tool_execution_context_or_default()
            assert (t.session_id, t.run_id, t.invocation_id) == ("s1", "i1", "i1")
            if hasattr(rc, "get_current_tenant_id"):
                assert rc.get_current_tenant_id() == "t1"
        assert rc.get_current_invocation_context() is None
        assert rc.get_current_user_id("none") == "none"
        print("ok")
        """
    )
    assert out.stdout.strip() == "ok", out.stderr
