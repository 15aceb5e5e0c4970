package adkweb

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/api/sse"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// runSSE serves POST /run_sse: the run's events as "data: <Event JSON>" lines.
func (h *Handler) runSSE(c *gin.Context) *httpError {
	run, req, aerr := h.startRun(c)
	if aerr != nil {
		return aerr
	}
	s := sse.Start(c)
	enc := newEncoder(run.Agent, run.InvocationID, encodeOptions{Streaming: req.Streaming})
	write := func(evs []Event) error {
		var split []Event
		for _, ev := range evs {
			split = append(split, splitArtifactEvent(ev)...)
		}
		for _, out := range split {
			b, err := marshal(out)
			if err != nil {
				// ADK reports a broken stream in-band the same way.
				h.log.Error("encode ADK event", "invocation", run.InvocationID, "error", err)
				_ = s.Event("", "", []byte(`{"error":"internal error"}`))
				return err
			}
			if err := s.Event("", "", b); err != nil {
				return err
			}
		}
		return nil
	}
	err := sse.Follow(c.Request.Context(), run.Subscribe(0), s, h.keepAlive, "ping", func(ev host.Event) error {
		return write(enc.Add(ev))
	})
	if err == nil {
		if err = write(enc.Flush()); err == nil {
			err = s.Flush()
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		h.log.Debug("run_sse stream ended early", "invocation", run.InvocationID, "error", err)
	}
	return nil
}

// run serves POST /run: every event of the run as one JSON array, when it has ended.
func (h *Handler) run(c *gin.Context) *httpError {
	run, _, aerr := h.startRun(c)
	if aerr != nil {
		return aerr
	}
	evs, err := run.Wait(c.Request.Context())
	if err != nil {
		return nil // the client went away; the run goes on
	}
	enc := newEncoder(run.Agent, run.InvocationID, encodeOptions{})
	out := []Event{}
	for _, ev := range evs {
		out = append(out, enc.Add(ev)...)
	}
	out = append(out, enc.Flush()...)
	httpx.WriteJSON(c, http.StatusOK, out)
	return nil
}

// startRun validates a run request and starts its turn. Everything that can reject
// the request is checked before anything is stored.
func (h *Handler) startRun(c *gin.Context) (*host.Run, *runRequest, *httpError) {
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return nil, nil, aerr
	}
	req, aerr := parseRunRequest(body)
	if aerr != nil {
		return nil, nil, aerr
	}
	if !callerIs(c, req.UserID) {
		return nil, nil, sessionNotFound(req.SessionID)
	}
	if aerr := appStateWrite(c, req.StateDelta); aerr != nil {
		return nil, nil, aerr
	}
	ctx := c.Request.Context()
	turn, aerr := h.prepareTurn(ctx, req)
	if aerr != nil {
		return nil, nil, aerr
	}
	run, err := h.rt.Start(ctx, turn)
	if err != nil {
		aerr := fromHostError(h.log, "start run", err)
		var ce *host.ClientError
		if errors.Is(err, host.ErrNotFound) && !(errors.As(err, &ce) && ce.Param == "input") {
			aerr = sessionNotFound(req.SessionID) // deleted meanwhile
		}
		// Else something the input names (an upload) was not found: the host's message
		// says which.
		return nil, nil, aerr
	}
	return run, req, nil
}

// prepareTurn resolves the app and the caller's session (ADK requires it to exist),
// maps the message to the turn's input and passes the request's state delta on.
//
// The state delta travels in host.TurnRequest.StateDelta: the host applies it atomically
// with the turn's opening events, so the runner sees it and a rejected turn leaves no trace.
func (h *Handler) prepareTurn(ctx context.Context, req *runRequest) (host.TurnRequest, *httpError) {
	agent, err := h.rt.ResolveAgent(req.AppName)
	if err != nil {
		return host.TurnRequest{}, appNotFound(req.AppName)
	}
	key := session.Key{App: agent.Name, User: req.UserID, ID: req.SessionID}
	if host.ValidateID(key.User) != nil || host.ValidateID(key.ID) != nil {
		return host.TurnRequest{}, sessionNotFound(req.SessionID)
	}
	sess, err := h.rt.Session(ctx, key)
	if errors.Is(err, host.ErrNotFound) {
		return host.TurnRequest{}, sessionNotFound(req.SessionID)
	}
	if err != nil {
		return host.TurnRequest{}, fromHostError(h.log, "load session", err)
	}
	if sess.ActiveRunStatus == session.StatusInProgress {
		return host.TurnRequest{}, detail(http.StatusConflict, "Session %s already has a run in progress; wait for it to end", req.SessionID)
	}
	in, responses, aerr := turnParts(req.Parts)
	if aerr != nil {
		return host.TurnRequest{}, aerr
	}
	outs := make([]host.ToolOutput, len(responses))
	for i, r := range responses {
		outs[i] = r.ToolOutput
	}
	sorted, err := h.rt.SortToolOutputs(ctx, key, outs)
	if err != nil {
		return host.TurnRequest{}, fromHostError(h.log, "sort tool outputs", err)
	}
	if in, aerr = withResponses(in, responses, sorted); aerr != nil {
		return host.TurnRequest{}, aerr
	}
	turn := host.TurnRequest{Surface: "adk", App: agent.Name, User: key.User, SessionID: key.ID, InvocationID: host.NewID("run_"),
		Input: in, Meta: mustJSON(map[string]any{"surface": "adk-web", "streaming": req.Streaming})}
	if len(req.StateDelta) > 2 { // not {}
		turn.StateDelta = req.StateDelta
	}
	return turn, nil
}
