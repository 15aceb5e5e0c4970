package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func budgetRuntime(t *testing.T, store session.Store, budget host.StateBudget) *host.Runtime {
	t.Helper()
	return startRuntime(t, host.Config{Store: store, StateBudget: budget,
		Agents: []host.Agent{{Name: "echo", Runner: serve(t, echoagent.New())}}})
}

func stateEvent(delta string) session.NewEvent {
	return session.NewEvent{Type: session.TypeStateDelta, Author: "user", Data: json.RawMessage(delta), StateDelta: json.RawMessage(delta)}
}

// finished runs a turn to its end and returns its terminal status.
func finished(t *testing.T, rt *host.Runtime, req host.TurnRequest) session.RunStatusData {
	t.Helper()
	_, evs := runTurn(t, rt, req)
	return terminal(t, evs)
}

// Every way state is written is held to each tier's budget: a client's state delta
// outside a run and with a turn (refused with ErrStateTooLarge, nothing stored), and a
// runner's (its run fails with the reason). The session, the user and the agent take
// turns afterwards as before.
func TestStateBudgetHoldsEveryWrite(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	rt := budgetRuntime(t, store, host.StateBudget{App: 2048, User: 2048, Session: 2048})
	key := session.Key{App: "echo", User: "u", ID: "s1"}
	if _, err := rt.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 3000)
	for _, k := range []string{"app:big", "user:big", "big"} {
		_, err := rt.AppendEvents(ctx, key, stateEvent(`{"`+k+`":"`+big+`"}`))
		var ce *host.ClientError
		if !errors.Is(err, host.ErrStateTooLarge) || !errors.As(err, &ce) || !strings.Contains(ce.Message, "budget of 2048 bytes") {
			t.Errorf("%s over the budget: %v", k, err)
		}
		// Several writes within the budget each, over it together.
		var last error
		for i := range 3 {
			_, last = rt.AppendEvents(ctx, key, stateEvent(`{"`+k+string(rune('0'+i))+`":"`+big[:1000]+`"}`))
		}
		if !errors.Is(last, host.ErrStateTooLarge) {
			t.Errorf("%s: the third write of 1000 bytes: %v", k, last)
		}
	}
	// A turn's own state delta over the budget: the turn is refused, nothing recorded.
	_, err := rt.Start(ctx, host.TurnRequest{App: "echo", User: "u", SessionID: "s1", Input: text("hi"), StateDelta: json.RawMessage(`{"user:t":"` + big + `"}`)})
	if !errors.Is(err, host.ErrStateTooLarge) {
		t.Errorf("turn with a state delta over the budget: %v", err)
	}
	// The runner's state delta over the budget fails its run with the reason.
	st := finished(t, rt, host.TurnRequest{App: "echo", User: "u", SessionID: "s1", Input: text("state:user:r=" + big)})
	if st.Status != session.StatusFailed || st.Error == nil || st.Error.Code != "state_too_large" || !strings.Contains(st.Error.Message, "user state") {
		t.Errorf("runner's state delta over the budget: %+v %+v", st, st.Error)
	}
	// Nothing over the budget was stored; the session, a new session of the user and
	// another user all take turns.
	s, err := rt.State(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range []map[string]any{s.App, s.User, s.Session} {
		b, _ := json.Marshal(tier)
		if len(b) > 2048 || tier["big"] != nil || tier["r"] != nil || tier["t"] != nil {
			t.Errorf("a tier holds %d bytes: %.100s", len(b), b)
		}
	}
	for _, req := range []host.TurnRequest{
		{App: "echo", User: "u", SessionID: "s1", Input: text("hello")},
		{App: "echo", User: "u", Input: text("hello")},
		{App: "echo", User: "v", Input: text("state:user:lang=de")},
	} {
		if st := finished(t, rt, req); st.Status != session.StatusCompleted {
			t.Errorf("turn %+v after refused writes: %+v", req, st)
		}
	}
}

// State written over a budget (before there was one, or under a larger one) can always
// be shrunk; it cannot grow.
func TestStateOverBudgetCanShrinkOnly(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	key := session.Key{App: "echo", User: "u", ID: "s1"}
	roomy := budgetRuntime(t, store, host.StateBudget{})
	if _, err := roomy.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 3000)
	if _, err := roomy.AppendEvents(ctx, key, stateEvent(`{"user:a":"`+big+`","user:b":"`+big+`"}`)); err != nil {
		t.Fatal(err)
	}
	tight := budgetRuntime(t, store, host.StateBudget{User: 2048})
	if _, err := tight.AppendEvents(ctx, key, stateEvent(`{"user:c":"1"}`)); !errors.Is(err, host.ErrStateTooLarge) {
		t.Errorf("growing a tier over its budget: %v", err)
	}
	if _, err := tight.AppendEvents(ctx, key, stateEvent(`{"user:a":null}`)); err != nil {
		t.Errorf("shrinking a tier over its budget: %v", err)
	}
	if _, err := tight.AppendEvents(ctx, key, stateEvent(`{"user:b":null,"user:c":"1"}`)); err != nil {
		t.Errorf("back within the budget: %v", err)
	}
}
