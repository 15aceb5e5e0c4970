package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// metaAgent reports event.meta the way the ADK bridge does: before the items of each
// framework event.
type metaAgent struct{}

func (metaAgent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "meta", Framework: "adk"} }

func (metaAgent) Run(_ context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	steps := []func() error{
		func() error {
			return emit.Native(host.NativeEventMeta, map[string]any{"author": "assistant", "usageMetadata": map[string]int{"totalTokenCount": 3}})
		},
		func() error { return emit.ToolCall("c1", "get_weather", `{"city":"Paris"}`) },
		func() error { return emit.Native(host.NativeEventMeta, map[string]any{"author": "assistant"}) },
		func() error { return emit.ToolResult("c1", "get_weather", `{"sunny":true}`, false) },
		func() error { return emit.StateDelta(map[string]any{"k": "v"}) },
		func() error { return emit.Native(host.NativeEventMeta, "not an object") },
		func() error { return emit.Text("no meta") },
		func() error { return emit.MessageDone("no meta") },
		func() error {
			return emit.Native(host.NativeEventMeta, map[string]any{"author": "assistant", "turnComplete": true})
		},
		func() error { return emit.Text("done") },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

func TestEventMetaIsStoredWithTheItemsThatFollowIt(t *testing.T) {
	store := memory.New()
	rt := startRuntime(t, host.Config{Store: store, Agents: []host.Agent{{Name: "meta", Runner: serve(t, metaAgent{})}}})
	_, evs := runTurn(t, rt, host.TurnRequest{App: "meta", Input: text("go")})
	if st := terminal(t, evs); st.Status != session.StatusCompleted {
		t.Fatalf("status %q", st.Status)
	}
	type item struct {
		typ  string
		meta string
	}
	var got []item
	for _, e := range evs {
		if e.Kind != host.KindStored || e.Stored == nil {
			continue
		}
		s := e.Stored
		if s.Type == session.TypeUserMessage || s.Type == session.TypeRunStatus {
			continue
		}
		var d struct {
			Meta json.RawMessage `json:"meta"`
		}
		if s.Type != session.TypeStateDelta {
			if err := json.Unmarshal(s.Data, &d); err != nil {
				t.Fatalf("%s data %s: %v", s.Type, s.Data, err)
			}
		}
		got = append(got, item{s.Type, string(d.Meta)})
	}
	want := []item{
		{session.TypeToolCall, `{"author":"assistant","usageMetadata":{"totalTokenCount":3}}`},
		{session.TypeToolResult, `{"author":"assistant"}`},
		{session.TypeStateDelta, ""}, // its data is the delta itself
		{session.TypeAssistantMessage, ""},
		{session.TypeAssistantMessage, `{"author":"assistant","turnComplete":true}`},
	}
	if len(got) != len(want) {
		t.Fatalf("stored items = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// The payloads themselves are intact.
	for _, e := range evs {
		if e.Kind == host.KindStored && e.Stored != nil && e.Stored.Type == session.TypeToolCall {
			d, err := session.DataOf[session.ToolCallData](*e.Stored)
			if err != nil || d.CallID != "c1" || d.Arguments != `{"city":"Paris"}` {
				t.Errorf("tool call data = %+v, %v", d, err)
			}
		}
	}
}
