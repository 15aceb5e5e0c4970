package a2a

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/gin-gonic/gin"
)

// A2A 1.0 JSON-RPC binding. The Go SDK served here (a2a-go v0.3.3) speaks 0.3 only, while
// the current Python and JS SDKs speak 1.0 by default; 1.0 renamed the methods
// (SendMessage, GetTask, …), so both versions share one endpoint and the method name picks
// the binding. This file translates 1.0 requests into the SDK's types, calls the same
// handler methods the 0.3 transport calls, and writes their results in 1.0's JSON
// (protobuf JSON: TASK_STATE_* and ROLE_* enums, parts without "kind", results wrapped as
// {"task": …} / {"statusUpdate": …}). No task logic lives here.

// ProtocolVersionV1 is the A2A 1.0 version, in the cards' supportedInterfaces and the
// A2A-Version header a 1.0 request carries.
const ProtocolVersionV1 = "1.0"

// versionHeader names the header by which a 1.0 client says which version it speaks.
const versionHeader = "A2A-Version"

// v1ValueKey marks, in a data part's metadata, a 1.0 data part whose value is not a JSON
// object: the SDK's data part holds an object, so the value travels as {"value": …}.
const v1ValueKey = "agentengine.value"

// v1Methods are the 1.0 JSON-RPC methods; every other method is 0.3's.
var v1Methods = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "GetTask": true, "CancelTask": true,
	"SubscribeToTask": true, "ListTasks": true, "GetExtendedAgentCard": true,
	"CreateTaskPushNotificationConfig": true, "GetTaskPushNotificationConfig": true,
	"ListTaskPushNotificationConfigs": true, "DeleteTaskPushNotificationConfig": true,
}

// v1Request is a JSON-RPC request as far as the dispatch needs it.
type v1Request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      any             `json:"id"`
	Params  json.RawMessage `json:"params"`
}

// isV1 reports whether a request body calls a 1.0 method; a body that is no JSON-RPC
// object is left to the 0.3 transport, which answers it.
func isV1(body []byte) (*v1Request, bool) {
	var req v1Request
	if json.Unmarshal(body, &req) != nil || !v1Methods[req.Method] {
		return nil, false
	}
	return &req, true
}

