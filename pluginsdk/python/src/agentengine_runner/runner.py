"""The interface a runner implements, and the plain types it sees."""

from __future__ import annotations

import abc
import warnings
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .emitter import Emitter


class Framework:
    """Framework names the host knows (DescribeResponse.framework)."""

    GO = "go"
    LANGGRAPH = "langgraph"
    LANGCHAIN = "langchain"
    DEEPAGENTS = "deepagents"
    ADK = "adk"


@dataclass(frozen=True)
class Capabilities:
    resume: bool = False
    # None: derived from whether the runner overrides Runner.summarize.
    summarize: bool | None = None
    # The runner keeps its framework checkpoints with the host (emitter.RunCheckpoints).
    checkpoints: bool = False
    # The runner keeps its agent's artifacts with the host (Emitter.artifact,
    # RunRequest.artifacts).
    artifacts: bool = False
    # Accepted so that runners written for earlier SDKs still start (this SDK ships inside
    # the agentengine binary), and ignored: the host never read them.
    streaming: InitVar[bool | None] = None
    multimodal_input: InitVar[bool | None] = None

    def __post_init__(self, streaming: bool | None, multimodal_input: bool | None) -> None:
        if streaming is not None or multimodal_input is not None:
            warnings.warn(
                "Capabilities(streaming=..., multimodal_input=...) are ignored and will go: "
                "every run streams, and every runner gets the input's content blocks",
                DeprecationWarning,
                stacklevel=3,
            )


@dataclass(frozen=True)
class Description:
    framework: str
    agent_name: str
    description: str = ""
    capabilities: Capabilities = field(default_factory=Capabilities)
    # A framework-native description of the loaded agent (JSON-encodable), sent as
    # DescribeResponse.native_json. One that is costly to compute is better answered by
    # the Call method NATIVE_CALL, which the host makes on first need and keeps (the ADK
    # bridge's, what ADK's dev UI draws graphs from, is).
    native: Any = None


# The Call method the host makes for an agent's framework-native description when its
# Describe carried none; the answer is JSON (null: none). The host keeps it until the
# agent's code reloads.
NATIVE_CALL = "agent.native"


@dataclass(frozen=True)
class CheckpointWrite:
    """One pending write of a task to a checkpoint; data is the runner's own encoding."""

    thread_id: str
    namespace: str
    checkpoint_id: str
    task_id: str
    index: int
    channel: str
    task_path: str
    data: bytes


@dataclass(frozen=True)
class Checkpoint:
    """A saved thread state the host keeps for the runner; data is the runner's encoding."""

    thread_id: str
    namespace: str
    checkpoint_id: str
    parent_id: str
    data: bytes
    writes: tuple[CheckpointWrite, ...] = ()


@dataclass(frozen=True)
class Artifact:
    """One stored version of a named artifact (the user's when the name starts with
    "user:"); data is empty and data_omitted set when the host's budget of artifact bytes
    per run was spent on newer versions."""

    name: str
    version: int
    mime_type: str
    data: bytes
    meta: dict[str, Any]
    create_time: float = 0.0
    data_omitted: bool = False


@dataclass(frozen=True)
class RunRequest:
    """One turn. payload and session_context are the host's JSON documents as plain dicts
    (KsADK's payload fields), ready to hand to user hooks such as ksadk_prepare_state."""

    app_name: str
    user_id: str
    session_id: str
    invocation_id: str
    payload: dict[str, Any]
    session_context: dict[str, Any]
    # The session's checkpoints the host keeps (latest per thread and namespace), sent when
    # the runner's capabilities include checkpoints.
    checkpoints: tuple[Checkpoint, ...] = ()
    # Every version of the session's and the user's artifacts, sent when the runner's
    # capabilities include artifacts.
    artifacts: tuple[Artifact, ...] = ()

    @property
    def input(self) -> Any:
        return self.payload.get("input")

    @property
    def is_resume(self) -> bool:
        return bool(self.session_context.get("is_resume"))


@dataclass(frozen=True)
class SummarizeRequest:
    history: list[Any]
    instructions: str


class RunnerError(Exception):
    """An error with a machine-readable code for the host (runnerv1.Error.code)."""

    def __init__(self, message: str, code: str = "agent_error") -> None:
        super().__init__(message)
        self.code = code


class CallError(Exception):
    """A refusal of Runner.call the host shows its client: code is one of
    "invalid_argument" (bad input), "failed_precondition" (the agent's environment lacks
    what the method needs) or "not_found"."""

    def __init__(self, message: str, code: str = "invalid_argument") -> None:
        super().__init__(message)
        self.code = code


class Runner(abc.ABC):
    """Implement describe() and run(); override summarize() to offer summaries.

    One instance serves every run of the process, concurrently: keep per-run state in
    locals (or the invocation context), not on self.
    """

    @abc.abstractmethod
    def describe(self) -> Description: ...

    @abc.abstractmethod
    async def run(self, request: RunRequest, emit: Emitter) -> None:
        """Runs one turn, reporting through emit. Returning ends the stream; raising turns
        into an Error event. Cancellation (the host cancelled the call) arrives as
        asyncio.CancelledError at the current await."""

    async def summarize(self, request: SummarizeRequest) -> str:
        raise NotImplementedError

    async def call(self, method: str, arg: Any) -> Any:
        """Runs a framework-native operation the host asks for by name (the Call RPC)
        with arg, the decoded JSON argument, and returns a JSON-serialisable result.
        Raise CallError to refuse; NotImplementedError for a method it does not know."""
        raise NotImplementedError(method)

    def supports_summarize(self) -> bool:
        return type(self).summarize is not Runner.summarize
