package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// API formats of RunAgent.
const (
	formatResponses = "responses"
	formatChat      = "chat_completions"
)

type runAgentRequest struct {
	scoped
	SessionID      string          `json:"SessionId"`
	InvocationID   string          `json:"InvocationId"`
	Messages       json.RawMessage `json:"Messages"`
	ResponsesInput json.RawMessage `json:"ResponsesInput"`
	APIFormat      string          `json:"ApiFormat"`
	Stream         bool            `json:"Stream"`
	Background     bool            `json:"Background"`
	modelFields
	PreviousResponseID string `json:"PreviousResponseId"`
}

// modelFields are the run options RunAgent and ResumeRun share, passed to the runner.
type modelFields struct {
	Model         string          `json:"Model"`
	ModelMetadata json.RawMessage `json:"ModelMetadata"`
	ModelOptions  json.RawMessage `json:"ModelOptions"`
	Metadata      json.RawMessage `json:"Metadata"`
}

// apply checks the options and sets them on t.
func (m *modelFields) apply(t *host.TurnRequest) *actionError {
	var e *actionError
	if t.Metadata, e = metadataOf(m.Metadata); e != nil {
		return e
	}
	if t.ModelOptions, e = jsonObject("ModelOptions", m.ModelOptions); e != nil {
		return e
	}
	t.ModelMetadata, e = modelMetadata(m.ModelMetadata, m.Model)
	return e
}

// Limits on Metadata, which RunAgent accepts with any JSON values (ksadk-web sends
// {"agentengine": {...}}): non-string values reach the runner as their JSON text.
const (
	maxMetadataPairs    = 32
	maxMetadataKeyLen   = 64
	maxMetadataValueLen = 4096
)

type backgroundData struct {
	SessionID    string `json:"SessionId"`
	InvocationID string `json:"InvocationId"`
	ResponseID   string `json:"ResponseId,omitempty"`
	Status       string `json:"Status"`
	Background   bool   `json:"Background"`
	SubscribeURL string `json:"SubscribeUrl"`
}

// runAgent serves RunAgent: it starts a turn and answers with the finished
// Responses (or chat.completion) object, its stream, or at once with a handle to
// follow it by (Background).
func (s *Surface) runAgent(ctx context.Context, c *gin.Context, req *runAgentRequest) (any, *actionError) {
	turn, format, e := s.runTurn(ctx, c, req)
	if e != nil {
		return nil, e
	}
	// The client learns the run's ids from the finished answer only.
	turn.Unannounced = !req.Background && !req.Stream
	run, err := s.rt.Start(ctx, turn)
	if errors.Is(err, session.ErrExists) { // a concurrent run took the InvocationId
		return nil, conflict("InvocationId %q is already used; every run needs a new one", turn.InvocationID)
	}
	if err != nil {
		return nil, s.fromHost("RunAgent", err)
	}
	runHeaders(c, run)
	switch {
	case req.Background:
		q := url.Values{"SessionId": {run.Key.ID}, "InvocationId": {run.InvocationID}, "AgentId": {run.Key.App}}
		return backgroundData{SessionID: run.Key.ID, InvocationID: run.InvocationID, ResponseID: run.ResponseID,
			Status: "running", Background: true, SubscribeURL: Prefix + "SubscribeRunEvents?" + q.Encode()}, nil
	case req.Stream && format == formatChat:
		s.streamEnded(run, openai.StreamChat(c, run, s.cfg.KeepAlive))
		return nil, nil
	case format == formatChat:
		cc, err := openai.WaitChatCompletion(c, run)
		var re *openai.RequestError
		if errors.As(err, &re) {
			return nil, &actionError{Status: re.Status, Code: runFailureCode(re.Status), Message: re.Message}
		}
		if err != nil {
			return nil, clientGone() // the run goes on
		}
		return cc, nil
	}
	return s.answerResponse(ctx, c, run, req.Stream)
}

// answerResponse answers with a started run in the Responses format: its stream, or the
// finished object.
func (s *Surface) answerResponse(ctx context.Context, c *gin.Context, run *host.Run, stream bool) (any, *actionError) {
	if stream {
		s.streamEnded(run, openai.StreamResponse(c, run, s.cfg.KeepAlive))
		return nil, nil
	}
	resp, err := openai.WaitResponse(ctx, run)
	if err != nil {
		return nil, clientGone() // the run goes on
	}
	return resp, nil
}

