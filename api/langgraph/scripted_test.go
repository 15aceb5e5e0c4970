package langgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
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
	if len(req.Payload.InputItems) == 1 {
		// A state update: this graph's channels take the values as given (the bridge has
		// the graph apply them); "fail" is a node it does not have.
		var u struct {
			Type   string         `json:"type"`
			Values map[string]any `json:"values"`
			AsNode *string        `json:"as_node"`
		}
		if err := json.Unmarshal(req.Payload.InputItems[0], &u); err != nil || u.Type != stateUpdateItem {
			return fmt.Errorf("not a state update: %s", req.Payload.InputItems[0])
		}
		if u.AsNode != nil && *u.AsNode == "fail" {
			return &pluginsdk.RunError{Code: pluginsdk.CodeInvalidRequest, Message: "cannot update the thread's state: node fail does not exist"}
		}
		return emit.StateDelta(map[string]any{valuesKey: u.Values})
	}
	if req.Payload.Metadata[updatesFlag] == "1" {
		if err := emit.Native(nativeUpdates, map[string]any{"ns": []string{"sub:1"}, "node": "inner", "update": map[string]any{"step": 1}}); err != nil {
			return err
		}
		if err := emit.Native(nativeUpdates, map[string]any{"ns": []string{}, "node": "sub", "update": map[string]any{"step": 2}}); err != nil {
			return err
		}
	}
	if modes := req.Payload.Metadata[modesFlag]; modes != "" {
		for _, m := range strings.Split(modes, ",") {
			for _, ns := range [][]string{{"sub:1"}, {}} {
				if err := emit.Native(nativePart, map[string]any{"mode": m, "ns": ns, "data": map[string]any{"mode": m, "depth": len(ns)}}); err != nil {
					return err
				}
			}
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
	if err := emit.MessageDone("done"); err != nil {
		return err
	}
	// The bridge reports the final state's channels other than messages; this graph's
	// topic channel is what the input's topic key said.
	if in := req.Payload.Metadata[inputFlag]; in != "" {
		var v map[string]any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			return err
		}
		return emit.StateDelta(map[string]any{valuesKey: map[string]any{"topic": v["topic"], "steps": 2}})
	}
	return nil
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

func newGraphEnv(t *testing.T) *env {
	t.Helper()
	client, stop := inprocess.Serve(graphRunner{})
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "graph", Framework: "langgraph", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{New(Config{Runtime: rt})}})
	return &env{t: t, rt: rt, url: apitest.Serve(t, r, rt, stop).URL}
}

