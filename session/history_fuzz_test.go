package session_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// FuzzLoadHistory: for any log a store accepts, reading history from the latest
// checkpoint is the same as projecting the whole log. Each input byte is one event.
func FuzzLoadHistory(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0, 1, 5, 6 | 2<<3, 0, 1})
	f.Add([]byte{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 6 | 1<<3, 0, 6 | 31<<3, 1})
	f.Add([]byte{6, 6, 6, 0, 6 | 7<<3})
	f.Add([]byte{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 6 | 3<<3, 3, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := t.Context()
		st := memory.New()
		k := session.Key{App: "a", User: "u", ID: "s"}
		if _, err := st.CreateSession(ctx, k); err != nil {
			t.Fatal(err)
		}
		for i, op := range ops {
			seq := int64(i + 1)
			var e session.NewEvent
			switch op & 7 {
			case 0:
				e = session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: fmt.Sprint("u", seq)})}
			case 1:
				e = session.NewEvent{Type: session.TypeAssistantMessage, Data: session.MustJSON(session.AssistantMessageData{Text: fmt.Sprint("a", seq)})}
			case 2:
				e = session.NewEvent{Type: session.TypeReasoning, Data: session.MustJSON(session.ReasoningData{Text: "r"})}
			case 3:
				e = session.NewEvent{Type: session.TypeRunStatus, Data: session.MustJSON(session.RunStatusData{Status: "completed"})}
			case 4:
				e = session.NewEvent{Type: session.TypeToolCall, Data: session.MustJSON(session.ToolCallData{CallID: "c", Name: "f"})}
			case 5:
				e = session.NewEvent{Type: session.TypeCompactionBound, Data: []byte(`{}`)}
			default:
				// A checkpoint covering up to some earlier seq: the high bits say how far back.
				until := max(0, seq-1-int64(op>>3))
				e = session.NewEvent{Type: session.TypeContextCheckpoint, Data: session.MustJSON(
					session.ContextCheckpointData{Summary: fmt.Sprint("sum", seq), UntilSeq: until})}
			}
			if _, err := st.Append(ctx, k, e); err != nil {
				t.Fatal(err)
			}
		}
		hist, _, err := session.LoadHistory(ctx, st, k)
		if err != nil {
			t.Fatal(err)
		}
		all, err := st.Events(ctx, k, session.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if want := session.Project(all); !reflect.DeepEqual(hist, want) {
			t.Fatalf("LoadHistory = %+v\nwant %+v", hist, want)
		}
	})
}
