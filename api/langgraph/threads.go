package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// metadataKey is the session-state key a thread's metadata is kept under.
const metadataKey = "langgraph_thread_metadata"

// thread is LangGraph's Thread.
type thread struct {
	ThreadID  string `json:"thread_id"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	// StateUpdatedAt is when the thread last changed: the session's last update.
	StateUpdatedAt string                 `json:"state_updated_at"`
	Metadata       map[string]any         `json:"metadata"`
	Status         string                 `json:"status"`
	Values         any                    `json:"values"`
	Interrupts     map[string][]interrupt `json:"interrupts"`
	Config         map[string]any         `json:"config"`
	Error          any                    `json:"error"`
}

// interrupt is LangGraph's Interrupt: what interrupt() was called with and its id.
type interrupt struct {
	Value any    `json:"value"`
	ID    string `json:"id"`
}

// user is the caller's user: a bound caller's own, else the default user (the LangGraph
// API names no user).
func (h *Handler) user(c *gin.Context) string {
	return caller.From(c.Request.Context()).Resolve(h.rt.DefaultUser())
}

// findThread returns the caller's session with the thread id among the assistants'
// sessions: a thread of another user does not exist for the caller.
func (h *Handler) findThread(ctx context.Context, user, id string) (session.Session, *apiError) {
	if host.ValidateID(id) != nil {
		return session.Session{}, threadNotFound(id)
	}
	for _, a := range h.agents() {
		s, err := h.rt.Session(ctx, session.Key{App: a.Name, User: user, ID: id})
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, host.ErrNotFound) {
			return s, fromHost(h.log, "load session", err)
		}
	}
	return session.Session{}, threadNotFound(id)
}

type threadCreate struct {
	ThreadID string         `json:"thread_id"`
	Metadata map[string]any `json:"metadata"`
	IfExists string         `json:"if_exists"`
}

// createThread serves POST /threads. A thread belongs to one assistant, the agent whose
// session it is: metadata.graph_id (or assistant_id) names it, else the first assistant.
func (h *Handler) createThread(c *gin.Context) *apiError {
	var req threadCreate
	if e := h.bind(c, &req); e != nil {
		return e
	}
	switch req.IfExists {
	case "", "raise", "do_nothing":
	default:
		return invalid("if_exists must be raise or do_nothing")
	}
	ctx, user := c.Request.Context(), h.user(c)
	if req.ThreadID != "" {
		if host.ValidateID(req.ThreadID) != nil {
			return invalid("invalid thread_id")
		}
		if s, e := h.findThread(ctx, user, req.ThreadID); e == nil {
			if req.IfExists != "do_nothing" {
				return detail(http.StatusConflict, "Thread already exists")
			}
			return h.writeThread(c, s)
		} else if e.Status != http.StatusNotFound {
			return e
		}
	}
	app, e := h.threadAgent(req.Metadata)
	if e != nil {
		return e
	}
	s, err := h.rt.CreateSession(ctx, session.Key{App: app, User: user, ID: req.ThreadID})
	if err != nil {
		if errors.Is(err, host.ErrInvalidInput) && req.IfExists != "do_nothing" {
			return detail(http.StatusConflict, "Thread already exists")
		}
		return fromHost(h.log, "create session", err)
	}
	if len(req.Metadata) > 0 {
		if e := h.setMetadata(ctx, s.Key, req.Metadata); e != nil {
			return e
		}
	}
	return h.writeThread(c, s)
}

// threadAgent picks the agent of a new thread.
func (h *Handler) threadAgent(meta map[string]any) (string, *apiError) {
	for _, k := range []string{"graph_id", "assistant_id"} {
		if id, ok := meta[k].(string); ok && id != "" {
			if _, ok := h.agent(id); !ok {
				return "", assistantNotFound(id)
			}
			return id, nil
		}
	}
	agents := h.agents()
	if len(agents) == 0 {
		return "", detail(http.StatusNotFound, "this server hosts no LangGraph agent")
	}
	return agents[0].Name, nil
}

func (h *Handler) setMetadata(ctx context.Context, key session.Key, meta map[string]any) *apiError {
	delta := session.MustJSON(map[string]any{metadataKey: meta})
	if _, err := h.rt.AppendEvents(ctx, key, session.NewEvent{Type: session.TypeStateDelta, Author: "user", Data: delta, StateDelta: delta}); err != nil {
		return fromHost(h.log, "store thread metadata", err)
	}
	return nil
}

func (h *Handler) writeThread(c *gin.Context, s session.Session) *apiError {
	t, e := h.threadOf(c.Request.Context(), s)
	if e != nil {
		return e
	}
	httpx.WriteJSON(c, http.StatusOK, t)
	return nil
}

// threadOf builds the Thread of a session: its metadata, status, values and interrupts.
func (h *Handler) threadOf(ctx context.Context, s session.Session) (thread, *apiError) {
	st, e := h.snapshot(ctx, s)
	if e != nil {
		return thread{}, e
	}
	t := thread{ThreadID: s.ID, CreatedAt: stamp(s.CreatedAt), UpdatedAt: stamp(s.UpdatedAt), StateUpdatedAt: stamp(s.UpdatedAt), Metadata: st.metadata,
		Status: st.status, Values: st.current.Values, Interrupts: map[string][]interrupt{}, Config: map[string]any{}}
	if len(st.current.Interrupts) > 0 {
		t.Interrupts[st.current.Tasks[0].ID] = st.current.Interrupts
	}
	if len(st.history) > 0 {
		// A thread that has run has its runs' config: none is passed to the graph here.
		t.Config["configurable"] = map[string]any{}
	}
	if len(st.history) == 0 && st.status != "busy" {
		t.Values = nil // a thread nothing has run on has no values yet, as in LangGraph
	}
	if st.runErr != nil {
		t.Error = st.runErr
	}
	return t, nil
}

// threadSnapshot is what a session's store holds, seen as a LangGraph thread.
type threadSnapshot struct {
	metadata map[string]any
	status   string
	runErr   any
	current  threadState
	// history is the state at the end of each run, newest first (current first).
	history []threadState
}

// threadState is LangGraph's ThreadState. The host keeps a graph's checkpoints for the
// runner, not its steps: a thread's checkpoints here are its runs' ends, each named by
// its run id.
type threadState struct {
	Values           any            `json:"values"`
	Next             []string       `json:"next"`
	Checkpoint       checkpointRef  `json:"checkpoint"`
	Metadata         map[string]any `json:"metadata"`
	CreatedAt        *string        `json:"created_at"`
	ParentCheckpoint *checkpointRef `json:"parent_checkpoint"`
	Tasks            []task         `json:"tasks"`
	Interrupts       []interrupt    `json:"interrupts"`
}

// MarshalJSON adds the flat checkpoint_id and parent_checkpoint_id LangGraph's server still
// sends beside checkpoint and parent_checkpoint.
func (s threadState) MarshalJSON() ([]byte, error) {
	type plain threadState
	var parent *string
	if s.ParentCheckpoint != nil {
		parent = s.ParentCheckpoint.CheckpointID
	}
	return json.Marshal(struct {
		plain
		CheckpointID       *string `json:"checkpoint_id"`
		ParentCheckpointID *string `json:"parent_checkpoint_id"`
	}{plain(s), s.Checkpoint.CheckpointID, parent})
}

type checkpointRef struct {
	ThreadID      string         `json:"thread_id"`
	CheckpointNS  string         `json:"checkpoint_ns"`
	CheckpointID  *string        `json:"checkpoint_id"`
	CheckpointMap map[string]any `json:"checkpoint_map,omitempty"`
}

type task struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Path       []string    `json:"path"`
	Error      *string     `json:"error"`
	Interrupts []interrupt `json:"interrupts"`
	Checkpoint any         `json:"checkpoint"`
	State      any         `json:"state"`
	Result     any         `json:"result"`
}

// snapshot reads a session's events and state into its thread view.
func (h *Handler) snapshot(ctx context.Context, s session.Session) (threadSnapshot, *apiError) {
	var out threadSnapshot
	stt, err := h.rt.State(ctx, s.Key)
	if err != nil {
		return out, fromHost(h.log, "load state", err)
	}
	out.metadata = map[string]any{}
	if m, ok := stt.Session[metadataKey].(map[string]any); ok {
		out.metadata = m
	}
	out.metadata["graph_id"] = s.App
	out.metadata["assistant_id"] = s.App
	evs, err := h.rt.Events(ctx, s.Key, session.EventQuery{})
	if err != nil {
		return out, fromHost(h.log, "load events", err)
	}
	p := newProjector()
	var (
		approvals []*session.Event
		parent    *checkpointRef
		step      int
	)
	for i := range evs {
		e := &evs[i]
		p.add(e)
		switch e.Type {
		case session.TypeApprovalRequest:
			approvals = append(approvals, e)
		case session.TypeRunStatus:
			if !session.IsTerminalStatus(host.RunStatusOf(e)) {
				approvals = nil
				continue
			}
			step++
			ts := threadState{Values: p.values(), Next: []string{}, Checkpoint: ref(s.ID, e.InvocationID), Tasks: []task{}, Interrupts: []interrupt{},
				Metadata:         map[string]any{"source": "loop", "step": step, "run_id": e.InvocationID, "graph_id": s.App, "assistant_id": s.App, "thread_id": s.ID},
				ParentCheckpoint: parent}
			at := stamp(e.Time)
			ts.CreatedAt = &at
			if host.RunStatusOf(e) == session.StatusInterrupted && len(approvals) > 0 {
				ts.Interrupts, ts.Next, ts.Tasks = interruptsOf(e.InvocationID, approvals)
			}
			approvals = nil
			out.runErr = nil
			if d, err := session.DataOf[session.RunStatusData](*e); err == nil && d.Error != nil {
				out.runErr = map[string]any{"error": d.Error.Code, "message": d.Error.Message}
			}
			r := ts.Checkpoint
			parent = &r
			out.history = append(out.history, ts)
		}
	}
	for i, j := 0, len(out.history)-1; i < j; i, j = i+1, j-1 {
		out.history[i], out.history[j] = out.history[j], out.history[i]
	}
	out.status = "idle"
	switch s.ActiveRunStatus {
	case session.StatusInProgress:
		out.status = "busy"
	case session.StatusInterrupted:
		if len(out.history) > 0 && len(out.history[0].Interrupts) > 0 {
			out.status = "interrupted"
		}
	case session.StatusFailed:
		out.status = "error"
	}
	if len(out.history) > 0 {
		out.current = out.history[0]
	} else {
		out.current = threadState{Values: map[string]any{}, Next: []string{}, Checkpoint: checkpointRef{ThreadID: s.ID, CheckpointMap: nil},
			Metadata: map[string]any{}, Tasks: []task{}, Interrupts: []interrupt{}}
	}
	if out.status == "busy" {
		// The run in progress has written since the last run's end.
		out.current.Values = p.values()
	}
	return out, nil
}

func ref(thread, id string) checkpointRef {
	return checkpointRef{ThreadID: thread, CheckpointNS: "", CheckpointID: &id}
}

// approvalDetail is what the LangGraph bridge puts in an approval request's detail.
type approvalDetail struct {
	InterruptID string          `json:"interrupt_id"`
	Node        string          `json:"node"`
	Value       json.RawMessage `json:"value"`
}

// interruptsOf lists a paused run's interrupts (one per interrupt id: a HITL interrupt
// asks one approval per action), the nodes to run next and their task.
func interruptsOf(runID string, approvals []*session.Event) ([]interrupt, []string, []task) {
	var (
		out   []interrupt
		nodes []string
		seen  = map[string]bool{}
	)
	for _, e := range approvals {
		d, err := session.DataOf[session.ApprovalRequestData](*e)
		if err != nil {
			continue
		}
		var det approvalDetail
		_ = json.Unmarshal(d.Detail, &det)
		id := det.InterruptID
		if id == "" {
			id = e.ItemID
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		var value any
		if len(det.Value) == 0 || json.Unmarshal(det.Value, &value) != nil {
			// Not a LangGraph interrupt (another framework's approval): what it asks.
			var args any
			_ = json.Unmarshal([]byte(d.Arguments), &args)
			value = map[string]any{"name": d.Name, "arguments": args, "message": d.Message, "call_id": d.CallID}
		}
		out = append(out, interrupt{Value: value, ID: id})
		if det.Node != "" && !contains(nodes, det.Node) {
			nodes = append(nodes, det.Node)
		}
	}
	if nodes == nil {
		nodes = []string{}
	}
	name := "__interrupt__"
	if len(nodes) > 0 {
		name = nodes[0]
	}
	return out, nodes, []task{{ID: runID, Name: name, Path: []string{"__pregel_pull", name}, Interrupts: out}}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (h *Handler) getThread(c *gin.Context) *apiError {
	s, e := h.findThread(c.Request.Context(), h.user(c), c.Param("tid"))
	if e != nil {
		return e
	}
	return h.writeThread(c, s)
}

type threadPatch struct {
	Metadata map[string]any `json:"metadata"`
}

// patchThread serves PATCH /threads/{id}: the metadata given is merged into the thread's.
func (h *Handler) patchThread(c *gin.Context) *apiError {
	var req threadPatch
	if e := h.bind(c, &req); e != nil {
		return e
	}
	ctx := c.Request.Context()
	s, e := h.findThread(ctx, h.user(c), c.Param("tid"))
	if e != nil {
		return e
	}
	if len(req.Metadata) > 0 {
		st, err := h.rt.State(ctx, s.Key)
		if err != nil {
			return fromHost(h.log, "load state", err)
		}
		meta := map[string]any{}
		if m, ok := st.Session[metadataKey].(map[string]any); ok {
			meta = m
		}
		for k, v := range req.Metadata {
			meta[k] = v
		}
		if e := h.setMetadata(ctx, s.Key, meta); e != nil {
			return e
		}
		if s, e = h.findThread(ctx, h.user(c), s.ID); e != nil {
			return e
		}
	}
	return h.writeThread(c, s)
}

// deleteThread serves DELETE /threads/{id}; a run in progress is cancelled first.
func (h *Handler) deleteThread(c *gin.Context) *apiError {
	ctx := c.Request.Context()
	s, e := h.findThread(ctx, h.user(c), c.Param("tid"))
	if e != nil {
		return e
	}
	if err := h.rt.DeleteSession(ctx, s.Key); err != nil {
		return fromHost(h.log, "delete session", err)
	}
	c.Status(http.StatusNoContent)
	return nil
}

type threadQuery struct {
	Metadata  map[string]any `json:"metadata"`
	Values    map[string]any `json:"values"`
	IDs       []string       `json:"ids"`
	Status    string         `json:"status"`
	Limit     *int           `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
}

