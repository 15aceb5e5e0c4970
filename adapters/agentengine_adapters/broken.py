"""The runner served when the project cannot be loaded.

The process still answers Describe (so the host can tell the agent exists) and every Run
fails fast with the load error as "<ExceptionType>: <message>", its traceback in the Error
detail and the stderr log, instead of the process exiting and the host seeing a crash.
"""

from __future__ import annotations

import copy
import traceback

from agentengine_runner import Capabilities, Description, Emitter, Runner, RunRequest

from .config import Settings


class BrokenRunner(Runner):
    def __init__(self, settings: Settings, error: BaseException) -> None:
        self.settings = settings
        self.error = error
        self.traceback = "".join(traceback.format_exception(error))

    def describe(self) -> Description:
        return Description(
            framework=self.settings.framework,
            agent_name=self.settings.agent_name,
            description=f"failed to load: {type(self.error).__name__}: {self.error}",
            capabilities=Capabilities(),
        )

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        # A copy per run (same type and message, so the SDK's Error event reads
        # "<Type>: <message>"), chained to the load error so the detail shows the import
        # traceback; re-raising the one object would grow its traceback run after run.
        raise _copy(self.error) from self.error


def _copy(error: BaseException) -> BaseException:
    try:
        fresh = copy.copy(error)
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    fresh.__traceback__ = None
    return fresh
