"""`python -m agentengine_adapters`: the framework runner process the Go host starts.

    python -u -m agentengine_adapters           serve the project (under go-plugin)
    python -m agentengine_adapters doctor       print a JSON health report, exit 0 if ok

The environment (AGENTENGINE_PROJECT_DIR, AGENTENGINE_FRAMEWORK, AGENTENGINE_ENTRY_POINT,
AGENTENGINE_AGENT_VARIABLE, AGENTENGINE_AGENT_NAME, AGENTENGINE_STATE_DIR) says what to
load; see config.py.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentengine_runner import Runner


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "doctor":
        from .doctor import main as doctor_main

        raise SystemExit(doctor_main())
    if args:
        sys.stderr.write("usage: python -m agentengine_adapters [doctor]\n")
        raise SystemExit(2)
    serve_project()


def serve_project() -> None:
    from agentengine_runner import prepare, serve, zygote
    from agentengine_runner.hclog import get_logger

    fd = zygote.fd_from_env()
    if fd is not None:
        # The host pre-forks the runner processes from this one (agentengine_runner.zygote),
        # which imports the agent and forks; each child serves.
        get_logger()
        zygote.run(fd, load_project, "of the project")
        return
    # Handshake check and stdout capture first: the user's module may print on import.
    prepare()
    get_logger()  # hclog JSON on stderr for load errors too (our logger is its child)
    serve(load_project())


def load_project() -> Runner:
    from .bridges import make_runner
    from .broken import BrokenRunner
    from .config import Settings

    runner = make_runner(Settings.from_env())
    if isinstance(runner, BrokenRunner):
        # The agent is not ready: the process ends before the handshake, and the host
        # marks the agent unavailable quoting the traceback make_runner logged to stderr.
        raise SystemExit(1)
    return runner


if __name__ == "__main__":
    main()