// v1 errors: the JSON-RPC code, and the reason of the google.rpc.ErrorInfo detail 1.0
// clients read.
var v1Errors = []struct {
	err    error
	code   int
	reason string
}{
	{a2a.ErrTaskNotFound, -32001, "TASK_NOT_FOUND"},
	{a2a.ErrTaskNotCancelable, -32002, "TASK_NOT_CANCELABLE"},
	{a2a.ErrPushNotificationNotSupported, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	{a2a.ErrUnsupportedOperation, -32004, "UNSUPPORTED_OPERATION"},
	{a2a.ErrUnsupportedContentType, -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
	{a2a.ErrInvalidAgentResponse, -32006, "INVALID_AGENT_RESPONSE"},
	{a2a.ErrAuthenticatedExtendedCardNotConfigured, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	{errVersionNotSupported, -32009, "VERSION_NOT_SUPPORTED"},
	{a2a.ErrInvalidParams, -32602, "INVALID_PARAMS"},
	{a2a.ErrInvalidRequest, -32600, "INVALID_REQUEST"},
	{a2a.ErrMethodNotFound, -32601, "METHOD_NOT_FOUND"},
	{a2a.ErrParseError, -32700, "PARSE_ERROR"},
	{a2a.ErrServerError, -32000, "SERVER_ERROR"},
}

var errVersionNotSupported = errors.New("version not supported")

// v1Error is a JSON-RPC error object in 1.0's shape: the message says what went wrong, and
// data holds a google.rpc.ErrorInfo with the A2A reason.
func v1Error(err error) map[string]any {
	code, reason, msg := -32603, "INTERNAL_ERROR", a2a.ErrInternalError.Error()
	for _, e := range v1Errors {
		if errors.Is(err, e.err) {
			code, reason = e.code, e.reason
			// The wrapped text is the client-safe detail ("task \"x\" not found: task not
			// found"); drop the sentinel's repetition at its end.
			msg = strings.TrimSuffix(err.Error(), ": "+e.err.Error())
			break
		}
	}
	return map[string]any{"code": code, "message": msg, "data": []any{map[string]any{
		"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
		"domain": "a2a-protocol.org", "metadata": map[string]any{},
	}}}
}

func writeV1(c *gin.Context, id any, result any, err error) {
	body := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		body["error"] = v1Error(err)
	} else {
		body["result"] = result
	}
	b, mErr := json.Marshal(body)
	if mErr != nil {
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": v1Error(a2a.ErrInternalError)})
	}
	c.Data(http.StatusOK, "application/json", b)
}

// serveV1 answers one 1.0 JSON-RPC request with h.
func serveV1(c *gin.Context, h *handler, req *v1Request) {
	switch req.ID.(type) {
	case nil, string, float64:
	default:
		writeV1(c, nil, nil, fmt.Errorf("the id must be a string, a number or null: %w", a2a.ErrInvalidRequest))
		return
	}
	if req.JSONRPC != "2.0" {
		writeV1(c, req.ID, nil, fmt.Errorf(`"jsonrpc" must be "2.0": %w`, a2a.ErrInvalidRequest))
		return
	}
	// A request without the header is a 0.3 request (as the protocol says), and 0.3 has
	// no such method.
	if v := c.GetHeader(versionHeader); !isV1Version(v) {
		if v == "" {
			v = "0.3 (no " + versionHeader + " header)"
		}
		writeV1(c, req.ID, nil, fmt.Errorf("%s is an A2A 1.0 method, called with A2A version %s; send %s: %s: %w",
			req.Method, v, versionHeader, ProtocolVersionV1, errVersionNotSupported))
		return
	}
	ctx := context.WithValue(c.Request.Context(), v1CallKey{}, true)
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	switch req.Method {
	case "SendMessage":
		p, err := decodeV1Send(params)
		if err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		res, err := h.OnSendMessage(ctx, p)
		if err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		out := map[string]any{}
		switch r := res.(type) {
		case *a2a.Task:
			out["task"] = v1Task(r)
		case *a2a.Message:
			out["message"] = v1Message(r)
		}
		writeV1(c, req.ID, out, nil)
	case "SendStreamingMessage":
		p, err := decodeV1Send(params)
		if err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		streamV1(c, req.ID, h.OnSendMessageStream(ctx, p))
	case "SubscribeToTask":
		var p struct {
			ID string `json:"id"`
		}
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		streamV1(c, req.ID, h.OnResubscribeToTask(ctx, &a2a.TaskIDParams{ID: a2a.TaskID(p.ID)}))
	case "GetTask":
		var p struct {
			ID            string `json:"id"`
			HistoryLength *int   `json:"historyLength"`
		}
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		t, err := h.OnGetTask(ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(p.ID), HistoryLength: p.HistoryLength})
		writeV1(c, req.ID, v1TaskOrNil(t, err), err)
	case "CancelTask":
		var p struct {
			ID string `json:"id"`
		}
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		t, err := h.OnCancelTask(ctx, &a2a.TaskIDParams{ID: a2a.TaskID(p.ID)})
		writeV1(c, req.ID, v1TaskOrNil(t, err), err)
	case "CreateTaskPushNotificationConfig":
		var p v1PushConfig
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		out, err := h.OnSetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: a2a.TaskID(p.TaskID), Config: p.sdk()})
		writeV1(c, req.ID, v1PushOrNil(out, err), err)
	case "GetTaskPushNotificationConfig":
		var p struct {
			TaskID string `json:"taskId"`
			ID     string `json:"id"`
		}
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		out, err := h.OnGetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: a2a.TaskID(p.TaskID), ConfigID: p.ID})
		writeV1(c, req.ID, v1PushOrNil(out, err), err)
	case "ListTaskPushNotificationConfigs":
		var p struct {
			TaskID string `json:"taskId"`
		}
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		list, err := h.OnListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: a2a.TaskID(p.TaskID)})
		if err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		configs := make([]map[string]any, 0, len(list))
		for _, tc := range list {
			configs = append(configs, v1Push(tc))
		}
		writeV1(c, req.ID, map[string]any{"configs": configs}, nil)
	case "DeleteTaskPushNotificationConfig":
		var p struct {
			TaskID string `json:"taskId"`
			ID     string `json:"id"`
		}
		if err := decodeV1(params, &p); err != nil {
			writeV1(c, req.ID, nil, err)
			return
		}
		err := h.OnDeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: a2a.TaskID(p.TaskID), ConfigID: p.ID})
		writeV1(c, req.ID, nil, err)
	case "GetExtendedAgentCard":
		_, err := h.OnGetExtendedAgentCard(ctx)
		writeV1(c, req.ID, nil, err)
	default: // ListTasks
		writeV1(c, req.ID, nil, fmt.Errorf("%s is not supported by this server: %w", req.Method, a2a.ErrUnsupportedOperation))
	}
}

