package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/api/sse"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// createResponse serves POST /v1/responses.
func (h *Handler) createResponse(c *gin.Context, req *responsesRequest, user string) *apiError {
	ctx := c.Request.Context()
	turn, echo, aerr := h.responsesTurn(ctx, req, user)
	if aerr != nil {
		return aerr
	}
	ksadk, aerr := h.ksadkShapes(c, turn.App)
	if aerr != nil {
		return aerr
	}
	respID := host.NewID("resp_")
	if req.Store {
		// Without a response id on the run record, a store=false response can be
		// neither retrieved nor chained, as with OpenAI; its session still records it.
		turn.ResponseID = respID
	}
	// The client learns the run's ids from the finished answer only.
	turn.Unannounced = !req.Stream && !req.Background
	run, err := h.rt.Start(ctx, turn)
	if err != nil {
		return fromHostError(h.log, "start response", err)
	}
	base := baseResponse(runIdentity{ResponseID: respID, CreatedAt: run.CreatedAt, SessionID: run.Key.ID}, echo)
	opts := h.encodeOptions(ctx, run, echo, ksadk)
	opts.ToolResults = req.KsadkEvents || extension(c, "tool_result")
	switch {
	case req.Stream:
		h.streamEnded(run, streamResponse(c, run, newStreamEncoder(base, opts), -1, h.keepAlive))
	case req.Background:
		writeSnapshot(c, run, base, opts)
	default:
		evs, err := run.Wait(ctx)
		if err != nil {
			return nil // the client went away; the run goes on
		}
		opts.ToolResults = false
		enc := newResponseEncoder(base, opts, false)
		for _, ev := range evs {
			enc.Add(ev)
		}
		writeResponse(c, enc)
	}
	return nil
}

// writeResponse answers with enc's Response, its long texts written in place.
func writeResponse(c *gin.Context, enc *responseEncoder) {
	spill := httpx.NewSpill()
	httpx.WriteJSONSpilled(c, http.StatusOK, enc.SpilledResponse(spill), spill)
}

// responsesTurn maps a request to a turn: agent, session, input and the echo.
func (h *Handler) responsesTurn(ctx context.Context, req *responsesRequest, user string) (host.TurnRequest, requestEcho, *apiError) {
	t := host.TurnRequest{Surface: "responses", User: user, Metadata: req.Metadata, ModelMetadata: req.ModelMetadata, ModelOptions: req.ModelOptions}
	if req.Instructions != nil {
		t.Instructions = *req.Instructions
	}
	model := req.Model
	if req.PreviousResponseID != "" {
		// Continue the session of that response (KsADK started a new one instead).
		prev, err := h.rt.RunByResponseID(ctx, user, req.PreviousResponseID)
		if err != nil {
			aerr := fromHostError(h.log, "previous response", err)
			if aerr.Status == http.StatusNotFound {
				aerr.Param = "previous_response_id"
			}
			return t, requestEcho{}, aerr
		}
		if model == "" {
			model = prev.Key.App
		}
		t.SessionID = prev.Key.ID
		if agent, _, err := h.rt.ResolveModel(model); err == nil && agent.Name != prev.Key.App {
			return t, requestEcho{}, badRequest("previous_response_id", "", "previous response %q belongs to model %q, not %q", req.PreviousResponseID, prev.Key.App, agent.Name)
		}
	}
	var conv *session.Session
	if req.Conversation != "" && len(h.rt.Agents()) > 1 {
		// A conversation of the Conversations API belongs to the agent it was created
		// with; one the client names first here is created with this turn. (With one
		// agent there is nothing to choose: no store read.)
		if s, aerr := h.findConversation(ctx, user, req.Conversation); aerr == nil {
			conv = &s
			if model == "" {
				model = s.App
			}
		} else if aerr.Status != http.StatusNotFound {
			return t, requestEcho{}, aerr
		}
	}
	agent, override, err := h.rt.ResolveModel(model)
	if err != nil {
		return t, requestEcho{}, fromHostError(h.log, "resolve agent", err)
	}
	if conv != nil && conv.App != agent.Name {
		return t, requestEcho{}, badRequest("conversation", "", "conversation %q belongs to model %q, not %q", req.Conversation, conv.App, agent.Name)
	}
	t.App, t.Model = agent.Name, override
	if req.SessionID != "" {
		t.SessionID, t.CreateIfMissing = req.SessionID, true
	}
	// A stateless client (the Agents SDKs by default) answers an approval by resending
	// the conversation with an mcp_approval_response and naming no session: the
	// approval request names it, and the resent items are history the session has.
	replayed := false
	if t.SessionID == "" {
		for _, it := range req.Input {
			if it.Kind != itemMCPApprovalResponse {
				continue
			}
			ev, err := h.rt.FindItem(ctx, t.App, user, it.ApprovalID)
			if err == nil && ev.Type == session.TypeApprovalRequest {
				t.SessionID, replayed = ev.SessionID, true
				break
			}
		}
	}
	in, slots, aerr := assembleInput(ctx, h.rt, h.log, session.Key{App: t.App, User: user, ID: t.SessionID}, req.Input)
	if aerr != nil {
		return t, requestEcho{}, aerr
	}
	if replayed {
		in.Content, in.Items = nil, nil
		kept := slots[:0]
		for _, s := range slots {
			if s.Src == "resume" {
				kept = append(kept, s)
			}
		}
		slots = kept
	}
	t.Input = in
	echo := echoOf(req, agent.Name)
	echo.Input = slots
	t.Meta = session.MustJSON(echo)
	return t, echo, nil
}

