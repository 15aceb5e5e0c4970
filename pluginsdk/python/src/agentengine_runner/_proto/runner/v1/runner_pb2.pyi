from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DescribeRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ("protocol_version", "framework", "agent_name", "description", "capabilities", "run_lane", "native_json")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    FRAMEWORK_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    RUN_LANE_FIELD_NUMBER: _ClassVar[int]
    NATIVE_JSON_FIELD_NUMBER: _ClassVar[int]
    protocol_version: str
    framework: str
    agent_name: str
    description: str
    capabilities: Capabilities
    run_lane: str
    native_json: bytes
    def __init__(self, protocol_version: _Optional[str] = ..., framework: _Optional[str] = ..., agent_name: _Optional[str] = ..., description: _Optional[str] = ..., capabilities: _Optional[_Union[Capabilities, _Mapping]] = ..., run_lane: _Optional[str] = ..., native_json: _Optional[bytes] = ...) -> None: ...

class Capabilities(_message.Message):
    __slots__ = ("resume", "summarize", "checkpoints", "expands_payload", "artifacts")
    RESUME_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    EXPANDS_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    resume: bool
    summarize: bool
    checkpoints: bool
    expands_payload: bool
    artifacts: bool
    def __init__(self, resume: bool = ..., summarize: bool = ..., checkpoints: bool = ..., expands_payload: bool = ..., artifacts: bool = ...) -> None: ...

class RunRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "invocation_id", "payload_json", "session_context_json", "checkpoints", "trace_context", "artifacts")
    class TraceContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    SESSION_CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    invocation_id: str
    payload_json: bytes
    session_context_json: bytes
    checkpoints: _containers.RepeatedCompositeFieldContainer[Checkpoint]
    trace_context: _containers.ScalarMap[str, str]
    artifacts: _containers.RepeatedCompositeFieldContainer[Artifact]
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., invocation_id: _Optional[str] = ..., payload_json: _Optional[bytes] = ..., session_context_json: _Optional[bytes] = ..., checkpoints: _Optional[_Iterable[_Union[Checkpoint, _Mapping]]] = ..., trace_context: _Optional[_Mapping[str, str]] = ..., artifacts: _Optional[_Iterable[_Union[Artifact, _Mapping]]] = ...) -> None: ...

