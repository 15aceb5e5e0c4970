package adkweb

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/session/memory"
)

// adkApp is examples/adk-assistant's agent name.
const adkApp = "adk-assistant"

// newADKEnv serves examples/adk-assistant (the offline scripted model) through its real
// Python runner, with a Go agent beside it. The Python is $AGENTENGINE_PYTHON, whose
// environment has google-adk with its eval extras (the test environment's pins); without
// one the test skips, and fails in CI.
// extra names modules the test needs beside google.adk (the eval extras).
func newADKEnv(t *testing.T, extra ...string) *env {
	t.Helper()
	py := os.Getenv("AGENTENGINE_PYTHON")
	if py == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("AGENTENGINE_PYTHON is not set")
		}
		t.Skip("set AGENTENGINE_PYTHON to a Python with google-adk[eval] to run the ADK runner")
	}
	if out, err := exec.Command(py, "-c", "import "+strings.Join(append([]string{"google.adk"}, extra...), ", ")).CombinedOutput(); err != nil {
		msg := py + " lacks google-adk or " + strings.Join(extra, ", ") + ": " + string(out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	// No judge model: the offline run must refuse the LLM-judged metrics itself.
	for _, k := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
	}
	dir := filepath.Join(t.TempDir(), adkApp)
	copyDir(t, "../../examples/adk-assistant", dir)
	f, err := os.OpenFile(filepath.Join(dir, "agentengine.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("python: " + py + "\n")
	_ = f.Close()
	// An eval set as ADK keeps it, a file in the agent's directory.
	if err := os.WriteFile(filepath.Join(dir, "greetings.evalset.json"), []byte(`{"eval_set_id":"greetings","name":"Greetings","eval_cases":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sdk, _ := filepath.Abs("../../pluginsdk/python/src")
	adapters, _ := filepath.Abs("../../adapters")
	l, err := p.RunnerLaunch(context.Background(), project.BuildOptions{PythonPath: []string{sdk, adapters}})
	if err != nil {
		t.Fatal(err)
	}
	sup := runnerproc.New(runnerproc.Config{Name: adkApp, Command: l.Command, Dir: l.Dir, Env: l.Env,
		StartTimeout: 2 * time.Minute, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr})})
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: adkApp, Framework: "adk", Runner: sup}}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, UserHeader: headerUser, Surfaces: []api.Surface{New(Config{Runtime: rt, Version: "test"})}})
	srv := apitest.Serve(t, r, rt, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sup.Close(ctx)
	})
	return &env{t: t, rt: rt, srv: srv}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == "__pycache__" || d.Name() == ".venv" || d.Name() == ".agentengine" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// detailOf checks FastAPI's error shape and returns its detail (a string, or the
// validation errors' JSON).
func detailOf(t *testing.T, what string, b []byte) string {
	t.Helper()
	var d struct {
		Detail json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(b, &d); err != nil || len(d.Detail) == 0 {
		t.Fatalf("%s: not FastAPI's error shape: %s", what, b)
	}
	var s string
	if json.Unmarshal(d.Detail, &s) == nil {
		return s
	}
	return string(d.Detail)
}

// TestEvals: the dev UI's Eval tab on an ADK agent: an eval set created, a session of
// the agent added to it as a case (its invocations as ADK converts them), run with ADK's
// evaluator in the agent's runner (pass on the scripted model's own answers), the result
// stored and served; the metrics described; bad input refused in ADK's shape; the LLM-
// judged metrics refused with the reason when there is no judge model.
func TestEvals(t *testing.T) {
	e := newADKEnv(t, "pandas", "rouge_score", "tabulate")
	dev := "/dev/apps/" + adkApp

	// Create: the UI's body; then the refusals.
	set := e.obj("POST", dev+"/eval-sets", `{"eval_set":{"eval_set_id":"weather","model_execution_mode":"live","tool_execution_mode":"live","eval_cases":[]}}`, http.StatusOK)
	if set["eval_set_id"] != "weather" || set["eval_cases"] == nil {
		t.Fatalf("created eval set = %v", set)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", dev + "/eval-sets", `{"eval_set":{"eval_set_id":"weather"}}`, 400, "EvalSet weather already exists for app adk-assistant."},
		{"POST", dev + "/eval-sets", `{"eval_set":{"eval_set_id":"no-dash"}}`, 400, "Invalid Eval Set ID. Eval Set ID should have the `^[a-zA-Z0-9_]+$` format"},
		{"POST", dev + "/eval-sets", `{"eval_set":{}}`, 422, `"eval_set_id"`},
		{"POST", dev + "/eval-sets", `[]`, 422, "valid dictionary"},
		{"POST", dev + "/eval-sets", `{`, 422, ""},
		{"POST", "/dev/apps/nope/eval-sets", `{"eval_set":{"eval_set_id":"x"}}`, 404, "App not found: nope"},
		{"GET", dev + "/eval_sets/missing/evals", "", 400, "Eval set `missing` not found."},
		{"GET", dev + "/eval-sets/missing", "", 404, "Eval set `missing` not found."},
		{"POST", dev + "/eval_sets/weather/add_session", `{"evalId":"x","sessionId":"nosuch","userId":"u1"}`, 404, "Session not found"},
		{"POST", dev + "/eval_sets/missing/add_session", `{"evalId":"x","sessionId":"s","userId":"u1"}`, 404, "Eval set `missing` not found."},
		{"POST", dev + "/eval_sets/weather/add_session", `{"sessionId":"s","userId":"u1"}`, 422, `"evalId"`},
		{"GET", dev + "/eval_results/nope", "", 404, "Eval set result `nope` not found."},
		{"GET", dev + "/eval_sets/weather/evals/nope", "", 404, "Eval set `weather` or Eval `nope` not found."},
	} {
		status, _, b := e.do(tc.method, tc.path, tc.body)
		if status != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, status, tc.status, b)
			continue
		}
		if d := detailOf(t, tc.path, b); !strings.Contains(d, tc.want) {
			t.Errorf("%s %s: detail %q, want %q", tc.method, tc.path, d, tc.want)
		}
	}
	// The stored set and the agent directory's file.
	if got := e.json("GET", dev+"/eval_sets", "", 200); mustJSONString(got) != `["greetings","weather"]` {
		t.Errorf("eval_sets = %v", got)
	}
	if got := e.obj("GET", "/apps/"+adkApp+"/eval-sets", "", 200); mustJSONString(got) != `{"evalSetIds":["greetings","weather"]}` {
		t.Errorf("1.x eval-sets = %v", got)
	}
	if got := e.obj("GET", dev+"/eval-sets/greetings", "", 200); got["name"] != "Greetings" {
		t.Errorf("the file's eval set = %v", got)
	}
	if status, _, b := e.do("POST", dev+"/eval-sets", `{"eval_set":{"eval_set_id":"greetings"}}`); status != 400 {
		t.Errorf("creating over the file's set: %d %s", status, b)
	}
	if status, _, b := e.do("DELETE", dev+"/eval-sets/greetings", ""); status != 400 || !strings.Contains(detailOf(t, "delete file", b), "greetings.evalset.json") {
		t.Errorf("deleting the file's set: %d %s", status, b)
	}

	// A session with a tool call, added as a case.
	sid := str(e.obj("POST", "/apps/"+adkApp+"/users/u1/sessions", `{}`, 200)["id"])
	b, _ := json.Marshal(map[string]any{"appName": adkApp, "userId": "u1", "sessionId": sid,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "weather in Paris"}}}})
	e.json("POST", "/run", string(b), 200)
	add := `{"evalId":"paris","sessionId":"` + sid + `","userId":"u1"}`
	e.json("POST", dev+"/eval_sets/weather/add_session", add, 200)
	status, _, body := e.do("POST", dev+"/eval-sets/weather/add-session", add)
	if d := detailOf(t, "add twice", body); status != 400 || d != "Eval id `paris` already exists in `weather` eval set." {
		t.Errorf("adding the case twice: %d %q", status, d)
	}
	if got := e.json("GET", dev+"/eval_sets/weather/evals", "", 200); mustJSONString(got) != `["paris"]` {
		t.Errorf("evals = %v", got)
	}
	cs := e.obj("GET", dev+"/eval_sets/weather/evals/paris", "", 200)
	conv, _ := cs["conversation"].([]any)
	if cs["evalId"] != "paris" || len(conv) != 1 {
		t.Fatalf("eval case = %s", mustJSON(cs))
	}
	inv := conv[0].(map[string]any)
	if s := mustJSONString(inv["userContent"]); !strings.Contains(s, "weather in Paris") {
		t.Errorf("invocation's user content = %s", s)
	}
	if s := mustJSONString(inv["intermediateData"]); !strings.Contains(s, `"get_weather"`) {
		t.Errorf("invocation's tool calls = %s", s)
	}
	if s := mustJSONString(cs["sessionInput"]); !strings.Contains(s, `"appName":"adk-assistant"`) || !strings.Contains(s, `"userId":"u1"`) {
		t.Errorf("session input = %s", s)
	}

	// Metrics, as ADK's registry describes them.
	mi := e.obj("GET", dev+"/metrics-info", "", 200)
	names := map[string]bool{}
	for _, m := range mi["metricsInfo"].([]any) {
		names[str(m.(map[string]any)["metricName"])] = true
	}
	for _, n := range []string{"tool_trajectory_avg_score", "response_match_score", "final_response_match_v2"} {
		if !names[n] {
			t.Errorf("metrics-info lacks %s: %v", n, names)
		}
	}

	// Run: ADK's evaluator on the agent; the offline model repeats itself, so both pass.
	run := e.obj("POST", dev+"/eval-sets/weather/run", `{"eval_case_ids":["paris"],"eval_metrics":[
		{"metricName":"tool_trajectory_avg_score","threshold":1.0},{"metricName":"response_match_score","threshold":0.8}]}`, 200)
	results, _ := run["runEvalResults"].([]any)
	if len(results) != 1 {
		t.Fatalf("run = %s", mustJSON(run))
	}
	r := results[0].(map[string]any)
	if r["evalId"] != "paris" || r["evalSetId"] != "weather" || r["finalEvalStatus"] != float64(1) {
		t.Errorf("run result = %s", mustJSON(r))
	}
	scores := map[string]any{}
	for _, m := range r["overallEvalMetricResults"].([]any) {
		mm := m.(map[string]any)
		scores[str(mm["metricName"])] = mm["score"]
	}
	if scores["tool_trajectory_avg_score"] != float64(1) || scores["response_match_score"] != float64(1) {
		t.Errorf("scores = %v", scores)
	}
	// The session the evaluation ran the agent in is kept, as adk web keeps it: the UI
	// opens it from the result.
	inf := e.obj("GET", "/apps/"+adkApp+"/users/"+str(r["userId"])+"/sessions/"+str(r["sessionId"]), "", 200)
	if s := mustJSONString(inf["events"]); !strings.Contains(s, "weather in Paris") || !strings.Contains(s, `"get_weather"`) {
		t.Errorf("inference session's events = %.600s", s)
	}

	// The stored result, listed and served.
	ids := e.obj("GET", dev+"/eval-results", "", 200)["evalResultIds"].([]any)
	if len(ids) != 1 || !strings.HasPrefix(str(ids[0]), adkApp+"_weather_") {
		t.Fatalf("eval results = %v", ids)
	}
	res := e.obj("GET", dev+"/eval_results/"+str(ids[0]), "", 200)
	if res["evalSetId"] != "weather" || res["evalSetResultId"] != ids[0] || len(res["evalCaseResults"].([]any)) != 1 {
		t.Errorf("eval result = %.400s", mustJSON(res))
	}
	if got := e.json("GET", "/apps/"+adkApp+"/eval_results", "", 200); mustJSONString(got) != mustJSONString(ids) {
		t.Errorf("1.x eval_results = %v", got)
	}

	// Refused runs, in ADK's shape.
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"eval_metrics":[{"metricName":"final_response_match_v2","threshold":0.5}]}`, 400, "the metric final_response_match_v2 is judged by a language model"},
		{`{"eval_metrics":[{"metricName":"no_such_metric","threshold":0.5}]}`, 400, "unknown metric 'no_such_metric'"},
		{`{"eval_metrics":[]}`, 400, "choose at least one metric"},
		{`{"eval_case_ids":["nope"],"eval_metrics":[{"metricName":"tool_trajectory_avg_score","threshold":1}]}`, 404, "Eval case `nope` not found in eval set `weather`."},
		{`{}`, 422, `"eval_metrics"`},
		{`{"eval_metrics":{}}`, 422, "valid list"},
	} {
		status, _, b := e.do("POST", dev+"/eval-sets/weather/run", tc.body)
		if status != tc.status {
			t.Errorf("run %s: %d, want %d: %s", tc.body, status, tc.status, b)
			continue
		}
		if d := detailOf(t, tc.body, b); !strings.Contains(d, tc.want) {
			t.Errorf("run %s: detail %q, want %q", tc.body, d, tc.want)
		}
	}
	if status, _, b := e.do("POST", dev+"/eval_sets/missing/run_eval", `{"eval_metrics":[]}`); status != 400 || detailOf(t, "run missing", b) != "Eval set `missing` not found." {
		t.Errorf("run of a missing set: %d %s", status, b)
	}

	// Edit, delete the case, delete the set.
	cs["conversation"] = conv
	upd, _ := json.Marshal(cs)
	e.json("PUT", dev+"/eval_sets/weather/evals/paris", string(upd), 200)
	if status, _, b := e.do("PUT", dev+"/eval_sets/weather/evals/other", string(upd)); status != 400 ||
		detailOf(t, "put", b) != "Eval id in EvalCase should match the eval id in the API route." {
		t.Errorf("update with another id: %d %s", status, b)
	}
	e.json("DELETE", dev+"/eval_sets/weather/evals/paris", "", 200)
	if got := e.json("GET", dev+"/eval_sets/weather/evals", "", 200); mustJSONString(got) != `[]` {
		t.Errorf("evals after delete = %v", got)
	}
	e.json("DELETE", dev+"/eval-sets/weather", "", 200)
	if status, _, _ := e.do("DELETE", dev+"/eval-sets/weather", ""); status != 404 {
		t.Errorf("deleting twice: %d", status)
	}
	if got := e.obj("GET", dev+"/eval-sets", "", 200); mustJSONString(got) != `{"evalSetIds":["greetings"]}` {
		t.Errorf("eval-sets after delete = %v", got)
	}
}

func mustJSONString(v any) string { return string(mustJSON(v)) }