// assembleInput splits the items into the input of a turn of the session key (key.ID
// "" for a new one). The last user message is the current content;
// mcp_approval_response items, and the function_call_output items the host sorts into
// resumes (host.Runtime.SortToolOutputs), resume it; item references are resolved to
// the stored items; everything else is passed to the runner as an item, in order.
func assembleInput(ctx context.Context, rt *host.Runtime, log hclog.Logger, key session.Key, items []inputItem) (host.Input, []inputSlot, *apiError) {
	var in host.Input
	var outs []host.ToolOutput
	for _, it := range items {
		if it.Kind == itemFunctionCallOutput {
			outs = append(outs, host.ToolOutput{ID: it.CallID, Output: it.Output, Approve: it.Approve, Reason: it.Reason, Raw: it.Raw})
		}
	}
	sorted, err := rt.SortToolOutputs(ctx, key, outs)
	if err != nil {
		return in, nil, fromHostError(log, "sort tool outputs", err)
	}
	resumes, out := sorted.Resumes, 0
	slots := make([]inputSlot, 0, len(items))
	last := -1
	for i, it := range items {
		if it.Kind == itemMessage && it.Role == roleUser {
			last = i
		}
	}
	for i, it := range items {
		switch {
		case i == last:
			in.Content, in.MessageID = it.Blocks, idOr(it.ID, "msg_")
			slots = append(slots, inputSlot{ID: in.MessageID, Src: "message"})
		case it.Kind == itemMCPApprovalResponse:
			in.Resumes = append(in.Resumes, host.Resume{ApprovalRequestID: it.ApprovalID, Approve: it.Approve, Reason: it.Reason, Raw: it.Raw})
			slots = append(slots, inputSlot{ID: idOr(it.ID, "mcpr_"), Src: "resume", Item: it.Raw})
		case it.Kind == itemFunctionCallOutput && sorted.Resumed[out]:
			out++
			in.Resumes, resumes = append(in.Resumes, resumes[0]), resumes[1:]
			slots = append(slots, inputSlot{ID: idOr(it.ID, "fco_"), Src: "resume", Item: it.Raw})
		case it.Kind == itemReference:
			ev, err := rt.FindItem(ctx, key.App, key.User, it.RefID)
			if err != nil {
				aerr := fromHostError(log, "item reference", err)
				if aerr.Status == http.StatusNotFound {
					aerr.Param = "input"
				}
				return in, nil, aerr
			}
			raw, ok := itemOfEvent(ev)
			if !ok {
				return in, nil, badRequest("input", "", "item %q cannot be referenced as input", it.RefID)
			}
			in.Items = append(in.Items, raw)
			slots = append(slots, inputSlot{ID: it.RefID, Src: "item"})
		default:
			if it.Kind == itemFunctionCallOutput {
				out++ // history, not a resume
			}
			in.Items = append(in.Items, it.Item())
			slots = append(slots, inputSlot{ID: idOr(it.ID, itemPrefix(it.Kind)), Src: "item"})
		}
	}
	return in, slots, nil
}

func idOr(id, prefix string) string {
	if id != "" {
		return id
	}
	return host.NewID(prefix)
}

