// Package a2a serves every hosted agent as an A2A agent (protocol 0.3, JSON-RPC
// binding) on the same host runtime as the other surfaces.
//
// The A2A Go SDK (github.com/a2aproject/a2a-go) provides the wire types, the JSON-RPC
// transport (request decoding, SSE framing of streams, the protocol's error codes); this
// package implements its request handler over host.Runtime instead of the SDK's
// in-memory task store and executor, so that a task is a run of the durable session store:
//
//   - contextId is the session (created when a message names none or an unknown one);
//     the same conversation continues on the other surfaces and back.
//   - taskId is a run: the task's first run has the task id as invocation and response
//     id; each answer to an approval request starts a further run of the same task, whose
//     invocation id is the task id followed by ".1", ".2", …
//   - the task's state is its latest run's: in progress is working, completed, failed and
//     cancelled map to their names, a run that ended waiting for approval is
//     input-required with the approval requests as data parts of the status message.
//   - each assistant message is an artifact (text part) streamed as artifact-update
//     events: each text delta appended, then a last chunk (lastChunk, append false) that
//     replaces the artifact with the whole message; tool calls, tool results and approval
//     requests are
//     agent messages of data parts, sent as working status updates and kept in the
//     task's history.
//
// Every lookup is scoped to the caller's user (api/internal/caller): another user's task
// is not found, and another user's contextId names a session of the caller's own.
package a2a
