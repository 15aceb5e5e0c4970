package langgraph

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// runView is LangGraph's Run.
type runView struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	CreatedAt         string         `json:"created_at"`
	UpdatedAt         string         `json:"updated_at"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	Kwargs            map[string]any `json:"kwargs"`
}

// runMeta is what the surface stores with a run (host.TurnRequest.Meta).
type runMeta struct {
	Surface           string         `json:"surface"`
	AssistantID       string         `json:"assistant_id"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	MultitaskStrategy string         `json:"multitask_strategy,omitempty"`
	StreamMode        []string       `json:"stream_mode,omitempty"`
	StreamSubgraphs   bool           `json:"stream_subgraphs,omitempty"`
	Stateless         bool           `json:"stateless,omitempty"`
	// Kind is runKindUpdate for a state update, empty for a run.
	Kind string `json:"kind,omitempty"`
}

// runStatus maps a host run status onto LangGraph's: a run paused on an interrupt and a
// cancelled one are both "interrupted", as in LangGraph.
func runStatus(s string) string {
	switch s {
	case session.StatusInProgress:
		return "running"
	case session.StatusCompleted:
		return "success"
	case session.StatusFailed:
		return "error"
	case session.StatusCancelled, session.StatusInterrupted:
		return "interrupted"
	}
	return "pending"
}

func viewOf(r *host.Run, updated time.Time) runView {
	var m runMeta
	_ = json.Unmarshal(r.Meta, &m)
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	ms := m.MultitaskStrategy
	if ms == "" {
		ms = "reject"
	}
	if updated.IsZero() {
		updated = r.CreatedAt
	}
	return runView{RunID: r.InvocationID, ThreadID: r.Key.ID, AssistantID: cmp.Or(m.AssistantID, r.Agent),
		CreatedAt: stamp(r.CreatedAt), UpdatedAt: stamp(updated), Status: runStatus(r.Status()), Metadata: m.Metadata,
		MultitaskStrategy: ms, Kwargs: map[string]any{"stream_mode": m.StreamMode}}
}

// started is a run this surface started, with what the request asked of its stream.
type started struct {
	run       *host.Run
	req       *runCreate
	modes     []string
	stateless bool
}

