package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// twoCalls is an agent whose turn makes two model calls with a tool call between them,
// each reporting its usage, as a framework bridge reports each model call's.
type twoCalls struct{}

func (twoCalls) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "two-calls", Framework: "go", Capabilities: pluginsdk.Capabilities{}}
}

func (twoCalls) Run(_ context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	steps := []func() error{
		func() error { return emit.Reasoning("planning") },
		func() error { return emit.ToolCall("call_1", "lookup", `{"q":"x"}`) },
		func() error {
			return emit.UsageOf("model-a", pluginsdk.Usage{InputTokens: 10, OutputTokens: 4, ReasoningTokens: 1, CachedTokens: 3})
		},
		func() error { return emit.ToolResult("call_1", "lookup", "42", false) },
		func() error { return emit.Text("the answer is 42") },
		func() error { return emit.UsageOf("model-a", pluginsdk.Usage{InputTokens: 20, OutputTokens: 6}) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// The usage a turn's model calls report, summed, reaches every surface: Responses (the
// answer and the stored response), Chat Completions (the object and the stream's last
// chunk), ADK's usageMetadata, and the action API (RunAgent and the stored run_status).
func TestUsageReachesEverySurface(t *testing.T) {
	client, stop := inprocess.Serve(twoCalls{})
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "agent", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		stop()
	})
	act, err := actions.New(actions.Config{Runtime: rt, SessionBackend: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{
		openai.New(openai.Config{Runtime: rt}), adkweb.New(adkweb.Config{Runtime: rt}), act}}))
	defer srv.Close()
	post := func(path, body string) []byte {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b.String())
		}
		return []byte(b.String())
	}
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return []byte(b.String())
	}
	pick := func(raw []byte, path ...string) any {
		t.Helper()
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		for _, k := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				v = x[len(x)-1] // "last": the last element
			}
		}
		if v == nil {
			t.Fatalf("nothing at %v in %s", path, raw)
		}
		return v
	}
	got := map[string]any{}

	resp := post("/v1/responses", `{"model":"agent","input":"go"}`)
	got["responses"] = pick(resp, "usage")
	id := pick(resp, "id").(string)
	got["responses_stored"] = pick(get("/v1/responses/"+id), "usage")

	got["chat"] = pick(post("/v1/chat/completions", `{"model":"agent","messages":[{"role":"user","content":"go"}]}`), "usage")
	stream := post("/v1/chat/completions", `{"model":"agent","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`)
	var last string
	for _, line := range strings.Split(string(stream), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			last = d
		}
	}
	got["chat_stream_last_chunk"] = pick([]byte(last), "usage")

	sess := post("/apps/agent/users/u/sessions", `{}`)
	sid := pick(sess, "id").(string)
	got["adk_run"] = pick(post("/run", `{"appName":"agent","userId":"u","sessionId":"`+sid+`","newMessage":{"role":"user","parts":[{"text":"go"}]}}`),
		"last", "usageMetadata")

	run := post(actions.Prefix+"RunAgent", `{"AgentId":"agent","Messages":[{"role":"user","content":"go"}]}`)
	got["actions_run_agent"] = pick(run, "Data", "usage")
	asid := pick(run, "Data", "session_id").(string)
	got["actions_stored_run_status"] = pick(post(actions.Prefix+"ListSessionEvents", `{"SessionId":"`+asid+`"}`),
		"Data", "Events", "last", "Metadata", "usage")

	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "usage_surfaces.json"), append(b, '\n'), *update, "./api")
}
