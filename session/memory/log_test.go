package memory

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
)

func TestEventLogRoundTrip(t *testing.T) {
	at := time.Unix(0, 1795482060123456789).UTC()
	evs := []session.Event{
		{InvocationID: "run_1", ItemID: "msg_1", Type: session.TypeUserMessage, Author: "user", Data: json.RawMessage(`{"text":"hé😀"}`), Time: at},
		{Type: session.TypeStateDelta, Author: "agent", Data: json.RawMessage(`{}`), StateDelta: json.RawMessage(`{"a":1}`), Time: at.Add(time.Nanosecond)},
		{Type: "custom", Author: "", Data: json.RawMessage(`{}`), StateDelta: json.RawMessage{}, Time: time.Unix(0, -5).UTC()},
		{InvocationID: strings.Repeat("i", 300), Type: session.TypeRunStatus, Author: "system", Data: json.RawMessage(`"` + strings.Repeat("x", 70000) + `"`), Time: at},
	}
	var l eventLog
	for i := range evs {
		l.add(&evs[i])
	}
	if l.len() != int64(len(evs)) {
		t.Fatalf("len %d", l.len())
	}
	for i, want := range evs {
		want.Seq, want.SessionID = int64(i)+1, "sess_1"
		if got := l.get(int64(i), "sess_1"); !reflect.DeepEqual(got, want) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// What get returns shares no bytes a later add writes.
	first := l.get(0, "s")
	for range 100 {
		l.add(&evs[3])
	}
	if string(first.Data) != string(evs[0].Data) {
		t.Errorf("an earlier event's data changed: %s", first.Data)
	}
	// Past smallLog events the log indexes where each ends; every event reads back the
	// same as when the log was walked, and each decode ends where the next event begins.
	if l.ends == nil || len(l.ends) != l.n {
		t.Fatalf("%d events, %d ends", l.n, len(l.ends))
	}
	for i := range l.len() {
		want := evs[min(i, 3)]
		want.Seq, want.SessionID = i+1, "s"
		got, next := l.decode(l.start(i), i+1, "s")
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d after indexing:\n got %+v\nwant %+v", i, got, want)
		}
		if next != l.ends[i] {
			t.Fatalf("event %d decoded to %d, ends at %d", i, next, l.ends[i])
		}
	}
}

func FuzzEventLog(f *testing.F) {
	f.Add("run_1", "msg_1", "user_message", "user", []byte(`{"text":"hi"}`), []byte(nil), int64(1), uint8(2))
	f.Add("", "", "", "", []byte(""), []byte(""), int64(-1), uint8(smallLog+3))
	f.Fuzz(func(t *testing.T, inv, item, typ, author string, data, delta []byte, ns int64, copies uint8) {
		e := session.Event{InvocationID: inv, ItemID: item, Type: typ, Author: author, Data: data, StateDelta: delta, Time: time.Unix(0, ns).UTC()}
		// Enough copies, some times, that the log indexes where its events end.
		n := 1 + int(copies)%(2*smallLog)
		var l eventLog
		for range n {
			l.add(&e)
		}
		for i := range l.len() {
			got := l.get(i, "s")
			if got.Seq != i+1 || got.SessionID != "s" || got.InvocationID != inv || got.ItemID != item || got.Type != typ ||
				got.Author != author || !bytes.Equal(got.Data, data) || !got.Time.Equal(e.Time) ||
				(delta == nil) != (got.StateDelta == nil) || !bytes.Equal(got.StateDelta, delta) {
				t.Fatalf("event %d of %d: got %+v, want %+v", i, n, got, e)
			}
		}
	})
}
