package host_test

import (
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host"
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