// start validates a run request and starts its turn on thread tid ("" for a stateless
// run, on a thread of its own). Everything that can reject the request is checked before
// anything is stored.
func (h *Handler) start(c *gin.Context, tid string) (*started, *apiError) {
	var req runCreate
	if e := h.bind(c, &req); e != nil {
		return nil, e
	}
	if e := req.validate(); e != nil {
		return nil, e
	}
	modes, _ := req.modes()
	ag, ok := h.agent(req.AssistantID)
	if !ok {
		return nil, assistantNotFound(req.AssistantID)
	}
	ctx, user := c.Request.Context(), h.user(c)
	// The LangGraph bridge sends node updates (the updates stream mode) only for runs
	// that ask: this surface's, whatever mode the first client streams, so that a client
	// joining later can still have them.
	turn := host.TurnRequest{App: ag.Name, User: user, InvocationID: host.NewID("run_"),
		Metadata: map[string]string{updatesFlag: "1"}}
	meta := runMeta{Surface: "langgraph", AssistantID: ag.Name, Metadata: req.Metadata, MultitaskStrategy: req.MultitaskStrategy,
		StreamMode: modes, StreamSubgraphs: req.StreamSubgraphs, Stateless: tid == ""}
	turn.Meta = session.MustJSON(meta)
	for i, raw := range []json.RawMessage{req.InterruptBefore, req.InterruptAfter} {
		if present(raw) {
			turn.Metadata[breakpointFlags[i]] = string(raw)
		}
	}
	// The graph gets the client's config.configurable and context, as from LangGraph's server.
	if cfg, _ := req.Config["configurable"].(map[string]any); len(cfg) > 0 {
		turn.Metadata[configurableFlag] = string(session.MustJSON(cfg))
	}
	if len(req.Context) > 0 {
		turn.Metadata[contextFlag] = string(session.MustJSON(req.Context))
	}
	hasResume := req.Command != nil && present(req.Command.Resume)
	// replay is the input of a run started again from an earlier checkpoint.
	var replay *session.UserMessageData
	// A run with neither input nor command goes on from the breakpoint its thread stopped
	// at (LangGraph's invoke(None)).
	goOn := !hasResume && !present(req.Input)
	if tid == "" {
		if hasResume {
			return nil, invalid("a stateless run has no interrupt to resume")
		}
		if goOn {
			return nil, invalid("input or command.resume is required")
		}
		if at, _ := req.fromCheckpoint(); at != "" {
			return nil, invalid("a stateless run has no checkpoint %s to start from", at)
		}
	} else {
		unlock := h.busy.lock(user + "\x00" + tid)
		defer unlock()
		s, e := h.findThread(ctx, user, tid)
		switch {
		case e != nil && e.Status == http.StatusNotFound && req.IfNotExists == "create":
			if goOn {
				return nil, invalid("input or command.resume is required")
			}
			if hasResume {
				return nil, threadNotFound(tid)
			}
			turn.SessionID, turn.CreateIfMissing = tid, true
		case e != nil:
			return nil, e
		default:
			if s.App != ag.Name {
				return nil, detail(http.StatusConflict, "thread %s belongs to assistant %s; this server runs a thread with the assistant that created it", tid, s.App)
			}
			turn.SessionID = s.ID
			if e := h.atHead(ctx, s, &req); e != nil {
				return nil, e
			}
			if s.ActiveRunStatus == session.StatusInProgress {
				if e := h.multitask(ctx, s, req.MultitaskStrategy); e != nil {
					return nil, e
				}
			}
			if at, _ := req.fromCheckpoint(); at != "" {
				// Checked before the fork changes the thread.
				if hasResume {
					return nil, invalid("command.resume answers the thread's latest checkpoint; a run from an earlier one takes input")
				}
				st, e := h.snapshot(ctx, s)
				if e != nil {
					return nil, e
				}
				if goOn {
					if replay, e = h.replayed(ctx, s.Key, st, at); e != nil {
						return nil, e
					}
				} else if _, _, e := turnInput(req.Input); e != nil {
					return nil, e
				}
				if e := h.fork(ctx, s.Key, st, at); e != nil {
					return nil, e
				}
				goOn = goOn && replay == nil
			}
			if goOn {
				st, e := h.snapshot(ctx, s)
				if e != nil {
					return nil, e
				}
				if st.status != "interrupted" || len(st.current.Interrupts) > 0 {
					return nil, invalid("input or command.resume is required (a run without either goes on from a breakpoint, and thread %s is not stopped at one)", tid)
				}
				req.Command = &command{Resume: json.RawMessage("true")}
				hasResume = true
			}
			if hasResume {
				rs, e := h.resumes(ctx, s.Key, req.Command)
				if e != nil {
					return nil, e
				}
				turn.Input.Resumes = rs
			}
		}
	}
	switch {
	case replay != nil:
		turn.Input.Content = replay.Content
		if len(turn.Input.Content) == 0 {
			turn.Input.Content = textBlocks(replay.Text)
		}
		for _, k := range []string{messageIDKey, inputFlag} {
			if v := replay.Metadata[k]; v != "" {
				turn.Metadata[k] = v
			}
		}
	case !hasResume:
		blocks, id, e := turnInput(req.Input)
		if e != nil {
			return nil, e
		}
		turn.Input.Content = blocks
		if id != "" && host.ValidateID(id) == nil {
			turn.Metadata[messageIDKey] = id
		}
		if extra := inputChannels(req.Input); extra != "" {
			turn.Metadata[inputFlag] = extra
		}
	}
	if fw := forwarded(modes); fw != "" {
		turn.Metadata[modesFlag] = fw
	}
	run, err := h.rt.Start(ctx, turn)
	if err != nil {
		if errors.Is(err, host.ErrRunActive) {
			return nil, busyThread()
		}
		return nil, fromHost(h.log, "start run", err)
	}
	st := &started{run: run, req: &req, modes: modes, stateless: tid == ""}
	if st.stateless && req.OnCompletion != "keep" {
		h.deleteWhenDone(run)
	}
	return st, nil
}

