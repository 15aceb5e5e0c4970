package actions

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// SSE event names of SubscribeRunEvents. ksadk-web reads only the data lines; the
// names let other clients tell stored events from live text.
const (
	sseStored = "conversation.event"
	sseLive   = "conversation.delta"
)

// Live frame event types. assistant_stream_snapshot is KsADK's stored reconnect aid
// (cumulative text), which ksadk-web renders until the assistant_message arrives;
// reasoning_stream_snapshot is its counterpart for reasoning, which KsADK's UI ignores
// (it concatenates reasoning events, so cumulative ones would repeat).
const (
	typeTextSnapshot      = "assistant_stream_snapshot"
	typeReasoningSnapshot = "reasoning_stream_snapshot"
)

// frame is one SSE event: id (empty for live frames), event name and data.
type frame struct {
	id    string
	event string
	data  []byte
}

// doneFrame ends a stream, as KsADK's clients expect.
func doneFrame() frame { return frame{data: []byte("[DONE]")} }

// follower turns a run's journal into SubscribeRunEvents frames: stored events with a
// seq after the cursor, and the text of messages not yet stored, as snapshots. The
// stored frames depend on the journal alone, so a subscriber that replays it from the
// start gets exactly the events after its cursor; the partial text so far goes out in
// the first snapshot.
type follower struct {
	after      int64
	sessionID  string
	invocation string
	author     string
	responseID string

	live    []*liveItem // items with text not yet stored, in order of their first delta
	lastSeq int64       // the latest stored seq of the journal so far
	ended   bool
}

// liveItem is the text of a message or reasoning item seen only as deltas so far.
type liveItem struct {
	id        string
	kind      string // typeTextSnapshot or typeReasoningSnapshot
	text      strings.Builder
	sent      int // bytes of text already sent
	snapshots int
}

func newFollower(run *host.Run, after int64) *follower {
	return &follower{after: after, sessionID: run.Key.ID, invocation: run.InvocationID, author: run.Agent, responseID: run.ResponseID}
}

// add consumes one journal event and returns the frames it releases at once. Deltas
// release nothing: they wait for flushLive.
func (f *follower) add(ev host.Event) []frame {
	if f.ended {
		return nil
	}
	switch ev.Kind {
	case host.KindTextDelta:
		f.item(ev.ItemID, typeTextSnapshot).text.WriteString(ev.Text)
	case host.KindReasoningDelta:
		f.item(ev.ItemID, typeReasoningSnapshot).text.WriteString(ev.Text)
	case host.KindStored:
		return f.stored(ev)
	case host.KindToolArgsDelta, host.KindNative:
		// The stream shows calls once stored; native events have no counterpart.
	}
	return nil
}

func (f *follower) item(id, kind string) *liveItem {
	for _, it := range f.live {
		if it.id == id {
			return it
		}
	}
	it := &liveItem{id: id, kind: kind}
	f.live = append(f.live, it)
	return it
}

func (f *follower) stored(ev host.Event) []frame {
	e := ev.Stored
	if e == nil {
		return nil
	}
	f.lastSeq = max(f.lastSeq, e.Seq)
	// The stored message supersedes its live text (a stored stream snapshot of it does
	// not: the message goes on streaming).
	for i, it := range f.live {
		if it.id == e.ItemID && e.ItemID != "" && e.Type != session.TypeAssistantStreamSnapshot {
			f.live = append(f.live[:i], f.live[i+1:]...)
			break
		}
	}
	var out []frame
	if e.Seq > f.after {
		out = append(f.flushLive(time.Now()), frame{id: strconv.FormatInt(e.Seq, 10), event: sseStored, data: mustJSON(payloadOf(e, f.responseID))})
	}
	if ev.Terminal() {
		f.ended = true
		out = append(out, doneFrame())
	}
	return out
}

// pending reports whether live text waits to be sent.
func (f *follower) pending() bool {
	for _, it := range f.live {
		if it.text.Len() > it.sent {
			return true
		}
	}
	return false
}

// liveFrame is a snapshot of text not yet stored: Content holds the item's whole text
// so far, Metadata.delta the part new since the previous frame. It is not a stored
// event: the SSE frame has no id, so no cursor ever points at it, and SeqId is the
// seq of the stored event it follows (a position, shared with that event, not an
// identity). KsADK's UI sorts recovered events by SeqId, then time; without it the
// snapshot would sort before the turn's stored reasoning and lose its text.
type liveFrame struct {
	EventID      string         `json:"EventId"`
	SessionID    string         `json:"SessionId"`
	Author       string         `json:"Author"`
	EventType    string         `json:"EventType"`
	Content      roleParts      `json:"Content"`
	Timestamp    float64        `json:"Timestamp"`
	SeqID        int64          `json:"SeqId"`
	Metadata     map[string]any `json:"Metadata"`
	InvocationID string         `json:"InvocationId"`
}

// flushLive returns a snapshot frame for every item with unsent text.
func (f *follower) flushLive(now time.Time) []frame {
	var out []frame
	for _, it := range f.live {
		if it.text.Len() <= it.sent {
			continue
		}
		text := it.text.String()
		it.snapshots++
		lf := liveFrame{
			// A distinct id per frame: KsADK's UI drops repeated EventIds.
			EventID:   f.invocation + ":" + it.id + ":" + strconv.Itoa(it.snapshots),
			SessionID: f.sessionID, Author: f.author, EventType: it.kind,
			Content:   textContent("assistant", text),
			Timestamp: epoch(now),
			SeqID:     f.lastSeq,
			Metadata: map[string]any{"stream_snapshot": true, "live": true, "item_id": it.id,
				"snapshot_index": it.snapshots, "delta": text[it.sent:]},
			InvocationID: f.invocation,
		}
		it.sent = len(text)
		out = append(out, frame{event: sseLive, data: mustJSON(lf)})
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // plain structs and valid RawMessages only
		panic("actions: encode frame: " + err.Error())
	}
	return b
}
