package host

import (
	"context"
	"time"

	"github.com/agentengine/agentengine/session"
)

// A message's text reaches the store when the message ends. So that a host that dies
// mid-message (kill -9, power loss) does not lose all of a long answer, the text so far
// is stored every snapshotEvery while a message streams, as KsADK's
// assistant_stream_snapshot events; whoever ends the orphaned run later (a restarted
// host, a surviving replica, CancelRun) turns the last snapshot of each unfinished
// message into its assistant_message.

// snapshotText stores the streaming message's text so far when the last snapshot (or
// the message's first delta) is snapshotEvery old. A message that ends sooner costs
// nothing.
func (ts *turnState) snapshotText(ctx context.Context, now time.Time) {
	if ts.msgSince.IsZero() {
		ts.msgSince = now
		return
	}
	if now.Sub(ts.msgSince) < ts.rt.snapshotEvery || ts.storeErr != nil {
		return
	}
	ts.msgSince = now
	ts.snapshots++
	text := ts.msgText.String()
	ne := session.NewEvent{InvocationID: ts.r.InvocationID, ItemID: ts.msgID, Type: session.TypeAssistantStreamSnapshot, Author: ts.r.Agent,
		Data: snapshotData(text, ts.snapshots)}
	// Stored with the deferred events in one write, and journaled like every stored
	// event (a follower that reconnects by seq must find every seq); the wire encoders
	// skip it, since its followers have the text as deltas. The journal keeps it without
	// its JSON (see kindSnapshot).
	ts.snapText = text
	ts.write(ctx, ne)
	ts.snapText = ""
}

// orphanEnd is what ends a run nobody executes any more: an assistant_message for each
// message whose text only its stream snapshots hold, then the run_status of data.
func (rt *Runtime) orphanEnd(ctx context.Context, key session.Key, invocationID string, data session.RunStatusData) []session.NewEvent {
	var out []session.NewEvent
	evs, err := rt.store.Events(ctx, key, session.EventQuery{InvocationID: invocationID,
		Types: []string{session.TypeAssistantStreamSnapshot, session.TypeAssistantMessage}})
	if err != nil {
		rt.log.Warn("could not read the orphaned run's stream snapshots", "invocation", invocationID, "error", err)
	}
	latest := map[string]string{}
	var order []string
	for _, e := range evs {
		if e.Type == session.TypeAssistantMessage {
			delete(latest, e.ItemID)
			continue
		}
		d, err := session.DataOf[session.AssistantStreamSnapshotData](e)
		if err != nil {
			continue
		}
		if _, seen := latest[e.ItemID]; !seen {
			order = append(order, e.ItemID)
		}
		latest[e.ItemID] = d.Text
	}
	for _, id := range order {
		if text, ok := latest[id]; ok {
			out = append(out, session.NewEvent{InvocationID: invocationID, ItemID: id, Type: session.TypeAssistantMessage, Author: key.App,
				Data: session.MustJSON(session.AssistantMessageData{Text: text})})
		}
	}
	return append(out, session.NewEvent{InvocationID: invocationID, Type: session.TypeRunStatus, Author: key.App, Data: session.MustJSON(data)})
}