// v1CallKey marks the context of a 1.0 request, for what the handler keeps past the call
// (a push config's webhook body).
type v1CallKey struct{}

func isV1Call(ctx context.Context) bool {
	v, _ := ctx.Value(v1CallKey{}).(bool)
	return v
}

// isV1Version reports whether an A2A-Version header value is 1.0 (patch ignored).
func isV1Version(v string) bool {
	v = strings.TrimSpace(v)
	return v == ProtocolVersionV1 || strings.HasPrefix(v, ProtocolVersionV1+".")
}

func decodeV1(params json.RawMessage, into any) error {
	if err := json.Unmarshal(params, into); err != nil {
		return fmt.Errorf("params: %s: %w", err.Error(), a2a.ErrInvalidParams)
	}
	return nil
}

// streamV1 writes a stream's events as server-sent events of 1.0 StreamResponses. An error
// before the first event is a plain JSON-RPC error response; one after it is an "error"
// event, as the 1.0 SDKs read them.
func streamV1(c *gin.Context, id any, events iter.Seq2[a2a.Event, error]) {
	next, stop := iter.Pull2(events)
	defer stop()
	ev, err, ok := next()
	if !ok {
		writeV1(c, id, nil, a2a.ErrInternalError)
		return
	}
	if err != nil {
		writeV1(c, id, nil, err)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.Writer.WriteHeader(http.StatusOK)
	for {
		name := ""
		var body map[string]any
		if err != nil {
			name, body = "error", map[string]any{"jsonrpc": "2.0", "id": id, "error": v1Error(err)}
		} else {
			body = map[string]any{"jsonrpc": "2.0", "id": id, "result": v1StreamResponse(ev)}
		}
		b, mErr := json.Marshal(body)
		if mErr != nil {
			return
		}
		if name != "" {
			_, _ = fmt.Fprintf(c.Writer, "event: %s\n", name)
		}
		if _, wErr := fmt.Fprintf(c.Writer, "data: %s\n\n", b); wErr != nil {
			return
		}
		c.Writer.Flush()
		if err != nil {
			return
		}
		if ev, err, ok = next(); !ok {
			return
		}
	}
}

// ---- 1.0 JSON → the SDK's types ----

type v1Part struct {
	Text      *string         `json:"text"`
	Raw       *string         `json:"raw"`
	URL       *string         `json:"url"`
	Data      json.RawMessage `json:"data"`
	Metadata  map[string]any  `json:"metadata"`
	Filename  string          `json:"filename"`
	MediaType string          `json:"mediaType"`
}

type v1InMessage struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId"`
	TaskID           string         `json:"taskId"`
	Role             any            `json:"role"`
	Parts            []v1Part       `json:"parts"`
	Metadata         map[string]any `json:"metadata"`
	Extensions       []string       `json:"extensions"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds"`
}

type v1Auth struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials"`
}