// matchThreads lists the caller's threads that match q, sorted as asked (newest created
// first by default).
func (h *Handler) matchThreads(ctx context.Context, user string, q threadQuery) ([]thread, *apiError) {
	switch q.Status {
	case "", "idle", "busy", "interrupted", "error":
	default:
		return nil, invalid("status must be idle, busy, interrupted or error")
	}
	switch q.SortBy {
	case "", "created_at", "updated_at", "thread_id", "status":
	default:
		return nil, invalid("sort_by must be thread_id, status, created_at or updated_at")
	}
	ids := map[string]bool{}
	for _, id := range q.IDs {
		ids[id] = true
	}
	var out []thread
	for _, a := range h.agents() {
		sessions, _, err := h.rt.ListSessions(ctx, a.Name, user, session.ListQuery{Limit: maxThreadsScanned})
		if err != nil {
			return nil, fromHost(h.log, "list sessions", err)
		}
		for _, s := range sessions {
			if len(ids) > 0 && !ids[s.ID] {
				continue
			}
			t, e := h.threadOf(ctx, s)
			if e != nil {
				return nil, e
			}
			if q.Status != "" && t.Status != q.Status {
				continue
			}
			if !metadataMatches(t.Metadata, q.Metadata) {
				continue
			}
			if vals, ok := t.Values.(map[string]any); len(q.Values) > 0 && (!ok || !metadataMatches(vals, q.Values)) {
				continue
			}
			out = append(out, t)
		}
	}
	key := func(t thread) string {
		switch q.SortBy {
		case "thread_id":
			return t.ThreadID
		case "status":
			return t.Status
		case "updated_at":
			return t.UpdatedAt
		}
		return t.CreatedAt
	}
	asc := q.SortOrder == "asc"
	sort.SliceStable(out, func(i, j int) bool {
		if asc {
			return key(out[i]) < key(out[j])
		}
		return key(out[i]) > key(out[j])
	})
	return out, nil
}

