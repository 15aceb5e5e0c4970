"""The checkpoint thread of a turn is scoped by user as well as session."""

from __future__ import annotations

from agentengine_runner.runner import RunRequest

from agentengine_adapters.runconfig import thread_id


def request(user: str, session: str, invocation: str = "run_1") -> RunRequest:
    return RunRequest(app_name="app", user_id=user, session_id=session, invocation_id=invocation,
                      payload={}, session_context={})


def test_two_users_with_the_same_session_id_get_different_threads() -> None:
    assert thread_id(request("alice", "s1")) != thread_id(request("bob", "s1"))


def test_user_and_session_boundaries_cannot_collide() -> None:
    assert thread_id(request("a/b", "c")) != thread_id(request("a", "b/c"))


def test_a_turn_without_session_is_its_own_thread() -> None:
    assert thread_id(request("alice", "")) == "invocation-run_1"
