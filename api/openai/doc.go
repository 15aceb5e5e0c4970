// Package openai is agentengine's OpenAI-compatible HTTP surface: POST /v1/responses
// (with GET, DELETE, cancel and input_items on /v1/responses/{id}), POST
// /v1/chat/completions and /v1/models. It speaks OpenAI's wire format exactly, as the
// official SDKs parse it (see shared/research/openai-wire.md), plus the KsADK extensions
// of seed 001 (output_text and session_id on objects, session_id in requests,
// model_metadata and model_options). Every hosted agent is a model.
//
// The handlers only decode, validate and map requests onto host.TurnRequest; runs are
// serialised back by two pure encoders (responseEncoder, chatEncoder) that are
// deterministic functions of a run's host.Event journal: a replay of the same journal
// gives the same events with the same sequence numbers, and a run rebuilt from the store
// (no deltas) gives the same items with the same ids.
//
// Choices where OpenAI's spec is silent or does not fit an agent runtime:
//
//   - A run that stops for an approval ends with status incomplete (stream: terminal
//     response.incomplete), the mcp_approval_request item last in output, as seed 001
//     specifies. incomplete_details is null: KsADK's reason "approval_required" is
//     outside OpenAI's enum, which openai-python's strict validation enforces. The
//     client answers with an mcp_approval_response item (or a function_call_output for
//     the guarded call) in a request that continues the session (previous_response_id
//     or conversation).
//   - A function_call_output resumes a run only when the request continues a session
//     whose latest run is waiting for an approval with that call id (or approval id);
//     otherwise it is an ordinary input item. Its output may decide the approval: a JSON
//     object {"approve": false, "reason": "..."} rejects, anything else approves and is
//     the tool's result. A chat tool message answering a pending approval works alike.
//   - A cancelled run's stream ends with response.incomplete carrying status cancelled
//     (the event union has no response.cancelled); failed runs and runs interrupted by a
//     host shutdown end with an error event (flat and nested fields) and
//     response.failed. Error codes outside OpenAI's Response.error enum become
//     server_error; the run's client-safe message is kept.
//   - Reasoning is sent as a reasoning item's summary (summary_text), not as raw
//     reasoning_text content: the AI SDK and LangChain only surface summaries.
//   - Tool calls the agent ran itself are function_call items (status completed) in
//     Responses output; their results are not output items but an opt-in
//     response.ksadk.tool_result event (request field ksadk_events: true or header
//     X-AgentEngine-Extensions: tool_result), because the SDK stream helpers throw on
//     unknown events. Chat Completions reports only calls that wait for the client
//     (pending approvals, finish_reason tool_calls).
//   - POST /v1/responses/{id}/cancel cancels any run in progress, not only background
//     ones (a stream's client may be gone while its run goes on); on a finished
//     response it returns the response unchanged.
//   - store=false runs get no response id on their run record, so they can be neither
//     retrieved nor chained; their session still records the turn.
//   - previous_response_id continues that response's session. Sessions are linear:
//     chaining from an older response of a session continues the session as it is now.
//   - The tenant is the X-AgentEngine-User header, else safety_identifier, else user,
//     else the runtime's default user.
//   - Chat system and developer messages become the turn's instructions. Without
//     session_id the last user message is the input and the other messages are passed
//     as Responses-style items; with session_id only the new tail counts (the last user
//     message, or trailing tool messages).
package openai