// maxThreadsScanned bounds the sessions a thread search reads per assistant.
const maxThreadsScanned = 1000

func (h *Handler) searchThreads(c *gin.Context) *apiError {
	var q threadQuery
	if e := h.bind(c, &q); e != nil {
		return e
	}
	limit, e := searchLimit(q.Limit, q.Offset)
	if e != nil {
		return e
	}
	all, e := h.matchThreads(c.Request.Context(), h.user(c), q)
	if e != nil {
		return e
	}
	writePage(c, all, q.Offset, limit)
	return nil
}

func (h *Handler) countThreads(c *gin.Context) *apiError {
	var q threadQuery
	if e := h.bind(c, &q); e != nil {
		return e
	}
	all, e := h.matchThreads(c.Request.Context(), h.user(c), q)
	if e != nil {
		return e
	}
	httpx.WriteJSON(c, http.StatusOK, len(all))
	return nil
}

// pathSnapshot loads the thread the path's {tid} names, with its state.
func (h *Handler) pathSnapshot(c *gin.Context) (session.Session, threadSnapshot, *apiError) {
	ctx := c.Request.Context()
	s, e := h.findThread(ctx, h.user(c), c.Param("tid"))
	if e != nil {
		return s, threadSnapshot{}, e
	}
	st, e := h.snapshot(ctx, s)
	return s, st, e
}

