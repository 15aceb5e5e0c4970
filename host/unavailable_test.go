package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// An agent whose runner failed to start is left out of the list, a turn for it names the
// reason, and the other agent serves on; fixing it brings it back.
func TestUnavailableAgentServesTheOthers(t *testing.T) {
	good := &scripted{}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{
		{Name: "good", Runner: serve(t, good)},
		{Name: "broken", Runner: serve(t, &scripted{})},
	}})
	rt.SetAgentError("broken", errors.New("building the Go runner failed: main.go:3: undefined: x"))

	if got := rt.Agents(); len(got) != 1 || got[0].Name != "good" {
		t.Fatalf("Agents = %v, want only good", got)
	}
	if u := rt.Unavailable(); len(u) != 1 || u[0].Name != "broken" || !strings.Contains(u[0].Error, "undefined: x") {
		t.Fatalf("Unavailable = %v", u)
	}
	_, err := rt.Start(context.Background(), host.TurnRequest{App: "broken", Input: text("hi")})
	if !errors.Is(err, host.ErrUnavailable) {
		t.Fatalf("turn for broken = %v, want ErrUnavailable", err)
	}
	if msg := host.ClientMessage(err); !strings.Contains(msg, `agent "broken" is unavailable`) || !strings.Contains(msg, "undefined: x") {
		t.Fatalf("message %q does not name the reason", msg)
	}
	if err := rt.Ready(context.Background()); !errors.Is(err, host.ErrUnavailable) || !strings.Contains(host.ClientMessage(err), "undefined: x") {
		t.Fatalf("Ready = %v", err)
	}

	// With one agent able to serve, a request that names none goes to it.
	if a, err := rt.ResolveAgent(""); err != nil || a.Name != "good" {
		t.Fatalf("ResolveAgent(\"\") = %v, %v; want the one agent that serves", a, err)
	}
	r, err := rt.Start(context.Background(), host.TurnRequest{App: "good", Input: text("hi")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.Wait(ctx); err != nil || r.Status() != session.StatusCompleted {
		t.Fatalf("good run: %v, %s", err, r.Status())
	}

	rt.SetAgentError("broken", nil)
	if len(rt.Agents()) != 2 || len(rt.Unavailable()) != 0 {
		t.Fatalf("after the fix: Agents %v, Unavailable %v", rt.Agents(), rt.Unavailable())
	}
}

// A run longer than the agent's RunTimeout ends failed, saying which setting stopped it.
func TestRunTimeoutFailsTheRun(t *testing.T) {
	ag := &scripted{started: make(chan struct{}, 1)}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{
		{Name: "scripted", Runner: serve(t, ag), RunTimeout: 200 * time.Millisecond},
	}})
	r, err := rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := terminal(t, evs)
	if d.Status != session.StatusFailed || d.Error == nil || d.Error.Code != "run_timeout" ||
		!strings.Contains(d.Error.Message, "run_timeout (200ms, set in agentengine.yaml)") {
		t.Fatalf("terminal = %+v (error %+v)", d, d.Error)
	}
	// A quick run on the same agent is not affected.
	r, err = rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if evs, _ := r.Wait(ctx); terminal(t, evs).Status != session.StatusCompleted {
		t.Fatalf("quick run: %s", r.Status())
	}
}
