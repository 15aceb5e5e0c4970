package langgraph

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// stateUpdateItem is the input item of a run that updates a thread's state: the LangGraph
// bridge calls the graph's update_state with it instead of running the graph.
const stateUpdateItem = "langgraph_state_update"

// runKindUpdate marks the runs that updated a thread's state (runMeta.Kind): they are
// checkpoints of the thread, not runs a client started.
const runKindUpdate = "update"

type stateUpdate struct {
	Values     json.RawMessage `json:"values"`
	AsNode     *string         `json:"as_node"`
	Checkpoint *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	CheckpointID string `json:"checkpoint_id"`
}

// updateState serves POST /threads/{id}/state: LangGraph's update_state, computed by the
// graph in its runner (a run whose input is the update), so that the graph's reducers
// apply and as_node writes as that node would. The thread's new checkpoint is that run's;
// the update of an earlier checkpoint forks the thread there first.
func (h *Handler) updateState(c *gin.Context) *apiError {
	var req stateUpdate
	if e := h.bind(c, &req); e != nil {
		return e
	}
	if !present(req.Values) {
		return invalid("values is required")
	}
	var values any
	if err := json.Unmarshal(req.Values, &values); err != nil {
		return invalid("values is not valid JSON")
	}
	if _, ok := values.(map[string]any); !ok {
		return invalid("values must be an object of channel values")
	}
	ctx, user := c.Request.Context(), h.user(c)
	unlock := h.busy.lock(user + "\x00" + c.Param("tid"))
	s, st, e := h.pathSnapshot(c)
	if e != nil {
		unlock()
		return e
	}
	at := req.CheckpointID
	if req.Checkpoint != nil && req.Checkpoint.CheckpointID != "" {
		at = req.Checkpoint.CheckpointID
	}
	switch st.status {
	case "busy":
		unlock()
		return busyThread()
	case "interrupted":
		unlock()
		return detail(http.StatusConflict, "thread %s is paused on an interrupt: resume it with command.resume before updating its state", s.ID)
	}
	if at != "" {
		// An earlier checkpoint's update forks the thread there, as in LangGraph.
		if e := h.fork(ctx, s.Key, st, at); e != nil {
			unlock()
			return e
		}
	}
	item := map[string]any{"type": stateUpdateItem, "values": values, "as_node": req.AsNode}
	turn := host.TurnRequest{App: s.App, User: user, SessionID: s.ID, InvocationID: host.NewID("run_"),
		Metadata: map[string]string{updatesFlag: "1"}, Input: host.Input{Items: []json.RawMessage{session.MustJSON(item)}},
		Meta: session.MustJSON(runMeta{Surface: "langgraph", AssistantID: s.App, Kind: runKindUpdate})}
	run, err := h.rt.Start(ctx, turn)
	unlock()
	if err != nil {
		if errors.Is(err, host.ErrRunActive) {
			return busyThread()
		}
		return fromHost(h.log, "start state update", err)
	}
	evs, err := run.Wait(ctx)
	if err != nil {
		return nil // the client went away; the update goes on
	}
	if run.Status() != session.StatusCompleted {
		msg := "the state update failed"
		for _, ev := range evs {
			if ev.Kind != host.KindStored || ev.Stored.Type != session.TypeRunStatus {
				continue
			}
			if d, err := session.DataOf[session.RunStatusData](*ev.Stored); err == nil && d.Error != nil {
				msg = d.Error.Message
			}
		}
		return detail(http.StatusUnprocessableEntity, "%s", msg)
	}
	ref := ref(s.ID, run.InvocationID)
	ref.CheckpointMap = map[string]any{}
	httpx.WriteJSON(c, http.StatusOK, gin.H{"checkpoint": ref})
	return nil
}

// isStateUpdate reports whether a user message is a state update's input.
func isStateUpdate(e *session.Event) bool {
	d, err := session.DataOf[session.UserMessageData](*e)
	if err != nil || len(d.Items) != 1 {
		return false
	}
	var it struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(d.Items[0], &it) == nil && it.Type == stateUpdateItem
}