// runHeaders name the started run's session and invocation.
func runHeaders(c *gin.Context, run *host.Run) {
	c.Header(openai.HeaderSession, run.Key.ID)
	c.Header("X-AgentEngine-Invocation-Id", run.InvocationID)
}

// streamEnded logs a stream that ended before its run for another reason than the
// client going away.
func (s *Surface) streamEnded(run *host.Run, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("RunAgent stream ended early", "session", run.Key.ID, "invocation", run.InvocationID, "error", err)
	}
}

func runFailureCode(status int) string {
	if status == http.StatusConflict {
		return CodeConflict
	}
	return CodeInternal
}

// runTurn validates a RunAgent request and maps it to a turn. It stores nothing.
func (s *Surface) runTurn(ctx context.Context, c *gin.Context, req *runAgentRequest) (host.TurnRequest, string, *actionError) {
	t := host.TurnRequest{Surface: "actions"}
	format := req.APIFormat
	switch format {
	case "":
		format = formatResponses
	case formatResponses, formatChat:
	default:
		return t, "", invalid("ApiFormat must be %s or %s, not %q", formatResponses, formatChat, req.APIFormat)
	}
	if req.Stream && req.Background {
		return t, "", invalid("Stream and Background cannot both be true: a background run is followed with SubscribeRunEvents")
	}
	if e := firstError(checkID("SessionId", req.SessionID), checkID("InvocationId", req.InvocationID),
		checkID("PreviousResponseId", req.PreviousResponseID)); e != nil {
		return t, "", e
	}
	field, input, e := inputOf(req, format)
	if e != nil {
		return t, "", e
	}
	app, user, e := s.sessionOwner(c, req.scoped, req.SessionID)
	if e != nil {
		return t, "", e
	}
	// A Model that names a hosted agent picks that agent (it is no model override).
	routed, toAgent := s.routedAgent(req.Model)
	if toAgent {
		req.Model = ""
	}
	if e := req.apply(&t); e != nil {
		return t, "", e
	}
	if req.SessionID != "" {
		// The session's own agent, if AgentId names another (see ownKey).
		app = s.ownKey(ctx, session.Key{App: app, User: user, ID: req.SessionID}).App
	}
	if toAgent && routed != app {
		if req.SessionID != "" {
			if e := s.rehome(ctx, session.Key{App: app, User: user, ID: req.SessionID}, routed); e != nil {
				return t, "", e
			}
		}
		app = routed
	}
	t.App, t.User, t.SessionID, t.InvocationID = app, user, req.SessionID, req.InvocationID
	if e := s.continued(ctx, &t, req.PreviousResponseID); e != nil {
		return t, "", e
	}
	if t.Input, e = s.turnInput(ctx, t, field, input); e != nil {
		return t, "", e
	}
	if len(t.Input.Resumes) > 0 && t.SessionID == "" {
		return t, "", &actionError{Status: http.StatusBadRequest, Code: CodeNoPendingApproval,
			Message: field + " answers an approval: send the SessionId (or PreviousResponseId) of the session that asked for it"}
	}
	if format == formatResponses {
		t.ResponseID = host.NewID("resp_")
		t.Meta = openai.ResponseMeta(app, t.Metadata, req.PreviousResponseID, req.Background)
	}
	return t, format, nil
}

