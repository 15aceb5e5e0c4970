package host_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session/memory"
)

// With MaxRunsPerUser, a user's turn over the cap is refused (ErrTooManyRuns) while
// other users run; the slot comes back when a run ends.
func TestMaxRunsPerUser(t *testing.T) {
	agent := &scripted{started: make(chan struct{}, 1)}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "scripted", Runner: serve(t, agent)}}, MaxRunsPerUser: 1})
	ctx := context.Background()
	r, err := rt.Start(ctx, host.TurnRequest{App: "scripted", User: "u", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-agent.started
	if _, err := rt.Start(ctx, host.TurnRequest{App: "scripted", User: "u", Input: text("hello")}); !errors.Is(err, host.ErrTooManyRuns) {
		t.Fatalf("second run of u: %v, want ErrTooManyRuns", err)
	}
	other, err := rt.Start(ctx, host.TurnRequest{App: "scripted", User: "v", Input: text("hello")})
	if err != nil {
		t.Fatalf("run of another user: %v", err)
	}
	<-other.Done()
	if err := rt.Cancel(ctx, r.Key, r.InvocationID); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	// The slot is released just after Done; allow the run's goroutine to return.
	testutil.Eventually(t, 5*time.Second, func() error {
		again, err := rt.Start(ctx, host.TurnRequest{App: "scripted", User: "u", Input: text("hello")})
		if err == nil {
			<-again.Done()
			return nil
		}
		if !errors.Is(err, host.ErrTooManyRuns) {
			t.Fatalf("after the run ended: %v", err)
		}
		return fmt.Errorf("after the run ended: %w", err)
	})
}