// atHead forgets a run request's checkpoint when it names the thread's latest state:
// clients such as useStream send the head they last read with every run (a resume too),
// and a run continues from there anyway; an earlier checkpoint forks the thread.
func (h *Handler) atHead(ctx context.Context, s session.Session, req *runCreate) *apiError {
	cp, e := req.fromCheckpoint()
	if e != nil || cp == "" {
		return e
	}
	snap, e := h.snapshot(ctx, s)
	if e != nil {
		return e
	}
	if head := snap.current.Checkpoint.CheckpointID; head != nil && *head == cp {
		req.CheckpointID, req.Checkpoint = "", nil
	}
	return nil
}

func busyThread() *apiError {
	return detail(http.StatusConflict, "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.")
}

// multitask handles a run request for a thread that has a run in progress: reject it,
// or cancel the run (interrupt) or wait for its end (enqueue) first. The host runs one
// run per thread at a time; enqueue waits in the request for its turn.
func (h *Handler) multitask(ctx context.Context, s session.Session, strategy string) *apiError {
	if strategy == "" || strategy == "reject" {
		return busyThread()
	}
	r, err := h.rt.Open(ctx, s.Key, s.ActiveInvocationID)
	if err != nil {
		return fromHost(h.log, "open run", err)
	}
	if strategy == "interrupt" || strategy == "rollback" {
		if err := h.rt.Cancel(ctx, s.Key, s.ActiveInvocationID); err != nil && !errors.Is(err, host.ErrRunNotActive) {
			return fromHost(h.log, "cancel run", err)
		}
	}
	select {
	case <-r.Done():
	case <-ctx.Done():
		return fromHost(h.log, "wait for run", ctx.Err())
	}
	if strategy == "rollback" {
		return h.rollback(ctx, s.Key, s.ActiveInvocationID)
	}
	return nil
}

// deleteWhenDone deletes a stateless run's thread once the run has ended.
func (h *Handler) deleteWhenDone(r *host.Run) {
	go func() {
		<-r.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.rt.DeleteSession(ctx, r.Key); err != nil && !errors.Is(err, host.ErrNotFound) {
			h.log.Warn("could not delete a stateless run's thread", "thread", r.Key.ID, "error", err)
		}
	}()
}

func runLocation(r *host.Run) string {
	return "/threads/" + r.Key.ID + "/runs/" + r.InvocationID
}

// createRun serves POST /threads/{id}/runs: the run goes on in the background.
func (h *Handler) createRun(c *gin.Context) *apiError {
	st, e := h.start(c, c.Param("tid"))
	if e != nil {
		return e
	}
	c.Header("Content-Location", runLocation(st.run))
	httpx.WriteJSON(c, http.StatusOK, viewOf(st.run, time.Time{}))
	return nil
}

func (h *Handler) createStatelessRun(c *gin.Context) *apiError {
	st, e := h.start(c, "")
	if e != nil {
		return e
	}
	httpx.WriteJSON(c, http.StatusOK, viewOf(st.run, time.Time{}))
	return nil
}

// streamRun serves POST /threads/{id}/runs/stream.
func (h *Handler) streamRun(c *gin.Context) *apiError {
	st, e := h.start(c, c.Param("tid"))
	if e != nil {
		return e
	}
	loc := runLocation(st.run)
	c.Header("Content-Location", loc)
	c.Header("Location", loc+"/stream")
	h.stream(c, st.run, st.modes, st.req.StreamSubgraphs, -1, st.req.OnDisconnect == "cancel")
	return nil
}

func (h *Handler) streamStatelessRun(c *gin.Context) *apiError {
	st, e := h.start(c, "")
	if e != nil {
		return e
	}
	// Nobody can join a stateless run's stream (its thread goes when it ends), so it has no
	// Location.
	h.stream(c, st.run, st.modes, st.req.StreamSubgraphs, -1, st.req.OnDisconnect == "cancel")
	return nil
}

// waitRun serves POST /threads/{id}/runs/wait: the thread's values once the run ends.
func (h *Handler) waitRun(c *gin.Context) *apiError {
	st, e := h.start(c, c.Param("tid"))
	if e != nil {
		return e
	}
	c.Header("Content-Location", runLocation(st.run))
	return h.writeResult(c, st.run, false)
}