// The tasks, checkpoints and debug modes are asked of the bridge for the run (and only
// those asked), and its parts stream under the mode's name, with |ns for subgraphs.
func TestForwardedStreamModes(t *testing.T) {
	e := newGraphEnv(t)
	for _, tc := range []struct {
		extra string
		want  []string
	}{
		{`"stream_mode":["tasks"]`, []string{"tasks"}},
		{`"stream_mode":["checkpoints","debug"]`, []string{"checkpoints", "debug"}},
		{`"stream_mode":"events"`, []string{"events"}},
		{`"stream_mode":["debug","tasks"],"stream_subgraphs":true`, []string{"debug|sub:1", "debug", "tasks|sub:1", "tasks"}},
	} {
		_, evs := e.stream("POST", "/runs/stream", runBody("graph", "go", tc.extra))
		var got []string
		for _, ev := range evs[1:] {
			got = append(got, ev.Event)
			d := ev.Data.(map[string]any)
			mode, _, sub := strings.Cut(ev.Event, "|")
			if d["mode"] != mode || (d["depth"] == float64(1)) != sub {
				t.Fatalf("%s: part %s has %v", tc.extra, ev.Event, d)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: parts %v, want %v", tc.extra, got, tc.want)
		}
	}
}

// Input keys other than messages reach the graph, and the channels the bridge reports
// at a run's end are the thread's values (state, history, wait, the values stream, search).
func TestStateChannels(t *testing.T) {
	e := newGraphEnv(t)
	tid := e.thread(`{}`)
	v := e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("graph", "first"), http.StatusOK)
	if _, ok := v["topic"]; ok {
		t.Fatalf("a run without a topic input has one: %v", v)
	}
	body := `{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"second"}],"topic":"cats"}}`
	v = e.obj("POST", "/threads/"+tid+"/runs/wait", body, http.StatusOK)
	if v["topic"] != "cats" || v["steps"] != float64(2) || len(messages(t, v)) != 4 {
		t.Fatalf("values after the run: %v", v)
	}
	st := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	if vals := st["values"].(map[string]any); vals["topic"] != "cats" {
		t.Fatalf("state: %v", st)
	}
	hist := e.list("POST", "/threads/"+tid+"/history", `{}`, http.StatusOK)
	if len(hist) != 2 || hist[0].(map[string]any)["values"].(map[string]any)["topic"] != "cats" {
		t.Fatalf("history: %v", hist)
	}
	if _, ok := hist[1].(map[string]any)["values"].(map[string]any)["topic"]; ok {
		t.Fatalf("the first run's state has the second's channel: %v", hist[1])
	}
	found := e.list("POST", "/threads/search", `{"values":{"topic":"cats"}}`, http.StatusOK)
	if len(found) != 1 || found[0].(map[string]any)["thread_id"] != tid {
		t.Fatalf("search by values: %v", found)
	}
	if none := e.list("POST", "/threads/search", `{"values":{"topic":"dogs"}}`, http.StatusOK); len(none) != 0 {
		t.Fatalf("search by other values: %v", none)
	}
	body = `{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"third"}],"topic":"owls"},"stream_mode":"values"}`
	_, evs := e.stream("POST", "/threads/"+tid+"/runs/stream", body)
	first, last := evs[1].Data.(map[string]any), evs[len(evs)-1].Data.(map[string]any)
	if first["topic"] != "cats" || last["topic"] != "owls" || len(messages(t, last)) != 6 {
		t.Fatalf("values stream: first %v, last %v", first, last)
	}
}

// The store is not offered: its routes say so in LangGraph's error shape.
func TestStoreNotOffered(t *testing.T) {
	e := newGraphEnv(t)
	for _, r := range [][3]string{
		{"PUT", "/store/items", `{"namespace":["a"],"key":"k","value":{}}`},
		{"GET", "/store/items?key=k&namespace=a", ""},
		{"DELETE", "/store/items", `{"namespace":["a"],"key":"k"}`},
		{"POST", "/store/items/search", `{}`},
		{"POST", "/store/namespaces", `{}`},
	} {
		e.fail(r[0], r[1], r[2], http.StatusNotImplemented, "store is not offered")
	}
}

