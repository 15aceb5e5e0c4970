// Package openai is agentengine's OpenAI-compatible HTTP surface: POST /v1/responses
// (with GET, DELETE, cancel and input_items on /v1/responses/{id}), POST
// /v1/chat/completions, /v1/models and the Conversations API (/v1/conversations, on
// the sessions: conversations.go). It speaks OpenAI's wire format exactly, as the
// official SDKs parse it, plus KsADK's extensions (output_text and session_id on
// objects, session_id in requests, model_metadata and model_options). Every hosted
// agent is a model.
//
// The handlers only decode, validate and map requests onto host.TurnRequest; runs are
// serialised back by two pure encoders (responseEncoder, chatEncoder) that are
// deterministic functions of a run's host.Event journal: a replay of the same journal
// gives the same events with the same sequence numbers, and a run rebuilt from the store
// (no deltas) gives the same items with the same ids.
//
// Choices where OpenAI's spec is silent or does not fit an agent runtime:
//
//   - A tool the agent runs itself is an mcp_call item (OpenAI's hosted-tool shape,
//     server_label = the agent) with its output, which no client executes; function_call
//     items are only for tools the client declared in tools. Server-side calls are held
//     back until their result (or other output) follows, so a call that turns out to
//     wait for approval is shown only as the mcp_approval_request.
//   - A run that stops for an approval ends completed (stream: response.completed) with
//     the mcp_approval_request items last in output, as OpenAI does; agent SDKs treat
//     incomplete as fatal. The client answers with an mcp_approval_response item (or a
//     function_call_output for the guarded call) in a request that continues the
//     session, or resends the conversation: the approval id then names the session.
//     The resumed call is an mcp_call with approval_request_id.
//   - A cancelled run's stream ends with response.incomplete carrying status cancelled
//     (the event union has no response.cancelled); failed runs and runs interrupted by a
//     host shutdown end with an error event (flat and nested fields) and
//     response.failed. Error codes outside OpenAI's Response.error enum become
//     server_error; the run's client-safe message is kept.
//   - Reasoning is sent as a reasoning item's summary (summary_text), not as raw
//     reasoning_text content: the AI SDK and LangChain only surface summaries.
//   - Tool results are also an opt-in response.ksadk.tool_result event (request field
//     ksadk_events: true or header X-AgentEngine-Extensions: tool_result): the SDK
//     stream helpers throw on unknown events. Chat Completions never reports the
//     agent's tool activity as tool_calls; an approval request is text in the answer,
//     answered by a user message "approve" or "reject: reason".
//   - The KsADK switch (project openai_compat: ksadk, or header X-AgentEngine-Compat)
//     restores KsADK's shapes: function_call items, approval pauses incomplete with
//     reason approval_required, approvals as chat tool_calls, and KsADK's own Responses
//     stream (ksadkEncoder). The Web UI action API streams KsADK's stream.
//   - POST /v1/responses/{id}/cancel cancels any run in progress, not only background
//     ones (a stream's client may be gone while its run goes on); on a finished
//     response it returns the response unchanged.
//   - store=false runs get no response id on their run record, so they can be neither
//     retrieved nor chained; their session still records the turn.
//   - previous_response_id continues that response's session. Sessions are linear:
//     chaining from an older response of a session continues the session as it is now.
//   - The tenant is the caller the router bound to a user (a tokens-file key, the
//     trusted user header); for the operator, safety_identifier, else user, else the
//     runtime's default user.
//   - Chat system and developer messages become the turn's instructions. Without
//     session_id the last user message is the input and the other messages are passed
//     as Responses-style items; with session_id only the new tail counts (the last user
//     message, or trailing tool messages).
package openai