func (h *Handler) waitStatelessRun(c *gin.Context) *apiError {
	st, e := h.start(c, "")
	if e != nil {
		return e
	}
	return h.writeResult(c, st.run, true)
}

// writeResult waits for the run and writes what LangGraph's wait and join return: the
// thread's values at the run's end (with "__interrupt__": [...] when it paused), or
// {"__error__": {...}} when it failed.
func (h *Handler) writeResult(c *gin.Context, r *host.Run, stateless bool) *apiError {
	evs, err := r.Wait(c.Request.Context())
	if err != nil {
		return nil // the client went away; the run goes on
	}
	p := newProjector()
	if !stateless {
		if e := h.prior(c.Request.Context(), r, evs, p); e != nil {
			return e
		}
	}
	var approvals []*session.Event
	var failure *session.RunError
	for _, ev := range evs {
		if ev.Kind != host.KindStored {
			continue
		}
		p.add(ev.Stored)
		switch ev.Stored.Type {
		case session.TypeApprovalRequest:
			approvals = append(approvals, ev.Stored)
		case session.TypeRunStatus:
			if d, err := session.DataOf[session.RunStatusData](*ev.Stored); err == nil && d.Error != nil {
				failure = d.Error
			}
		}
	}
	if r.Status() == session.StatusFailed {
		msg, code := "the run failed", "RunError"
		if failure != nil {
			msg, code = failure.Message, failure.Code
		}
		httpx.WriteJSON(c, http.StatusOK, gin.H{"__error__": gin.H{"error": code, "message": msg}})
		return nil
	}
	if r.Status() == session.StatusInterrupted && len(approvals) > 0 {
		// LangGraph answers a paused run with the thread's values and its interrupts (one
		// stopped at a breakpoint has none: its values).
		if ints, _, _ := interruptsOf(r.InvocationID, approvals); len(ints) > 0 {
			v := p.values()
			v["__interrupt__"] = ints
			httpx.WriteJSON(c, http.StatusOK, v)
			return nil
		}
	}
	httpx.WriteJSON(c, http.StatusOK, p.values())
	return nil
}

// prior folds the thread's events from before the run into p.
func (h *Handler) prior(ctx context.Context, r *host.Run, evs []host.Event, p *projector) *apiError {
	var first int64
	for _, ev := range evs {
		if ev.Kind == host.KindStored {
			first = ev.Stored.Seq
			break
		}
	}
	if first <= 1 {
		return nil
	}
	old, err := h.rt.Events(ctx, r.Key, session.EventQuery{BeforeSeq: first})
	if errors.Is(err, host.ErrNotFound) {
		return nil // a stateless thread already deleted
	}
	if err != nil {
		return fromHost(h.log, "load thread events", err)
	}
	old, _ = visible(old)
	for i := range old {
		p.add(&old[i])
	}
	return nil
}

// threadRun opens a run of the caller's thread.
func (h *Handler) threadRun(c *gin.Context) (*host.Run, *apiError) {
	ctx := c.Request.Context()
	s, e := h.findThread(ctx, h.user(c), c.Param("tid"))
	if e != nil {
		return nil, e
	}
	rid := c.Param("rid")
	if host.ValidateID(rid) != nil {
		return nil, runNotFound(rid)
	}
	r, err := h.rt.Open(ctx, s.Key, rid)
	if errors.Is(err, host.ErrNotFound) {
		return nil, runNotFound(rid)
	}
	if err != nil {
		return nil, fromHost(h.log, "open run", err)
	}
	dels, err := h.rt.Events(ctx, s.Key, session.EventQuery{Types: []string{session.TypeItemDeleted}})
	if err != nil {
		return nil, fromHost(h.log, "load rollbacks", err)
	}
	if _, rolled := visible(dels); rolled[rid] {
		return nil, runNotFound(rid) // rolled back: removed from the thread
	}
	return r, nil
}

func (h *Handler) getRun(c *gin.Context) *apiError {
	r, e := h.threadRun(c)
	if e != nil {
		return e
	}
	httpx.WriteJSON(c, http.StatusOK, viewOf(r, time.Time{}))
	return nil
}

