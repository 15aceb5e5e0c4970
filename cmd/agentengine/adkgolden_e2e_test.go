package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recordADK rewrites testdata/adk_api_server/ from a real `adk api_server` (google-adk
// of $PYTHON) serving the same agent: go test ./cmd/agentengine -run TestADKEventsMatchADK -record-adk
var recordADK = flag.Bool("record-adk", false, "record the ADK event goldens from adk api_server")

// adkScenario is a sequence of ADK web requests; its result is every event (and session)
// they returned, in order.
type adkScenario struct {
	name string
	run  func(c adkClient) []any
	// dev: recorded from `adk web` (the dev UI's routes), not `adk api_server`.
	dev bool
}

// adkClient talks to an ADK web API (adk api_server or agentengine) for one app.
type adkClient struct {
	t    *testing.T
	base string
	app  string
}

func (c adkClient) do(method, path string, body any) []byte {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return out
}

func (c adkClient) session(id string) {
	c.do(http.MethodPost, "/apps/"+c.app+"/users/u1/sessions/"+id, map[string]any{})
}

func (c adkClient) message(session, text string, streaming bool) map[string]any {
	return map[string]any{"appName": c.app, "userId": "u1", "sessionId": session, "streaming": streaming,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}}
}

func (c adkClient) run(session, text string) []any {
	var evs []any
	if err := json.Unmarshal(c.do(http.MethodPost, "/run", c.message(session, text, false)), &evs); err != nil {
		c.t.Fatal(err)
	}
	return evs
}

func (c adkClient) runSSE(session, text string) []any {
	c.t.Helper()
	body := c.do(http.MethodPost, "/run_sse", c.message(session, text, true))
	var evs []any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				c.t.Fatalf("run_sse data %q: %v", data, err)
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

func (c adkClient) get(path string) any {
	var v any
	if err := json.Unmarshal(c.do(http.MethodGet, strings.ReplaceAll(path, "{app}", c.app), nil), &v); err != nil {
		c.t.Fatal(err)
	}
	return v
}

func (c adkClient) getSession(id string) any {
	var s any
	if err := json.Unmarshal(c.do(http.MethodGet, "/apps/"+c.app+"/users/u1/sessions/"+id, nil), &s); err != nil {
		c.t.Fatal(err)
	}
	return s
}

func adkScenarios() []adkScenario {
	return []adkScenario{
		{name: "run_text", run: func(c adkClient) []any { c.session("s1"); return c.run("s1", "hello there") }},
		{name: "run_tool", run: func(c adkClient) []any { c.session("s2"); return c.run("s2", "weather city=Paris") }},
		{name: "run_sse_streaming", run: func(c adkClient) []any { c.session("s3"); return c.runSSE("s3", "hello there") }},
		{name: "run_sse_tool", run: func(c adkClient) []any { c.session("s4"); return c.runSSE("s4", "weather city=Berlin") }},
		{name: "run_confirmation", run: func(c adkClient) []any { c.session("s6"); return c.run("s6", "delete file path=/tmp/x") }},
		{name: "session", run: func(c adkClient) []any {
			c.session("s5")
			c.run("s5", "hello there")
			c.run("s5", "weather city=Rome")
			return []any{c.getSession("s5")}
		}},
		// The agent graph ADK's dev UI draws, computed from the loaded agent.
		{name: "dev_graph", dev: true, run: func(c adkClient) []any {
			return []any{c.get("/dev/apps/{app}/build_graph"), c.get("/dev/apps/{app}/build_graph_image?dark_mode=false"),
				c.get("/dev/apps/{app}/build_graph_image?dark_mode=true")}
		}},
	}
}

// TestADKEventsMatchADKAPIServer runs examples/adk-assistant under agentengine and
// compares its ADK web events, field by field, with those `adk api_server` wrote for the
// same agent and requests (testdata/adk_api_server/, recorded with -record-adk): ids,
// invocation ids, times and the app's name aside (call ids are compared by where they
// recur).
func TestADKEventsMatchADKAPIServer(t *testing.T) {
	py := needPython(t)
	golden := filepath.Join("testdata", "adk_api_server")
	if *recordADK {
		recordADKGoldens(t, py, golden, "api_server", false)
		recordADKGoldens(t, py, golden, "web", true)
	}
	dir := copyPyProject(t, "../../examples/adk-assistant", "")
	s := startPython(t, dir)
	c := adkClient{t: t, base: s.url, app: modelOf(t, dir)}
	for _, sc := range adkScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			c.t = t
			b, err := os.ReadFile(filepath.Join(golden, sc.name+".json"))
			if err != nil {
				t.Fatalf("%v (record with -record-adk)", err)
			}
			var want []any
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			got := sc.run(c)
			w, g := normalizeADK(want), normalizeADK(got)
			if diffs := diffJSON(w, g, "$"); len(diffs) > 0 {
				gj, _ := json.MarshalIndent(g, "", "  ")
				t.Fatalf("events differ from adk api_server's (want, got):\n%s\nagentengine's events:\n%s", strings.Join(diffs, "\n"), gj)
			}
		})
	}
}

