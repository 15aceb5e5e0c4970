// Package adkweb is agentengine's ADK-web compatible HTTP surface, so that Google ADK's
// `adk web` UI and `adk api_server` clients work against any hosted agent: POST /run_sse
// and /run, GET /list-apps and /version, and /apps/{app}/users/{user}/sessions[/{id}]
// (GET, POST, PATCH, DELETE). Requests and events follow adk-python's JSON (pydantic
// models with camelCase aliases; request fields are also accepted in snake_case).
//
// Handlers only validate and map requests onto host.Runtime; a run's events are
// serialised by a pure encoder of its host.Event journal (and a session's by the same
// encoder over its stored events), so a replay gives the same events with the same ids.
//
// Mapping and choices:
//
//   - The tenant is the path's or body's user id; sessions are scoped by (app, user, id)
//     and another user's or app's session does not exist (404). Runs require an
//     existing session, as ADK does; the session is shared with the other surfaces
//     (the OpenAI surface's default user is ADK web's default "user" too).
//   - Events: user_message → author "user" (text, inlineData, fileData and
//     functionResponse parts); assistant_message → model text; reasoning → model
//     text with thought: true; tool_call → functionCall with the runner's call id
//     (the Responses API's call_id); tool_result → functionResponse with that id
//     (user-role content authored by the agent, as ADK); state_delta → an event whose
//     actions.stateDelta is the delta; run_status → nothing, except runs that failed,
//     were cancelled or were interrupted by the host, which end with an event
//     carrying errorCode and errorMessage. A /run_sse stream leaves out the user's own
//     events, as ADK's Runner does.
//   - With streaming: true every text and reasoning delta is a partial event carrying
//     the delta only; the non-partial event that follows carries the whole text.
//   - An approval request is shown as adk-python shows a tool confirmation: the
//     guarded call's placeholder functionResponse with
//     actions.requestedToolConfirmations, then an adk_request_confirmation
//     functionCall whose id is the approval id, listed in longRunningToolIds. The next
//     /run_sse answers it with a functionResponse of that id and name whose response
//     is ToolConfirmation-shaped ({"confirmed": bool}, also inside ADK's
//     {"response": "<JSON>"} wrapper); that resumes the run. A functionResponse to the
//     guarded call itself approves it and is the tool's result. Other function
//     responses reach the runner as function_call_output items.
//   - stateDelta in a run request is recorded as a user-authored state delta of the
//     turn's invocation just before the turn starts (after every check of this
//     surface; see prepareTurn). A session's initial state is a state delta written
//     outside any run, not listed among its events.
//   - Event ids are "<invocation id>-<seq>" (a stored event that becomes two ADK events
//     adds "-1"), partial events "<invocation id>-p<journal index>"; timestamps are
//     the stored events' times (partial events take the latest stored one).
//   - Errors are FastAPI's: {"detail": "text"} with 400, 404, 409, 413 or 415, and
//     for malformed requests 422 with pydantic's list {"detail": [{type, loc, msg}]}.
//     Unknown part fields are 422 (genai models forbid extra fields); genai part kinds
//     that cannot be run (functionCall, executableCode, ...) are 400.
//   - Request bodies must be JSON (or carry no Content-Type), which keeps browsers from
//     sending them cross-site without a CORS preflight.
//   - ADK's own event fields (author = the agent's name, turnComplete, finishReason,
//     usageMetadata, nodeInfo, ...) come from the runner's event meta stored with each
//     item (host.NativeEventMeta); a tool's state delta is written on its function
//     response event, as ADK does.
//   - Dev routes ADK's dev UI calls (dev_handlers.go): telemetry config (off), the agent
//     graph the runner computed (build_graph, build_graph_image, an event's graph),
//     empty eval lists, run_live refused over its WebSocket. A session created with
//     events imports them (import.go).
//   - Artifacts (artifact_handlers.go): what agents saved through the ADK bridge's
//     artifact service, kept in the store as versioned documents (host.ArtifactKey),
//     served by ADK's artifact routes; /run_sse splits an event with content and an
//     artifactDelta as ADK streams it.
//   - The agent builder (builder_handlers.go): the YAML files of Agent Config projects,
//     read and written inside the project only (the workspace's path rules, os.Root),
//     for loopback clients.
//   - Not served: memory, running evals, app-info.
package adkweb
