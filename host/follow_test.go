package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// toolAgent calls a tool and then works on it until released, as a long tool call does.
type toolAgent struct {
	called, release chan struct{}
}

func (a *toolAgent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "tool"} }

func (a *toolAgent) Run(ctx context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if err := emit.ToolCall("call_1", "slow_search", `{"q":"x"}`); err != nil {
		return err
	}
	close(a.called)
	select {
	case <-a.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := emit.ToolResult("call_1", "slow_search", "found", false); err != nil {
		return err
	}
	return emit.Text("done")
}

// A follower that joins while the runner is quiet sees the items the run deferred at
// once (stored when it joins), not when the runner's next event comes.
func TestAFollowerJoiningMidToolCallSeesTheCallAtOnce(t *testing.T) {
	agent := &toolAgent{called: make(chan struct{}), release: make(chan struct{})}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "tool", Runner: serve(t, agent)}}})
	r, err := rt.Start(context.Background(), host.TurnRequest{App: "tool", Input: text("search")})
	if err != nil {
		t.Fatal(err)
	}
	defer close(agent.release)
	<-agent.called
	// Let the host take the call in (and defer it: nobody follows the run yet). With the
	// fix the test passes however long this is; without it, only if the host is slower.
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub := r.Subscribe(0)
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("the tool call never reached the follower while the tool ran: %v", err)
		}
		if ev.Kind == host.KindStored && ev.Stored.Type == session.TypeToolCall {
			if ev.Stored.Seq == 0 {
				t.Fatalf("the tool call reached the follower unstored: %+v", ev.Stored)
			}
			return
		}
	}
}