type v1PushConfig struct {
	ID             string  `json:"id"`
	TaskID         string  `json:"taskId"`
	URL            string  `json:"url"`
	Token          string  `json:"token"`
	Authentication *v1Auth `json:"authentication"`
}

func (p v1PushConfig) sdk() a2a.PushConfig {
	c := a2a.PushConfig{ID: p.ID, URL: p.URL, Token: p.Token}
	if p.Authentication != nil && p.Authentication.Scheme != "" {
		c.Auth = &a2a.PushAuthInfo{Schemes: []string{p.Authentication.Scheme}, Credentials: p.Authentication.Credentials}
	}
	return c
}

type v1SendParams struct {
	Message       *v1InMessage `json:"message"`
	Configuration *struct {
		AcceptedOutputModes        []string      `json:"acceptedOutputModes"`
		TaskPushNotificationConfig *v1PushConfig `json:"taskPushNotificationConfig"`
		HistoryLength              *int          `json:"historyLength"`
		ReturnImmediately          bool          `json:"returnImmediately"`
	} `json:"configuration"`
	Metadata map[string]any `json:"metadata"`
}

// decodeV1Send reads SendMessage's params (SendMessageRequest) as the SDK's.
func decodeV1Send(params json.RawMessage) (*a2a.MessageSendParams, error) {
	var p v1SendParams
	if err := decodeV1(params, &p); err != nil {
		return nil, err
	}
	if p.Message == nil {
		return nil, fmt.Errorf("params.message is required: %w", a2a.ErrInvalidParams)
	}
	m := p.Message
	role, err := sdkRole(m.Role)
	if err != nil {
		return nil, err
	}
	parts := make(a2a.ContentParts, 0, len(m.Parts))
	for i, part := range m.Parts {
		sp, err := sdkPart(part)
		if err != nil {
			return nil, fmt.Errorf("message.parts[%d]: %s: %w", i, err.Error(), a2a.ErrInvalidParams)
		}
		parts = append(parts, sp)
	}
	msg := &a2a.Message{ID: m.MessageID, ContextID: m.ContextID, TaskID: a2a.TaskID(m.TaskID), Role: role,
		Parts: parts, Metadata: m.Metadata, Extensions: m.Extensions}
	for _, id := range m.ReferenceTaskIDs {
		msg.ReferenceTasks = append(msg.ReferenceTasks, a2a.TaskID(id))
	}
	out := &a2a.MessageSendParams{Message: msg, Metadata: p.Metadata}
	if cfg := p.Configuration; cfg != nil {
		blocking := !cfg.ReturnImmediately
		out.Config = &a2a.MessageSendConfig{AcceptedOutputModes: cfg.AcceptedOutputModes, Blocking: &blocking, HistoryLength: cfg.HistoryLength}
		if cfg.TaskPushNotificationConfig != nil {
			pc := cfg.TaskPushNotificationConfig.sdk()
			out.Config.PushConfig = &pc
		}
	}
	return out, nil
}

// sdkRole reads a 1.0 role: its enum name, or its number as protobuf JSON allows. A
// client sends only user messages.
func sdkRole(v any) (a2a.MessageRole, error) {
	switch v {
	case nil, "ROLE_UNSPECIFIED", float64(0):
		return "", nil
	case "ROLE_USER", float64(1):
		return a2a.MessageRoleUser, nil
	}
	b, _ := json.Marshal(v)
	return "", fmt.Errorf(`message.role must be "ROLE_USER", not %s: %w`, b, a2a.ErrInvalidParams)
}