func itemPrefix(kind string) string {
	switch kind {
	case itemMessage:
		return "msg_"
	case itemFunctionCall:
		return "fc_"
	case itemFunctionCallOutput:
		return "fco_"
	case itemReasoning:
		return "rs_"
	case itemMCPApprovalRequest:
		return "mcpr_"
	}
	return "item_"
}

// encodeOptions are the shapes a run of this surface is encoded in: the KsADK switch,
// the client's declared function tools (from the request echo), and the approvals a
// resume run answered, looked up in the run's session.
func (h *Handler) encodeOptions(ctx context.Context, run *host.Run, echo requestEcho, ksadk bool) encodeOptions {
	opts := encodeOptions{Ksadk: ksadk, ClientTools: clientTools(echo.Tools)}
	if ksadk {
		return opts
	}
	key := run.Key
	opts.Approval = func(id string) (session.ApprovalRequestData, bool) {
		var d session.ApprovalRequestData
		ev, err := h.rt.FindItem(context.WithoutCancel(ctx), key.App, key.User, id)
		if err != nil || ev.Type != session.TypeApprovalRequest || ev.SessionID != key.ID {
			return d, false
		}
		return d, json.Unmarshal(ev.Data, &d) == nil
	}
	return opts
}

// clientTools returns the names of the function tools in a request's tools.
func clientTools(tools json.RawMessage) map[string]bool {
	var list []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(tools, &list) != nil {
		return nil
	}
	out := map[string]bool{}
	for _, t := range list {
		if t.Type != "function" {
			continue
		}
		if t.Name != "" {
			out[t.Name] = true
		}
		if t.Function.Name != "" {
			out[t.Function.Name] = true
		}
	}
	return out
}

// streamEncoder is the stream shape of a run: OpenAI's events (KsADK's item
// semantics included when opts.Ksadk is set by the action API) or, with the KsADK
// switch on this surface, KsADK's own stream.
type streamEncoder interface {
	Start() []sseEvent
	Add(host.Event) []sseEvent
}

func newStreamEncoder(base Response, opts encodeOptions) streamEncoder {
	if opts.Ksadk {
		return newKsadkEncoder(base)
	}
	return newResponseEncoder(base, opts, true)
}