// normalizeADK drops what differs by nature between two servers (ids, times, the app's
// name) and renames call ids by first appearance, so that their reuse is compared.
func normalizeADK(evs []any) any {
	ids := map[string]string{}
	rename := func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("<id%d>", len(ids)+1)
		}
		return ids[id]
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				switch k {
				case "timestamp", "lastUpdateTime", "invocationId", "appName":
					continue
				case "id":
					if key == "functionCall" || key == "functionResponse" || key == "originalFunctionCall" {
						out[k] = rename(fmt.Sprint(x[k]))
					}
					continue
				case "requestedToolConfirmations":
					m := map[string]any{}
					for id, c := range x[k].(map[string]any) {
						m[rename(id)] = walk(c, id)
					}
					out[k] = m
					continue
				case "longRunningToolIds":
					l := []any{}
					for _, id := range x[k].([]any) {
						l = append(l, rename(fmt.Sprint(id)))
					}
					out[k] = l
					continue
				}
				out[k] = walk(x[k], k)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i := range x {
				out[i] = walk(x[i], key)
			}
			return out
		}
		return v
	}
	return walk(evs, "")
}

// diffJSON lists where a and b (decoded JSON) differ, by path.
func diffJSON(a, b any, path string) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		var out []string
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			out = append(out, diffJSON(x[k], y[k], path+"."+k)...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		var out []string
		for i := range x {
			out = append(out, diffJSON(x[i], y[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return []string{fmt.Sprintf("%s: %s != %s", path, aj, bj)}
}

// recordADKGoldens serves the example with `adk <server>` (api_server, or web for the dev
// routes; the agent as an app package named "assistant", sessions in memory) and writes
// each of its scenarios' answers.
func recordADKGoldens(t *testing.T, py, dir, server string, dev bool) {
	t.Helper()
	agents := t.TempDir()
	app := filepath.Join(agents, "assistant")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent.py", "offline_model.py"} {
		b, err := os.ReadFile(filepath.Join("../../examples/adk-assistant", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(app, "__init__.py"), []byte("from . import agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(py, "-m", "google.adk.cli", server, "--port", fmt.Sprint(port), "--session_service_uri", "memory://", agents)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+app, "OPENAI_API_KEY=")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); _ = cmd.Wait() }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(base + "/list-apps"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("adk api_server did not start:\n%s", logs.String())
		}
	}
	c := adkClient{t: t, base: base, app: "assistant"}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	version, _ := exec.Command(py, "-c", "import google.adk; print(google.adk.__version__)").Output()
	for _, sc := range adkScenarios() {
		if sc.dev != dev {
			continue
		}
		b, err := json.MarshalIndent(sc.run(c), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sc.name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readme := "Events written by `adk api_server` (dev_*.json: `adk web`), google-adk " + strings.TrimSpace(string(version)) +
		", for examples/adk-assistant,\nrecorded by `go test ./cmd/agentengine -run TestADKEventsMatchADKAPIServer -record-adk`.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
}
