// Package actions is the Web UI action API: POST /agentengine/api/v1/<Action> with
// PascalCase JSON bodies, answered in KsADK's envelope
//
//	{"Code":0,"Message":"Success","RequestId":"req-<12hex>","Action":"<Action>","Data":{...}}
//
// so that the bundled UI and KsADK's ksadk-web client work unchanged. Like every
// surface it talks only to host.Runtime: handlers decode, validate, call the runtime
// and shape the answer.
//
// Choices where KsADK's behaviour is a flaw or does not fit this runtime:
//
//   - Errors keep the envelope: HTTP status plus a string Code (InvalidParameter,
//     MissingParameter, InvalidAction, ResourceNotFound, ResourceConflict, ...), a
//     human Message (which ksadk-web shows), Data null, and the same text in "detail"
//     for readers of FastAPI errors. Wrong JSON types are 400s naming the field.
//     Validation precedes every write: a rejected request stores nothing.
//   - Sessions are tenant-scoped by (AgentId, UserId): another user's session does not
//     exist for the caller (404). UserId defaults to "user" (the runtime's default
//     user), also for ListSessions, which KsADK read as "all users". A caller the
//     router bound to a user (a tokens-file key, the trusted user header) is that
//     user whatever UserId says. AgentId may be omitted when one agent is hosted,
//     except in ListSessions.
//   - RunAgent does not create a session for an unknown SessionId (KsADK did): the id
//     may be another user's, so it is a 404 and nothing is stored. Sessions come from
//     CreateSession, or from a RunAgent without SessionId.
//   - A client-chosen InvocationId (ksadk-web makes its own) must be new: one used by a
//     run in memory of any session, or stored in this session, is a 409 — runs are
//     indexed by invocation id, and a reused one would hide another user's run.
//   - RunAgent streams are KsADK's own /v1/responses stream (what /v1/responses gives
//     with the KsADK switch; or /v1/chat/completions chunks), rendered by api/openai:
//     tool results as response.ksadk.tool_result, reasoning once, the failure message
//     at data.error.message, response.cancelled for a stopped run. Runs are detached: a
//     client that goes away does not stop them; CancelRun and DeleteSession do.
//   - Checkpoints are the host's (the latest of each thread, saved when a run ends):
//     ListSessionCheckpoints and GetCheckpointResumePreview describe them and
//     ListToolReceipts lists the stored tool calls. ResumeRun continues a failed,
//     cancelled or cut-short run's checkpoint in place when the agent's runner keeps
//     its checkpoints with the host (the LangGraph bridge does): a new run runs the
//     thread on from it. A checkpoint waiting for approval continues by the approval
//     answer (RunAgent), a finished one is a noop.
//   - SubscribeRunEvents follows the run's journal in memory (host.Run.Subscribe):
//     nothing is polled. Stored events after the cursor are "id: <SeqId>" frames named
//     conversation.event carrying the ListSessionEvents payload. Text not yet stored
//     follows as conversation.delta frames of type assistant_stream_snapshot (the
//     cumulative text, as KsADK stores them and ksadk-web renders them, with the new
//     part in Metadata.delta; reasoning_stream_snapshot for reasoning), at most one per
//     LiveInterval. They have no id line, so Last-Event-ID always names a stored
//     event; their SeqId is that of the stored event they follow, for ordering only.
//     A reconnecting subscriber gets the partial text so far in one frame. The stream
//     ends with "data: [DONE]" after the terminal run_status.
//   - Feedback is stored as feedback events of the run (host.AppendEvents), the latest
//     one per response winning; deletion appends a tombstone. A response is named by
//     its Responses id or by its invocation id.
//   - ListSessions and GetSession read only the session summary row the store keeps
//     up to date; no action reads a whole event log.
//   - RenameSession is new (KsADK has none).
package actions
