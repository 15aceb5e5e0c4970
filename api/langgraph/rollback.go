// Rollbacks and forks: a thread's runs removed, or its state taken back to an earlier
// checkpoint, by item_deleted events the projection and the runner's history honour.

package langgraph

import (
	"context"
	"net/http"
	"strings"

	"github.com/agentengine/agentengine/session"
)

// rollbackPrefix starts the item id of the item_deleted event that rolls a run back (the
// run id follows): the run's messages leave the thread's history (the runner's too), and
// the run leaves the thread's runs and checkpoints.
const rollbackPrefix = "langgraph_rollback:"

// rollback removes a finished run from its thread, as LangGraph's rollback deletes a
// cancelled run and its checkpoints.
func (h *Handler) rollback(ctx context.Context, key session.Key, runID string) *apiError {
	evs, err := h.rt.Events(ctx, key, session.EventQuery{InvocationID: runID})
	if err != nil {
		return fromHost(h.log, "load run events", err)
	}
	parts := []session.ItemPart{}
	for _, e := range evs {
		switch e.Type {
		case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall, session.TypeToolResult:
			parts = append(parts, session.ItemPart{Seq: e.Seq, Index: -1})
		}
	}
	data := session.ItemDeletedData{ItemID: rollbackPrefix + runID, Parts: parts}
	// The request may be over once the run is cancelled; the rollback is recorded anyway.
	ctx = context.WithoutCancel(ctx)
	if _, err := h.rt.AppendItems(ctx, key, session.NewEvent{Type: session.TypeItemDeleted, Author: "user", Data: session.MustJSON(data)}); err != nil {
		return fromHost(h.log, "roll back run", err)
	}
	return nil
}

// visible drops what rollbacks removed from a thread's events: the deleted events and
// every event of a rolled-back run.
func visible(evs []session.Event) ([]session.Event, map[string]bool) {
	var (
		deleted map[int64]bool
		rolled  map[string]bool
	)
	for _, e := range evs {
		if e.Type != session.TypeItemDeleted {
			continue
		}
		d, err := session.DataOf[session.ItemDeletedData](e)
		if err != nil {
			continue
		}
		run, ok := strings.CutPrefix(d.ItemID, rollbackPrefix)
		if !ok {
			continue // other deletions (a fork's) apply from where they are (projector)
		}
		if rolled == nil {
			rolled = map[string]bool{}
		}
		rolled[run] = true
		for _, p := range d.Parts {
			if p.Index < 0 {
				if deleted == nil {
					deleted = map[int64]bool{}
				}
				deleted[p.Seq] = true
			}
		}
	}
	if deleted == nil && rolled == nil {
		return evs, nil
	}
	out := make([]session.Event, 0, len(evs))
	for _, e := range evs {
		if deleted[e.Seq] || (e.InvocationID != "" && rolled[e.InvocationID]) {
			continue
		}
		out = append(out, e)
	}
	return out, rolled
}

// forkPrefix starts the item id of the item_deleted event that forks a thread from an
// earlier checkpoint (its run id follows): the messages after it leave the thread's values
// and the graph's history from there on; the checkpoints after it stay in history.
const forkPrefix = "langgraph_fork:"

// fork makes the thread's state that of checkpoint at (a run's end) for the run about to
// start, as a LangGraph run from an earlier checkpoint_id forks the thread there.
func (h *Handler) fork(ctx context.Context, key session.Key, st threadSnapshot, at string) *apiError {
	var target *threadState
	for i := range st.history {
		if *st.history[i].Checkpoint.CheckpointID == at {
			target = &st.history[i]
			break
		}
	}
	switch {
	case target == nil:
		return detail(http.StatusNotFound, "Checkpoint %s not found in thread %s", at, key.ID)
	case target == &st.history[0]:
		return nil // the latest: nothing to fork
	case len(target.Next) > 0:
		return invalid("checkpoint %s is paused (on an interrupt or a breakpoint): running from it is not offered", at)
	}
	evs, err := h.rt.Events(ctx, key, session.EventQuery{AfterSeq: target.seq})
	if err != nil {
		return fromHost(h.log, "load thread events", err)
	}
	evs, _ = visible(evs)
	parts := []session.ItemPart{}
	for _, e := range evs {
		switch e.Type {
		case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall, session.TypeToolResult:
			parts = append(parts, session.ItemPart{Seq: e.Seq, Index: -1})
		}
	}
	// The graph's channels go back to the checkpoint's too (null: it had none reported).
	var channels any
	if vals, ok := target.Values.(map[string]any); ok && len(vals) > 1 {
		ch := map[string]any{}
		for k, v := range vals {
			if k != "messages" {
				ch[k] = v
			}
		}
		channels = ch
	}
	delta := session.MustJSON(map[string]any{valuesKey: channels})
	if _, err := h.rt.AppendItems(ctx, key, session.NewEvent{Type: session.TypeItemDeleted, Author: "user",
		Data: session.MustJSON(session.ItemDeletedData{ItemID: forkPrefix + at, Parts: parts})}); err != nil {
		return fromHost(h.log, "fork thread", err)
	}
	if _, err := h.rt.AppendEvents(ctx, key, session.NewEvent{Type: session.TypeStateDelta, Author: "user", Data: delta, StateDelta: delta}); err != nil {
		return fromHost(h.log, "fork thread state", err)
	}
	return nil
}

// replayed returns the user message of the run right after checkpoint at (nil when at is
// the thread's latest): a run from an earlier checkpoint without input runs that turn
// again from there (what a client's regenerate sends).
func (h *Handler) replayed(ctx context.Context, key session.Key, st threadSnapshot, at string) (*session.UserMessageData, *apiError) {
	for i := range st.history {
		if *st.history[i].Checkpoint.CheckpointID != at {
			continue
		}
		if i == 0 {
			return nil, nil
		}
		next := *st.history[i-1].Checkpoint.CheckpointID
		// On the thread's current branch (it may have forked from at since), the run
		// whose parent is at.
		byID := map[string]*threadState{}
		for j := range st.history {
			byID[*st.history[j].Checkpoint.CheckpointID] = &st.history[j]
		}
		for cur := &st.history[0]; cur != nil && cur.ParentCheckpoint != nil; cur = byID[*cur.ParentCheckpoint.CheckpointID] {
			if *cur.ParentCheckpoint.CheckpointID == at {
				next = *cur.Checkpoint.CheckpointID
				break
			}
		}
		evs, err := h.rt.Events(ctx, key, session.EventQuery{InvocationID: next, Types: []string{session.TypeUserMessage}})
		if err != nil {
			return nil, fromHost(h.log, "load the run's input", err)
		}
		for _, e := range evs {
			if d, err := session.DataOf[session.UserMessageData](e); err == nil && (d.Text != "" || len(d.Content) > 0) {
				return &d, nil
			}
		}
		return nil, invalid("the run after checkpoint %s took no new input (it resumed or updated the thread): send input to run from it", at)
	}
	return nil, detail(http.StatusNotFound, "Checkpoint %s not found in thread %s", at, key.ID)
}