// inputOf picks the turn's input: ResponsesInput (KsADK prefers it for the Responses
// format; it also carries approval answers) or Messages.
func inputOf(req *runAgentRequest, format string) (string, json.RawMessage, *actionError) {
	hasResp, hasMsgs := present(req.ResponsesInput), present(req.Messages)
	if hasMsgs {
		if t := bytes.TrimSpace(req.Messages); t[0] != '[' {
			return "", nil, invalid("Messages must be an array of messages")
		}
	}
	switch {
	case hasResp && (format == formatResponses || !hasMsgs):
		return "ResponsesInput", req.ResponsesInput, nil
	case hasMsgs:
		return "Messages", req.Messages, nil
	}
	return "", nil, &actionError{Status: http.StatusBadRequest, Code: CodeMissingParameter, Message: "Messages or ResponsesInput is required"}
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// continued resolves the session a turn continues: SessionId, which must exist for
// the caller, or the session of PreviousResponseId (both must then agree).
func (s *Surface) continued(ctx context.Context, t *host.TurnRequest, previous string) *actionError {
	if previous != "" {
		if e := s.previousResponse(ctx, t, previous); e != nil {
			return e
		}
	}
	if t.SessionID != "" {
		key := session.Key{App: t.App, User: t.User, ID: t.SessionID}
		if _, e := s.existing(ctx, "RunAgent", key); e != nil {
			if e.Status == http.StatusNotFound {
				e.Message += "; create it with CreateSession, or omit SessionId to start a new one"
			}
			return e
		}
	}
	// A client-chosen InvocationId already used in the session is refused by host.Start
	// (409); runs are indexed per session, so ids of other sessions cannot collide.
	return nil
}

// previousResponse continues t from PreviousResponseId. With a SessionId the session is
// the conversation, and an id that names no response of the caller is passed over, as
// KsADK does (it keeps PreviousResponseId as metadata only): ksadk-web answers an
// approval it rebuilt after a reload with the tool block's ToolCallId there.
func (s *Surface) previousResponse(ctx context.Context, t *host.TurnRequest, previous string) *actionError {
	rec, err := s.rt.RunByResponseID(ctx, t.User, previous)
	if err != nil {
		e := s.fromHost("RunAgent", err)
		if e.Status == http.StatusNotFound {
			if t.SessionID != "" {
				return nil
			}
			e.Message = "PreviousResponseId " + previous + " not found"
		}
		return e
	}
	if rec.Key.App != t.App {
		return invalid("PreviousResponseId %q belongs to agent %q, not %q", previous, rec.Key.App, t.App)
	}
	if t.SessionID != "" && t.SessionID != rec.Key.ID {
		return invalid("PreviousResponseId %q belongs to session %q, not SessionId %q", previous, rec.Key.ID, t.SessionID)
	}
	t.SessionID = rec.Key.ID
	return nil
}

func (s *Surface) turnInput(ctx context.Context, t host.TurnRequest, field string, raw json.RawMessage) (host.Input, *actionError) {
	in, err := openai.TurnInput(ctx, s.rt, s.log, session.Key{App: t.App, User: t.User, ID: t.SessionID}, field, raw)
	var re *openai.RequestError
	if errors.As(err, &re) {
		code := CodeInvalidParameter
		switch {
		case re.Status == http.StatusNotFound:
			code = CodeNotFound
		case re.Status >= 500:
			code = CodeInternal
		}
		return in, &actionError{Status: re.Status, Code: code, Message: re.Message}
	}
	if err != nil {
		return in, s.fromHost("RunAgent", err)
	}
	return in, nil
}

// metadataOf reads Metadata: any JSON object; values that are not strings are passed
// to the runner as their JSON text.
func metadataOf(raw json.RawMessage) (map[string]string, *actionError) {
	obj, e := jsonObject("Metadata", raw)
	if e != nil || obj == nil {
		return nil, e
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, invalid("Metadata must be an object")
	}
	if len(m) > maxMetadataPairs {
		return nil, invalid("Metadata has %d keys; at most %d are allowed", len(m), maxMetadataPairs)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if utf8.RuneCountInString(k) > maxMetadataKeyLen {
			return nil, invalid("Metadata keys are at most %d characters", maxMetadataKeyLen)
		}
		val := string(v)
		var str string
		if json.Unmarshal(v, &str) == nil {
			val = str
		}
		if utf8.RuneCountInString(val) > maxMetadataValueLen {
			return nil, invalid("Metadata.%s is longer than %d characters", k, maxMetadataValueLen)
		}
		out[k] = val
	}
	return out, nil
}

// modelMetadata reads ModelMetadata and folds Model in as its "id" (KsADK passed the
// selected model that way), unless ModelMetadata names one.
func modelMetadata(raw json.RawMessage, model string) (json.RawMessage, *actionError) {
	obj, e := jsonObject("ModelMetadata", raw)
	if e != nil || model == "" {
		return obj, e
	}
	m := map[string]json.RawMessage{}
	if obj != nil {
		if err := json.Unmarshal(obj, &m); err != nil {
			return nil, invalid("ModelMetadata must be an object")
		}
	}
	if _, ok := m["id"]; !ok {
		m["id"] = session.MustJSON(model)
	}
	return session.MustJSON(m), nil
}
