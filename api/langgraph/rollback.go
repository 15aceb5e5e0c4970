package langgraph

import (
	"context"
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

// visible drops what rollbacks and deletions removed from a thread's events: the deleted
// events and every event of a rolled-back run.
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
		if run, ok := strings.CutPrefix(d.ItemID, rollbackPrefix); ok {
			if rolled == nil {
				rolled = map[string]bool{}
			}
			rolled[run] = true
		}
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