// sdkPart reads a 1.0 part: exactly one of text, raw (base64 bytes), url and data.
func sdkPart(p v1Part) (a2a.Part, error) {
	n := 0
	for _, set := range []bool{p.Text != nil, p.Raw != nil, p.URL != nil, len(p.Data) > 0 && string(p.Data) != "null"} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("a part needs exactly one of text, raw, url and data")
	}
	meta := a2a.FileMeta{MimeType: p.MediaType, Name: p.Filename}
	switch {
	case p.Text != nil:
		return a2a.TextPart{Text: *p.Text, Metadata: p.Metadata}, nil
	case p.Raw != nil:
		if _, err := base64.StdEncoding.DecodeString(*p.Raw); err != nil {
			b, uErr := base64.URLEncoding.DecodeString(*p.Raw)
			if uErr != nil {
				return nil, errors.New("raw is not base64")
			}
			*p.Raw = base64.StdEncoding.EncodeToString(b)
		}
		return a2a.FilePart{File: a2a.FileBytes{FileMeta: meta, Bytes: *p.Raw}, Metadata: p.Metadata}, nil
	case p.URL != nil:
		return a2a.FilePart{File: a2a.FileURI{FileMeta: meta, URI: *p.URL}, Metadata: p.Metadata}, nil
	}
	var v any
	if err := json.Unmarshal(p.Data, &v); err != nil {
		return nil, errors.New("data is not JSON")
	}
	if obj, ok := v.(map[string]any); ok {
		return a2a.DataPart{Data: obj, Metadata: p.Metadata}, nil
	}
	md := map[string]any{v1ValueKey: true}
	for k, x := range p.Metadata {
		md[k] = x
	}
	return a2a.DataPart{Data: map[string]any{"value": v}, Metadata: md}, nil
}

// dataValue is a data part's value: the object, or the non-object value a 1.0 part carried.
func dataValue(p a2a.DataPart) any {
	if wrapped, _ := p.Metadata[v1ValueKey].(bool); wrapped {
		return p.Data["value"]
	}
	return p.Data
}

// ---- the SDK's types → 1.0 JSON ----

func v1State(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateSubmitted:
		return "TASK_STATE_SUBMITTED"
	case a2a.TaskStateWorking:
		return "TASK_STATE_WORKING"
	case a2a.TaskStateCompleted:
		return "TASK_STATE_COMPLETED"
	case a2a.TaskStateFailed:
		return "TASK_STATE_FAILED"
	case a2a.TaskStateCanceled:
		return "TASK_STATE_CANCELED"
	case a2a.TaskStateInputRequired:
		return "TASK_STATE_INPUT_REQUIRED"
	case a2a.TaskStateRejected:
		return "TASK_STATE_REJECTED"
	case a2a.TaskStateAuthRequired:
		return "TASK_STATE_AUTH_REQUIRED"
	case a2a.TaskStateUnspecified, a2a.TaskStateUnknown:
	}
	return "TASK_STATE_UNSPECIFIED"
}

func v1Time(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func putNonEmpty(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case nil:
		return
	case string:
		if x == "" {
			return
		}
	case map[string]any:
		if len(x) == 0 {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	}
	m[k] = v
}

func v1PartJSON(p a2a.Part) map[string]any {
	out := map[string]any{}
	switch p := p.(type) {
	case a2a.TextPart:
		out["text"] = p.Text
		putNonEmpty(out, "metadata", p.Metadata)
	case a2a.DataPart:
		out["data"] = dataValue(p)
		md := map[string]any{}
		for k, v := range p.Metadata {
			if k != v1ValueKey {
				md[k] = v
			}
		}
		putNonEmpty(out, "metadata", md)
	case a2a.FilePart:
		var meta a2a.FileMeta
		switch f := p.File.(type) {
		case a2a.FileBytes:
			out["raw"], meta = f.Bytes, f.FileMeta
		case a2a.FileURI:
			out["url"], meta = f.URI, f.FileMeta
		}
		putNonEmpty(out, "mediaType", meta.MimeType)
		putNonEmpty(out, "filename", meta.Name)
		putNonEmpty(out, "metadata", p.Metadata)
	}
	return out
}

func v1Parts(ps a2a.ContentParts) []map[string]any {
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, v1PartJSON(p))
	}
	return out
}

