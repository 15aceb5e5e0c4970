package host

import (
	"context"
	"time"

	"github.com/agentengine/agentengine/session"
)

// store appends a durable event for the run and journals it with its seq. While nobody
// follows the run, an event that changes neither state nor checkpoints is deferred: it
// takes its place in the journal (hidden from readers until stored) and is written with
// the next write the run has to make, or by flushOnWatch when someone starts following.
func (ts *turnState) store(ctx context.Context, ne session.NewEvent) {
	if ts.storeErr != nil {
		return
	}
	ne.InvocationID = ts.r.InvocationID
	if ts.meta != nil && carriesMeta(ne.Type) {
		ne.Data = withMeta(ne.Data, ts.meta)
	}
	if ne.Author == "" {
		ne.Author = ts.r.Agent
	}
	if ne.StateDelta == nil && ne.Checkpoints == nil {
		p := &session.Event{}
		if ts.r.j.Hold(Event{Kind: KindStored, Stored: p}) {
			ts.deferred = append(ts.deferred, ne)
			ts.held = append(ts.held, p)
			return
		}
	}
	ts.write(ctx, ne)
}

// write appends the deferred events and then extra in one store write, fills the
// deferred events' journal places and journals extra's.
func (ts *turnState) write(ctx context.Context, extra ...session.NewEvent) {
	// The store must record what happened even when the run is being cancelled.
	ctx = context.WithoutCancel(ctx)
	sw := ts.rt.storeWrite(ctx, "append")
	evs, err := ts.rt.store.Append(ctx, ts.r.Key, append(ts.deferred, extra...)...)
	sw.end(err)
	if err != nil {
		ts.storeErr = err
		ts.releaseHeld(nil)
		return
	}
	evs = ts.releaseHeld(evs)
	for i := range evs {
		if ts.snapText != "" && i == len(evs)-1 && evs[i].Type == session.TypeAssistantStreamSnapshot {
			ts.r.j.Add(snapshotEntry(&evs[i], ts.snapText, ts.snapshots))
			continue
		}
		ts.r.j.Add(Event{Kind: KindStored, Stored: &evs[i]})
	}
}

// releaseHeld fills the held journal places from the first stored events (or, when
// the store failed, with what the run produced, without seqs), shows them to readers
// and returns the rest of evs.
func (ts *turnState) releaseHeld(evs []session.Event) []session.Event {
	if len(ts.held) == 0 {
		return evs
	}
	held, deferred := ts.held, ts.deferred
	ts.held, ts.deferred = nil, nil
	ts.r.j.Release(func() {
		for i, p := range held {
			if i < len(evs) {
				*p = evs[i]
				continue
			}
			d := deferred[i]
			*p = session.Event{SessionID: ts.r.Key.ID, InvocationID: d.InvocationID, ItemID: d.ItemID, Type: d.Type, Author: d.Author, Data: d.Data, Time: time.Now().UTC()}
		}
	})
	if len(evs) < len(held) {
		return nil
	}
	return evs[len(held):]
}

func (ts *turnState) flushMessage(ctx context.Context) {
	if ts.msgID == "" {
		return
	}
	ts.store(ctx, session.NewEvent{Type: session.TypeAssistantMessage, ItemID: ts.msgID, Data: session.MustJSON(session.AssistantMessageData{Text: ts.msgText.String()})})
	ts.msgText.Reset()
	ts.msgID, ts.msgSince, ts.snapshots = "", time.Time{}, 0
}

func (ts *turnState) flushReasoning(ctx context.Context) {
	if ts.rsID == "" {
		return
	}
	ts.store(ctx, session.NewEvent{Type: session.TypeReasoning, ItemID: ts.rsID, Data: session.MustJSON(session.ReasoningData{Text: ts.rsText.String()})})
	ts.rsText.Reset()
	ts.rsID = ""
}

func (ts *turnState) flushCall(ctx context.Context, callID string) {
	c, ok := ts.calls[callID]
	if !ok {
		return
	}
	args := string(c.args)
	if args == "" {
		args = "{}"
	}
	if ts.span.IsRecording() {
		if ts.toolStarts == nil {
			ts.toolStarts = map[string]time.Time{}
		}
		ts.toolStarts[callID] = time.Now()
		if ts.rt.traceContent {
			if ts.toolArgs == nil {
				ts.toolArgs = map[string]string{}
			}
			ts.toolArgs[callID] = args
		}
	}
	if ts.rt.metrics != nil || ts.span.IsRecording() {
		if ts.toolNames == nil {
			ts.toolNames = map[string]string{}
		}
		ts.toolNames[callID] = c.name
	}
	ts.store(ctx, session.NewEvent{Type: session.TypeToolCall, ItemID: c.itemID, Data: session.MustJSON(session.ToolCallData{CallID: callID, Name: c.name, Arguments: args})})
	delete(ts.calls, callID)
	for i, id := range ts.callOrder {
		if id == callID {
			ts.callOrder = append(ts.callOrder[:i], ts.callOrder[i+1:]...)
			break
		}
	}
}

func (ts *turnState) flushAll(ctx context.Context) {
	ts.flushReasoning(ctx)
	ts.flushMessage(ctx)
	for len(ts.callOrder) > 0 {
		ts.flushCall(ctx, ts.callOrder[0])
	}
}
