package langgraph

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// graphRunner emits what the LangGraph bridge sends for a graph with a subgraph: node
// updates (when the run's metadata asks for them, as the bridge does), a custom stream
// write and an answer.
type graphRunner struct{}

func (graphRunner) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "graph", Framework: "langgraph", Capabilities: pluginsdk.Capabilities{}}
}

func (graphRunner) Run(_ context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if req.Payload.Metadata[updatesFlag] == "1" {
		if err := emit.Native(nativeUpdates, map[string]any{"ns": []string{"sub:1"}, "node": "inner", "update": map[string]any{"step": 1}}); err != nil {
			return err
		}
		if err := emit.Native(nativeUpdates, map[string]any{"ns": []string{}, "node": "sub", "update": map[string]any{"step": 2}}); err != nil {
			return err
		}
	}
	if err := emit.Native(nativeCustom, map[string]any{"progress": 0.5}); err != nil {
		return err
	}
	if err := emit.Native("something.else", map[string]any{"x": 1}); err != nil {
		return err
	}
	if err := emit.Text("done"); err != nil {
		return err
	}
	return emit.MessageDone("done")
}

func TestUpdatesCustomAndSubgraphs(t *testing.T) {
	client, stop := inprocess.Serve(graphRunner{})
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "graph", Framework: "langgraph", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{New(Config{Runtime: rt})}})
	e := &env{t: t, rt: rt, url: apitest.Serve(t, r, rt, stop).URL}
	type part struct {
		Event string
		Data  any
	}
	parts := func(evs []sseEvent) []part {
		var out []part
		for _, ev := range evs[1:] {
			out = append(out, part{ev.Event, ev.Data})
		}
		return out
	}
	modes := `"stream_mode":["updates","custom"]`
	_, evs := e.stream("POST", "/runs/stream", runBody("graph", "go", modes))
	want := []part{
		{"updates", map[string]any{"sub": map[string]any{"step": float64(2)}}},
		{"custom", map[string]any{"progress": 0.5}},
	}
	if got := parts(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("without subgraphs: %v", got)
	}
	_, evs = e.stream("POST", "/runs/stream", runBody("graph", "go", modes, `"stream_subgraphs":true`))
	want = append([]part{{"updates|sub:1", map[string]any{"inner": map[string]any{"step": float64(1)}}}}, want...)
	if got := parts(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("with subgraphs: %v", got)
	}
}