// joinRun serves GET /threads/{id}/runs/{run}/join: like wait, for a run started before.
func (h *Handler) joinRun(c *gin.Context) *apiError {
	r, e := h.threadRun(c)
	if e != nil {
		return e
	}
	return h.writeResult(c, r, false)
}

// joinStream serves GET /threads/{id}/runs/{run}/stream: the run's stream, from the
// event after Last-Event-ID when the client reconnects, else from its start.
func (h *Handler) joinStream(c *gin.Context) *apiError {
	r, e := h.threadRun(c)
	if e != nil {
		return e
	}
	modes := c.QueryArray("stream_mode")
	if len(modes) == 0 {
		var m runMeta
		_ = json.Unmarshal(r.Meta, &m)
		modes = m.StreamMode
	}
	modes, e = checkModes(modes)
	if e != nil {
		return e
	}
	after := -1
	if id := c.GetHeader("Last-Event-ID"); id != "" {
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 {
			return invalid("Last-Event-ID %q is not an event id of this stream", id)
		}
		after = n
	}
	cancel := c.Query("cancel_on_disconnect") == "true" || c.Query("cancel_on_disconnect") == "1"
	var m runMeta
	_ = json.Unmarshal(r.Meta, &m)
	h.stream(c, r, modes, m.StreamSubgraphs, after, cancel)
	return nil
}

// cancelRun serves POST /threads/{id}/runs/{run}/cancel?wait=0|1&action=interrupt.
func (h *Handler) cancelRun(c *gin.Context) *apiError {
	action := c.DefaultQuery("action", "interrupt")
	if action != "interrupt" && action != "rollback" {
		return invalid("action must be interrupt or rollback")
	}
	r, e := h.threadRun(c)
	if e != nil {
		return e
	}
	ctx := c.Request.Context()
	if err := h.rt.Cancel(ctx, r.Key, r.InvocationID); err != nil {
		return fromHost(h.log, "cancel run", err)
	}
	if action == "rollback" {
		// The run is removed once it has stopped (it stores what it did until then).
		select {
		case <-r.Done():
		case <-ctx.Done():
			return nil
		}
		if e := h.rollback(ctx, r.Key, r.InvocationID); e != nil {
			return e
		}
	}
	if w := c.Query("wait"); w == "1" || w == "true" {
		select {
		case <-r.Done():
		case <-ctx.Done():
			return nil
		}
	}
	c.Status(http.StatusNoContent)
	return nil
}

// listRuns serves GET /threads/{id}/runs: the thread's runs, newest first.
func (h *Handler) listRuns(c *gin.Context) *apiError {
	limit, offset := 10, 0
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return invalid("limit must be between 1 and 1000")
		}
		limit = n
	}
	if v := c.Query("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalid("offset must be a number, at least 0")
		}
		offset = n
	}
	status := c.Query("status")
	ctx := c.Request.Context()
	s, e := h.findThread(ctx, h.user(c), c.Param("tid"))
	if e != nil {
		return e
	}
	evs, err := h.rt.Events(ctx, s.Key, session.EventQuery{Types: []string{session.TypeRunStatus, session.TypeItemDeleted}})
	if err != nil {
		return fromHost(h.log, "load runs", err)
	}
	evs, _ = visible(evs)
	var ids []string
	last := map[string]time.Time{}
	for _, e := range evs {
		if _, ok := last[e.InvocationID]; !ok {
			ids = append(ids, e.InvocationID)
		}
		last[e.InvocationID] = e.Time
	}
	out := []runView{}
	for i := len(ids) - 1; i >= 0; i-- {
		r, err := h.rt.Open(ctx, s.Key, ids[i])
		if err != nil {
			continue // gone meanwhile
		}
		var m runMeta
		if json.Unmarshal(r.Meta, &m) == nil && m.Kind == runKindUpdate {
			continue // a state update is a checkpoint, not a run
		}
		v := viewOf(r, last[ids[i]])
		if status != "" && v.Status != status {
			continue
		}
		out = append(out, v)
	}
	httpx.WriteJSON(c, http.StatusOK, window(out, offset, limit))
	return nil
}