func v1Message(m *a2a.Message) map[string]any {
	out := map[string]any{"messageId": m.ID, "parts": v1Parts(m.Parts)}
	switch m.Role {
	case a2a.MessageRoleUser:
		out["role"] = "ROLE_USER"
	case a2a.MessageRoleAgent:
		out["role"] = "ROLE_AGENT"
	case a2a.MessageRoleUnspecified:
	}
	putNonEmpty(out, "contextId", m.ContextID)
	putNonEmpty(out, "taskId", string(m.TaskID))
	putNonEmpty(out, "metadata", m.Metadata)
	putNonEmpty(out, "extensions", m.Extensions)
	if len(m.ReferenceTasks) > 0 {
		ids := make([]string, len(m.ReferenceTasks))
		for i, id := range m.ReferenceTasks {
			ids[i] = string(id)
		}
		out["referenceTaskIds"] = ids
	}
	return out
}

func v1Status(s a2a.TaskStatus) map[string]any {
	out := map[string]any{"state": v1State(s.State)}
	if s.Message != nil {
		out["message"] = v1Message(s.Message)
	}
	putNonEmpty(out, "timestamp", v1Time(s.Timestamp))
	return out
}

func v1Artifact(a *a2a.Artifact) map[string]any {
	out := map[string]any{"artifactId": string(a.ID), "parts": v1Parts(a.Parts)}
	putNonEmpty(out, "name", a.Name)
	putNonEmpty(out, "description", a.Description)
	putNonEmpty(out, "metadata", a.Metadata)
	putNonEmpty(out, "extensions", a.Extensions)
	return out
}

func v1Task(t *a2a.Task) map[string]any {
	out := map[string]any{"id": string(t.ID), "contextId": t.ContextID, "status": v1Status(t.Status)}
	arts := make([]map[string]any, 0, len(t.Artifacts))
	for _, a := range t.Artifacts {
		arts = append(arts, v1Artifact(a))
	}
	hist := make([]map[string]any, 0, len(t.History))
	for _, m := range t.History {
		hist = append(hist, v1Message(m))
	}
	out["artifacts"], out["history"] = arts, hist
	putNonEmpty(out, "metadata", t.Metadata)
	return out
}

func v1TaskOrNil(t *a2a.Task, err error) any {
	if err != nil || t == nil {
		return nil
	}
	return v1Task(t)
}

func v1Push(tc *a2a.TaskPushConfig) map[string]any {
	out := map[string]any{"taskId": string(tc.TaskID), "url": tc.Config.URL}
	putNonEmpty(out, "id", tc.Config.ID)
	putNonEmpty(out, "token", tc.Config.Token)
	if a := tc.Config.Auth; a != nil && len(a.Schemes) > 0 {
		auth := map[string]any{"scheme": a.Schemes[0]}
		putNonEmpty(auth, "credentials", a.Credentials)
		out["authentication"] = auth
	}
	return out
}

func v1PushOrNil(tc *a2a.TaskPushConfig, err error) any {
	if err != nil || tc == nil {
		return nil
	}
	return v1Push(tc)
}

// v1StreamResponse wraps one stream event as 1.0's StreamResponse. Status updates lose
// 0.3's "final": in 1.0 the stream's end is the end of the task's updates.
func v1StreamResponse(ev a2a.Event) map[string]any {
	switch e := ev.(type) {
	case *a2a.Task:
		return map[string]any{"task": v1Task(e)}
	case *a2a.Message:
		return map[string]any{"message": v1Message(e)}
	case *a2a.TaskStatusUpdateEvent:
		u := map[string]any{"taskId": string(e.TaskID), "contextId": e.ContextID, "status": v1Status(e.Status)}
		putNonEmpty(u, "metadata", e.Metadata)
		return map[string]any{"statusUpdate": u}
	case *a2a.TaskArtifactUpdateEvent:
		u := map[string]any{"taskId": string(e.TaskID), "contextId": e.ContextID, "artifact": v1Artifact(e.Artifact)}
		if e.Append {
			u["append"] = true
		}
		if e.LastChunk {
			u["lastChunk"] = true
		}
		putNonEmpty(u, "metadata", e.Metadata)
		return map[string]any{"artifactUpdate": u}
	}
	return map[string]any{}
}