// getState serves GET /threads/{id}/state: the thread's values now, with its pending
// interrupts.
func (h *Handler) getState(c *gin.Context) *apiError {
	_, st, e := h.pathSnapshot(c)
	if e != nil {
		return e
	}
	httpx.WriteJSON(c, http.StatusOK, st.current)
	return nil
}

// getStateAt serves GET /threads/{id}/state/{checkpoint_id}: the state at a run's end.
func (h *Handler) getStateAt(c *gin.Context) *apiError {
	return h.stateAt(c, c.Param("cid"))
}

func (h *Handler) getStateCheckpoint(c *gin.Context) *apiError {
	var req struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if e := h.bind(c, &req); e != nil {
		return e
	}
	if req.Checkpoint.CheckpointID == "" {
		return h.getState(c) // a checkpoint naming no id is the thread's latest (RemoteGraph asks so)
	}
	return h.stateAt(c, req.Checkpoint.CheckpointID)
}

func (h *Handler) stateAt(c *gin.Context, id string) *apiError {
	s, st, e := h.pathSnapshot(c)
	if e != nil {
		return e
	}
	for _, ts := range st.history {
		if *ts.Checkpoint.CheckpointID == id {
			httpx.WriteJSON(c, http.StatusOK, ts)
			return nil
		}
	}
	return detail(http.StatusNotFound, "Checkpoint %s not found in thread %s", id, s.ID)
}

// history serves POST (and GET) /threads/{id}/history: the state at each run's end,
// newest first; before (a checkpoint) starts after it, limit (10) bounds the list.
func (h *Handler) history(c *gin.Context) *apiError {
	var req struct {
		Limit  *int `json:"limit"`
		Before *struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"before"`
		Metadata map[string]any `json:"metadata"`
	}
	if c.Request.Method == http.MethodPost {
		if e := h.bind(c, &req); e != nil {
			return e
		}
	} else if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			return invalid("limit must be a number")
		}
		req.Limit = &n
	}
	limit, e := pageLimit(req.Limit)
	if e != nil {
		return e
	}
	_, st, e := h.pathSnapshot(c)
	if e != nil {
		return e
	}
	out := []threadState{}
	started := req.Before == nil
	for _, ts := range st.history {
		if !started {
			started = *ts.Checkpoint.CheckpointID == req.Before.CheckpointID
			continue
		}
		if !metadataMatches(ts.Metadata, req.Metadata) {
			continue
		}
		out = append(out, ts)
		if len(out) == limit {
			break
		}
	}
	httpx.WriteJSON(c, http.StatusOK, out)
	return nil
}