// streamResponse writes the run as a Responses event stream, skipping events with
// sequence numbers up to startingAfter (replays). It returns why the stream ended
// before the run (context.Canceled: the client went away).
func streamResponse(c *gin.Context, run *host.Run, enc streamEncoder, startingAfter int, keepAlive time.Duration) error {
	s := sse.Start(c)
	write := func(evs []sseEvent) error {
		for _, ev := range evs {
			if ev.Seq <= startingAfter {
				continue
			}
			var err error
			if ev.Spill != nil {
				err = s.EventFrom("", ev.Name, func(w io.Writer) error { return ev.Spill.Fill(w, ev.Data) })
			} else {
				err = s.Event("", ev.Name, ev.Data)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(enc.Start()); err != nil {
		return err
	}
	return sse.Follow(c.Request.Context(), run.Subscribe(0), s, keepAlive, "ping", func(ev host.Event) error {
		return write(enc.Add(ev))
	})
}

// streamEnded logs a stream that ended before its run for another reason than the
// client going away.
func (h *Handler) streamEnded(run *host.Run, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		h.log.Debug("stream ended early", "session", run.Key.ID, "invocation", run.InvocationID, "error", err)
	}
}

// writeSnapshot answers with the Response of a run as of now, without waiting.
func writeSnapshot(c *gin.Context, run *host.Run, base Response, opts encodeOptions) {
	opts.ToolResults = false
	enc := newResponseEncoder(base, opts, false)
	for _, ev := range run.Subscribe(0).Ready() {
		enc.Add(ev)
	}
	writeResponse(c, enc)
}

// openResponse finds a stored response of the user and opens its run.
func (h *Handler) openResponse(c *gin.Context) (*host.Run, Response, *apiError) {
	user, aerr := h.user(c)
	if aerr != nil {
		return nil, Response{}, aerr
	}
	ctx := c.Request.Context()
	id := c.Param("id")
	rec, err := h.rt.RunByResponseID(ctx, user, id)
	if err != nil {
		return nil, Response{}, fromHostError(h.log, "find response", err)
	}
	run, err := h.rt.Open(ctx, rec.Key, rec.InvocationID)
	if err != nil {
		return nil, Response{}, fromHostError(h.log, "open response", err)
	}
	echo := parseEcho(run.Meta, run.Agent)
	base := baseResponse(runIdentity{ResponseID: id, CreatedAt: run.CreatedAt, SessionID: run.Key.ID}, echo)
	return run, base, nil
}

// storedOptions are the encode options of a stored response, read now: the KsADK
// switch of this request (header or project) and the original request's tools.
func (h *Handler) storedOptions(c *gin.Context, run *host.Run) (encodeOptions, *apiError) {
	ksadk, aerr := h.ksadkShapes(c, run.Agent)
	if aerr != nil {
		return encodeOptions{}, aerr
	}
	return h.encodeOptions(c.Request.Context(), run, parseEcho(run.Meta, run.Agent), ksadk), nil
}

// getResponse serves GET /v1/responses/{id}, and with stream=true replays the stream
// after starting_after, following the run live if it is still going. The options come
// from the query (openai-python, openai-node) or from a JSON body (openai-go sends
// {"stream":true} with its GET).
func (h *Handler) getResponse(c *gin.Context) *apiError {
	stream, after, aerr := h.replayOptions(c)
	if aerr != nil {
		return aerr
	}
	run, base, aerr := h.openResponse(c)
	if aerr != nil {
		return aerr
	}
	opts, aerr := h.storedOptions(c, run)
	if aerr != nil {
		return aerr
	}
	if stream {
		// Extension events change sequence numbers, so replays honour only the header
		// (the original request's ksadk_events is not stored).
		opts.ToolResults = extension(c, "tool_result")
		h.streamEnded(run, streamResponse(c, run, newStreamEncoder(base, opts), after, h.keepAlive))
		return nil
	}
	writeSnapshot(c, run, base, opts)
	return nil
}

func (h *Handler) replayOptions(c *gin.Context) (stream bool, after int, aerr *apiError) {
	after = -1
	if c.Request.ContentLength != 0 && c.Request.Body != nil && c.Request.Body != http.NoBody {
		body, aerr := h.readJSON(c)
		if aerr != nil {
			return false, 0, aerr
		}
		if len(bytes.TrimSpace(body)) > 0 {
			f, aerr := decodeObject(body, "", "the request body")
			if aerr != nil {
				return false, 0, aerr
			}
			if stream, _, aerr = f.boolean("stream"); aerr != nil {
				return false, 0, aerr
			}
			n, aerr := f.integer("starting_after")
			if aerr != nil {
				return false, 0, aerr
			}
			if n != nil {
				after = int(*n)
			}
		}
	}
	if v := c.Query("stream"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, 0, badRequest("stream", "invalid_type", "stream must be true or false")
		}
		stream = b
	}
	if v := c.Query("starting_after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			return false, 0, badRequest("starting_after", "invalid_type", "starting_after must be a sequence number")
		}
		after = n
	}
	return stream, after, nil
}

// deleteResponse serves DELETE /v1/responses/{id}. The session keeps its events; the
// response just cannot be retrieved or chained any more.
func (h *Handler) deleteResponse(c *gin.Context) *apiError {
	user, aerr := h.user(c)
	if aerr != nil {
		return aerr
	}
	id := c.Param("id")
	if err := h.rt.DeleteResponse(c.Request.Context(), user, id); err != nil {
		return fromHostError(h.log, "delete response", err)
	}
	httpx.WriteJSON(c, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{id, "response", true})
	return nil
}

// cancelResponse serves POST /v1/responses/{id}/cancel. OpenAI only cancels background
// responses; this server cancels any run in progress (a foreground stream's client may
// be gone while the run goes on). Cancelling a finished response returns it unchanged,
// so the call is idempotent.
func (h *Handler) cancelResponse(c *gin.Context) *apiError {
	run, base, aerr := h.openResponse(c)
	if aerr != nil {
		return aerr
	}
	ctx := c.Request.Context()
	err := h.rt.Cancel(ctx, run.Key, run.InvocationID)
	if err != nil && !errors.Is(err, host.ErrRunNotActive) {
		return fromHostError(h.log, "cancel response", err)
	}
	wait, stop := context.WithTimeout(ctx, h.cancelWait)
	defer stop()
	select {
	case <-run.Done():
	case <-wait.Done():
	}
	opts, aerr := h.storedOptions(c, run)
	if aerr != nil {
		return aerr
	}
	writeSnapshot(c, run, base, opts)
	return nil
}