// A state update is a run of the graph (which applies it), the thread's newest
// checkpoint (source "update"), not listed among its runs.
func TestUpdateState(t *testing.T) {
	e := newGraphEnv(t)
	tid := e.thread(`{}`)
	e.obj("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"go"}],"topic":"cats"}}`, http.StatusOK)
	before := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	out := e.obj("POST", "/threads/"+tid+"/state", `{"values":{"topic":"owls"},"as_node":"sub"}`, http.StatusOK)
	cp := out["checkpoint"].(map[string]any)
	if cp["thread_id"] != tid || str(cp["checkpoint_id"]) == "" {
		t.Fatalf("update answer: %v", out)
	}
	st := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	vals := st["values"].(map[string]any)
	if vals["topic"] != "owls" || len(messages(t, vals)) != 2 {
		t.Fatalf("state after the update: %v", st)
	}
	if st["checkpoint"].(map[string]any)["checkpoint_id"] != cp["checkpoint_id"] ||
		st["metadata"].(map[string]any)["source"] != "update" ||
		st["parent_checkpoint"].(map[string]any)["checkpoint_id"] != before["checkpoint"].(map[string]any)["checkpoint_id"] {
		t.Fatalf("the update's checkpoint: %v", st)
	}
	if hist := e.list("POST", "/threads/"+tid+"/history", `{}`, http.StatusOK); len(hist) != 2 {
		t.Fatalf("history: %v", hist)
	}
	if runs := e.list("GET", "/threads/"+tid+"/runs", "", http.StatusOK); len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	old := str(before["checkpoint"].(map[string]any)["checkpoint_id"])
	for _, tc := range []struct {
		body   string
		status int
		says   string
	}{
		{`{}`, 422, "values is required"},
		{`{"values":[1]}`, 422, "must be an object"},
		{`{"values":{"topic":"x"},"checkpoint_id":"nope"}`, 404, "Checkpoint nope not found"},
		{`{"values":{"topic":"x"},"as_node":"fail"}`, 422, "node fail does not exist"},
	} {
		e.fail("POST", "/threads/"+tid+"/state", tc.body, tc.status, tc.says)
	}
	e.fail("POST", "/threads/nope/state", `{"values":{}}`, http.StatusNotFound, "not found")
	// The failed update left no checkpoint and no error.
	if th := e.obj("GET", "/threads/"+tid, "", http.StatusOK); th["status"] != "idle" || th["error"] != nil {
		t.Fatalf("thread after a failed update: %v", th)
	}
	if hist := e.list("POST", "/threads/"+tid+"/history", `{}`, http.StatusOK); len(hist) != 2 {
		t.Fatalf("history after a failed update: %v", hist)
	}
	// The latest checkpoint named explicitly is fine.
	latest := str(e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["checkpoint"].(map[string]any)["checkpoint_id"])
	e.obj("POST", "/threads/"+tid+"/state", `{"values":{"topic":"emus"},"checkpoint":{"checkpoint_id":"`+latest+`"}}`, http.StatusOK)
	if v := e.obj("GET", "/threads/"+tid, "", http.StatusOK)["values"].(map[string]any); v["topic"] != "emus" {
		t.Fatalf("thread values: %v", v)
	}
	// An earlier checkpoint's update forks the thread there: the run's messages stay, the
	// channels are that checkpoint's with the update.
	e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("graph", "more"), http.StatusOK)
	e.obj("POST", "/threads/"+tid+"/state", `{"values":{"topic":"yaks"},"checkpoint_id":"`+old+`"}`, http.StatusOK)
	st = e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	if vals := st["values"].(map[string]any); vals["topic"] != "yaks" || len(messages(t, vals)) != 2 ||
		st["parent_checkpoint"].(map[string]any)["checkpoint_id"] != old {
		t.Fatalf("state after updating an earlier checkpoint: %v", st)
	}
}

// A copy has the thread's values, checkpoints and metadata, and no runs; the original
// is untouched.
func TestCopyThread(t *testing.T) {
	e := newGraphEnv(t)
	tid := e.thread(`{"metadata":{"suite":"copy"}}`)
	e.obj("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"one","id":"given-1"}],"topic":"cats"}}`, http.StatusOK)
	e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("graph", "two"), http.StatusOK)
	e.obj("POST", "/threads/"+tid+"/state", `{"values":{"topic":"owls"}}`, http.StatusOK)
	orig := e.obj("GET", "/threads/"+tid, "", http.StatusOK)
	cp := e.obj("POST", "/threads/"+tid+"/copy", "", http.StatusOK)
	cid := str(cp["thread_id"])
	if cid == "" || cid == tid || cp["metadata"].(map[string]any)["suite"] != "copy" || cp["status"] != "idle" {
		t.Fatalf("copy: %v", cp)
	}
	ov, cv := orig["values"].(map[string]any), cp["values"].(map[string]any)
	if cv["topic"] != "owls" || !reflect.DeepEqual(messages(t, cv), messages(t, ov)) {
		t.Fatalf("copied values %v, original %v", cv, ov)
	}
	if first := cv["messages"].([]any)[0].(map[string]any); first["id"] != "given-1" {
		t.Fatalf("the client's message id: %v", first)
	}
	hist := e.list("POST", "/threads/"+cid+"/history", `{}`, http.StatusOK)
	if len(hist) != 3 || hist[0].(map[string]any)["metadata"].(map[string]any)["source"] != "update" ||
		hist[2].(map[string]any)["values"].(map[string]any)["topic"] != "cats" {
		t.Fatalf("copied history: %v", hist)
	}
	if runs := e.list("GET", "/threads/"+cid+"/runs", "", http.StatusOK); len(runs) != 0 {
		t.Fatalf("copied runs: %v", runs)
	}
	if again := e.obj("GET", "/threads/"+tid, "", http.StatusOK); !reflect.DeepEqual(again["values"], orig["values"]) {
		t.Fatalf("original after the copy: %v", again)
	}
	// The copy goes on on its own.
	v := e.obj("POST", "/threads/"+cid+"/runs/wait", runBody("graph", "three"), http.StatusOK)
	if len(messages(t, v)) != 6 || v["topic"] != "owls" {
		t.Fatalf("a run on the copy: %v", v)
	}
	if len(messages(t, e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["values"])) != 4 {
		t.Fatal("the run on the copy changed the original")
	}
	e.fail("POST", "/threads/nope/copy", "", http.StatusNotFound, "not found")
}