class RunEvent(_message.Message):
    __slots__ = ("text_delta", "message_done", "reasoning_delta", "tool_call_delta", "tool_call", "tool_result", "approval_request", "state_delta", "usage", "error", "native", "checkpoint", "checkpoint_write", "checkpoint_delete", "batch", "artifact")
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_DONE_FIELD_NUMBER: _ClassVar[int]
    REASONING_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_REQUEST_FIELD_NUMBER: _ClassVar[int]
    STATE_DELTA_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NATIVE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_WRITE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_DELETE_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    text_delta: TextDelta
    message_done: MessageDone
    reasoning_delta: ReasoningDelta
    tool_call_delta: ToolCallDelta
    tool_call: ToolCall
    tool_result: ToolResult
    approval_request: ApprovalRequest
    state_delta: StateDelta
    usage: Usage
    error: Error
    native: Native
    checkpoint: Checkpoint
    checkpoint_write: CheckpointWrite
    checkpoint_delete: CheckpointDelete
    batch: RunEventBatch
    artifact: Artifact
    def __init__(self, text_delta: _Optional[_Union[TextDelta, _Mapping]] = ..., message_done: _Optional[_Union[MessageDone, _Mapping]] = ..., reasoning_delta: _Optional[_Union[ReasoningDelta, _Mapping]] = ..., tool_call_delta: _Optional[_Union[ToolCallDelta, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCall, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., approval_request: _Optional[_Union[ApprovalRequest, _Mapping]] = ..., state_delta: _Optional[_Union[StateDelta, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., native: _Optional[_Union[Native, _Mapping]] = ..., checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ..., checkpoint_write: _Optional[_Union[CheckpointWrite, _Mapping]] = ..., checkpoint_delete: _Optional[_Union[CheckpointDelete, _Mapping]] = ..., batch: _Optional[_Union[RunEventBatch, _Mapping]] = ..., artifact: _Optional[_Union[Artifact, _Mapping]] = ...) -> None: ...

class RunEventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[RunEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[RunEvent, _Mapping]]] = ...) -> None: ...

class TextDelta(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class MessageDone(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ReasoningDelta(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ToolCallDelta(_message.Message):
    __slots__ = ("call_id", "name", "arguments_delta")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_DELTA_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    arguments_delta: str
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_delta: _Optional[str] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("call_id", "name", "arguments")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    arguments: str
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("call_id", "name", "output", "is_error", "traced")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    TRACED_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    output: str
    is_error: bool
    traced: bool
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., output: _Optional[str] = ..., is_error: bool = ..., traced: bool = ...) -> None: ...

class ApprovalRequest(_message.Message):
    __slots__ = ("id", "call_id", "name", "arguments", "message", "detail_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_JSON_FIELD_NUMBER: _ClassVar[int]
    id: str
    call_id: str
    name: str
    arguments: str
    message: str
    detail_json: bytes
    def __init__(self, id: _Optional[str] = ..., call_id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ..., message: _Optional[str] = ..., detail_json: _Optional[bytes] = ...) -> None: ...

class StateDelta(_message.Message):
    __slots__ = ("delta_json",)
    DELTA_JSON_FIELD_NUMBER: _ClassVar[int]
    delta_json: bytes
    def __init__(self, delta_json: _Optional[bytes] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens", "model")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_tokens: int
    model: str
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., reasoning_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., model: _Optional[str] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("message", "code", "detail")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    message: str
    code: str
    detail: str
    def __init__(self, message: _Optional[str] = ..., code: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class Native(_message.Message):
    __slots__ = ("framework", "kind", "data_json")
    FRAMEWORK_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    framework: str
    kind: str
    data_json: bytes
    def __init__(self, framework: _Optional[str] = ..., kind: _Optional[str] = ..., data_json: _Optional[bytes] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("thread_id", "namespace", "checkpoint_id", "parent_id", "data", "writes")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    namespace: str
    checkpoint_id: str
    parent_id: str
    data: bytes
    writes: _containers.RepeatedCompositeFieldContainer[CheckpointWrite]
    def __init__(self, thread_id: _Optional[str] = ..., namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., data: _Optional[bytes] = ..., writes: _Optional[_Iterable[_Union[CheckpointWrite, _Mapping]]] = ...) -> None: ...

class CheckpointWrite(_message.Message):
    __slots__ = ("thread_id", "namespace", "checkpoint_id", "task_id", "index", "channel", "task_path", "data")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    TASK_PATH_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    namespace: str
    checkpoint_id: str
    task_id: str
    index: int
    channel: str
    task_path: str
    data: bytes
    def __init__(self, thread_id: _Optional[str] = ..., namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., task_id: _Optional[str] = ..., index: _Optional[int] = ..., channel: _Optional[str] = ..., task_path: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class CheckpointDelete(_message.Message):
    __slots__ = ("thread_id",)
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    def __init__(self, thread_id: _Optional[str] = ...) -> None: ...

class Artifact(_message.Message):
    __slots__ = ("name", "version", "mime_type", "data", "meta_json", "create_time", "data_omitted", "deleted")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    META_JSON_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DATA_OMITTED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    mime_type: str
    data: bytes
    meta_json: bytes
    create_time: float
    data_omitted: bool
    deleted: bool
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., mime_type: _Optional[str] = ..., data: _Optional[bytes] = ..., meta_json: _Optional[bytes] = ..., create_time: _Optional[float] = ..., data_omitted: bool = ..., deleted: bool = ...) -> None: ...

class SummarizeRequest(_message.Message):
    __slots__ = ("history_json", "instructions")
    HISTORY_JSON_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    history_json: bytes
    instructions: str
    def __init__(self, history_json: _Optional[bytes] = ..., instructions: _Optional[str] = ...) -> None: ...

class SummarizeResponse(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: str
    def __init__(self, summary: _Optional[str] = ...) -> None: ...

class CallRequest(_message.Message):
    __slots__ = ("method", "json")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    method: str
    json: bytes
    def __init__(self, method: _Optional[str] = ..., json: _Optional[bytes] = ...) -> None: ...

class CallResponse(_message.Message):
    __slots__ = ("json",)
    JSON_FIELD_NUMBER: _ClassVar[int]
    json: bytes
    def __init__(self, json: _Optional[bytes] = ...) -> None: ...

class LaneFrame(_message.Message):
    __slots__ = ("run", "start", "cancel", "event", "end")
    RUN_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    run: int
    start: RunRequest
    cancel: LaneCancel
    event: RunEvent
    end: LaneEnd
    def __init__(self, run: _Optional[int] = ..., start: _Optional[_Union[RunRequest, _Mapping]] = ..., cancel: _Optional[_Union[LaneCancel, _Mapping]] = ..., event: _Optional[_Union[RunEvent, _Mapping]] = ..., end: _Optional[_Union[LaneEnd, _Mapping]] = ...) -> None: ...

class LaneCancel(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LaneEnd(_message.Message):
    __slots__ = ("error",)
    ERROR_FIELD_NUMBER: _ClassVar[int]
    error: str
    def __init__(self, error: _Optional[str] = ...) -> None: ...
