package host_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/protolimit"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func historyBytes(h []session.Message) int {
	n := 0
	for _, m := range h {
		n += len(m.Content)
	}
	return n
}

// A session whose history has grown past gRPC's default 4 MiB message limit still takes
// turns, and what is sent stays within the history byte budget: the newest messages whole,
// older ones cut with a marker.
func TestHugeHistoryStillTakesATurn(t *testing.T) {
	for _, tt := range []struct {
		name    string
		budget  int
		wantCut bool
	}{
		{"default budget", 0, false},
		{"small budget", 3 << 20, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, nil, memory.New(), host.CompactionPolicy{Disabled: true, MaxHistoryBytes: tt.budget})
			big := strings.Repeat("y", 1<<20)
			id := ""
			for i := range 3 {
				r, evs := f.turn(t, host.TurnRequest{User: "u", SessionID: id, Input: text(string(rune('a'+i)) + big)})
				id = r.Key.ID
				if st := terminal(t, evs); st.Status != session.StatusCompleted {
					t.Fatalf("turn %d: %+v", i, st)
				}
			}
			_, evs := f.turn(t, host.TurnRequest{User: "u", SessionID: id, Input: text("last")})
			if st := terminal(t, evs); st.Status != session.StatusCompleted {
				t.Fatalf("turn after a >4 MiB history: %+v", st)
			}
			hist := f.agent.last().Payload.History
			if len(hist) != 6 {
				t.Fatalf("history has %d messages, want 6", len(hist))
			}
			cut := strings.Contains(hist[0].Content, "truncated: over the history size budget")
			if cut != tt.wantCut {
				t.Errorf("oldest message cut = %v, want %v", cut, tt.wantCut)
			}
			if !strings.HasPrefix(hist[0].Content, "a") || hist[5].Content != "you said c"+big {
				t.Errorf("the newest message must stay whole and the oldest keep its start")
			}
			if tt.budget > 0 && historyBytes(hist) > tt.budget+6*4096 {
				t.Errorf("history of %d bytes, budget %d", historyBytes(hist), tt.budget)
			}
		})
	}
}

// A session with 50 MiB of history (ten 5 MiB messages) takes its next turn: the runner
// gets the history within its byte budget, the newest message whole.
func TestFiftyMiBHistoryStillTakesATurn(t *testing.T) {
	st := memory.New()
	f := newFixtureWith(t, nil, st, host.CompactionPolicy{Disabled: true})
	r, evs := f.turn(t, host.TurnRequest{User: "u", Input: text("first")})
	if s := terminal(t, evs); s.Status != session.StatusCompleted {
		t.Fatalf("first turn: %+v", s)
	}
	big := strings.Repeat("z", 5<<20)
	var history []session.NewEvent
	for i := range 10 {
		ne := session.NewEvent{Type: session.TypeUserMessage, Author: "user", Data: session.MustJSON(session.UserMessageData{Text: fmt.Sprint(i) + big})}
		if i%2 == 1 {
			ne = session.NewEvent{Type: session.TypeAssistantMessage, Author: "scripted", Data: session.MustJSON(session.AssistantMessageData{Text: fmt.Sprint(i) + big})}
		}
		history = append(history, ne)
	}
	if _, err := st.Append(t.Context(), r.Key, history...); err != nil {
		t.Fatal(err)
	}
	_, evs = f.turn(t, host.TurnRequest{User: "u", SessionID: r.Key.ID, Input: text("last")})
	if s := terminal(t, evs); s.Status != session.StatusCompleted {
		t.Fatalf("turn after a 50 MiB history: %+v", s)
	}
	hist := f.agent.last().Payload.History
	if n := historyBytes(hist); n > protolimit.HistoryBudgetBytes+len(hist)*4096 {
		t.Fatalf("history of %d bytes sent, budget %d", n, protolimit.HistoryBudgetBytes)
	}
	if len(hist) == 0 || hist[len(hist)-1].Content != "9"+big {
		t.Fatal("the newest message of the history is not sent whole")
	}
}