// A run from an earlier checkpoint forks the thread there: its values start from that
// checkpoint's, the checkpoints after it stay in history, the fork's parent is it.
func TestRunFromCheckpoint(t *testing.T) {
	e := newGraphEnv(t)
	tid := e.thread(`{}`)
	wait := func(body string) map[string]any {
		return e.obj("POST", "/threads/"+tid+"/runs/wait", body, http.StatusOK)
	}
	wait(`{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"one"}],"topic":"cats"}}`)
	first := str(e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["checkpoint"].(map[string]any)["checkpoint_id"])
	wait(`{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"two"}],"topic":"dogs"}}`)
	wait(runBody("graph", "three"))
	v := wait(`{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"alt"}]},"checkpoint_id":"` + first + `"}`)
	if got := messages(t, v); !reflect.DeepEqual(got, [][2]string{{"human", "one"}, {"ai", "done"}, {"human", "alt"}, {"ai", "done"}}) || v["topic"] != "cats" {
		t.Fatalf("values of the fork: %v", v)
	}
	hist := e.list("POST", "/threads/"+tid+"/history", `{}`, http.StatusOK)
	if len(hist) != 4 {
		t.Fatalf("history: %d states", len(hist))
	}
	newest, older := hist[0].(map[string]any), hist[1].(map[string]any)
	if newest["parent_checkpoint"].(map[string]any)["checkpoint_id"] != first {
		t.Fatalf("the fork's parent: %v", newest["parent_checkpoint"])
	}
	if len(messages(t, older["values"])) != 6 || older["values"].(map[string]any)["topic"] != "dogs" {
		t.Fatalf("the checkpoint before the fork: %v", older["values"])
	}
	// The thread goes on from the fork; the same checkpoint forks again (a checkpoint object).
	if got := messages(t, wait(runBody("graph", "after"))); len(got) != 6 || got[4][1] != "after" {
		t.Fatalf("after the fork: %v", got)
	}
	v = wait(`{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"again"}]},"checkpoint":{"checkpoint_id":"` + first + `"}}`)
	if got := messages(t, v); len(got) != 4 || got[2][1] != "again" {
		t.Fatalf("second fork: %v", got)
	}
	// Without input, the turn after the checkpoint on the thread's branch runs again from
	// it (a regenerate): here the last fork's.
	v = wait(`{"assistant_id":"graph","checkpoint_id":"` + first + `"}`)
	if got := messages(t, v); !reflect.DeepEqual(got, [][2]string{{"human", "one"}, {"ai", "done"}, {"human", "again"}, {"ai", "done"}}) || v["topic"] != "cats" {
		t.Fatalf("regenerated: %v", v)
	}
	e.fail("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"graph","checkpoint_id":"`+str(e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["checkpoint"].(map[string]any)["checkpoint_id"])+`"}`,
		http.StatusUnprocessableEntity, "input or command.resume is required")
	// On a thread that never forked, the next run's message and input keys run again.
	tid = e.thread(`{}`)
	wait(`{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"one"}],"topic":"cats"}}`)
	first = str(e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["checkpoint"].(map[string]any)["checkpoint_id"])
	wait(`{"assistant_id":"graph","input":{"messages":[{"role":"user","content":"two","id":"mine-2"}],"topic":"dogs"}}`)
	v = wait(`{"assistant_id":"graph","checkpoint_id":"` + first + `"}`)
	list := v["messages"].([]any)
	if got := messages(t, v); len(got) != 4 || got[2][1] != "two" || v["topic"] != "dogs" || list[2].(map[string]any)["id"] != "mine-2" {
		t.Fatalf("regenerated on a linear thread: %v", v)
	}
}
