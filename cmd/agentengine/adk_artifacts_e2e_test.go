package main_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPythonADKArtifacts: examples/adk-team's scribe saves, lists and loads notes with
// ADK's artifact service (tool_context.save_artifact / list_artifacts / load_artifact)
// through the real bridge; the versions land in agentengine's store per session (and per
// user for "user:" names), the events carry ADK's artifactDelta (split from the content
// on /run_sse, as ADK streams it), later turns load what earlier ones saved, and ADK's
// artifact routes serve them.
func TestPythonADKArtifacts(t *testing.T) {
	py := needPython(t)
	if out, err := exec.Command(py, "-c", "import google.adk").CombinedOutput(); err != nil {
		t.Fatalf("%s lacks google-adk:\n%s", py, out)
	}
	dir := copyPyProject(t, "../../examples/adk-team", "")
	s := startPython(t, dir)
	base := s.url + "/apps/adk-team/users/u1/sessions"
	for _, id := range []string{"s1", "s2"} {
		if resp := post(t, base+"/"+id, map[string]any{}); resp.StatusCode != http.StatusOK {
			t.Fatalf("create session %s: %d", id, resp.StatusCode)
		}
	}
	turn := func(session, text string) []map[string]any {
		t.Helper()
		resp := post(t, s.url+"/run_sse", map[string]any{
			"appName": "adk-team", "userId": "u1", "sessionId": session,
			"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}},
		})
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("run_sse: %d %s", resp.StatusCode, b)
		}
		var evs []map[string]any
		r := bufio.NewReader(resp.Body)
		for {
			ev, err := readSSE(r)
			if err == io.EOF {
				return evs
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg, ok := ev.Data["error"]; ok {
				t.Fatalf("run_sse error: %v\n%s", msg, s.logs)
			}
			if ev.Data != nil {
				evs = append(evs, ev.Data)
			}
		}
	}
	get := func(path string, v any) int {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if v != nil && resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	deltas := func(evs []map[string]any) (out []string) {
		for _, ev := range evs {
			a, _ := ev["actions"].(map[string]any)
			if d, _ := a["artifactDelta"].(map[string]any); len(d) > 0 {
				if ev["content"] != nil {
					t.Errorf("an artifactDelta event with content on /run_sse: %v", ev)
				}
				b, _ := json.Marshal(d)
				out = append(out, ev["author"].(string)+" "+string(b))
			}
		}
		return out
	}

	evs := turn("s1", `save note title=plan text="buy milk"`)
	if got := deltas(evs); len(got) != 1 || got[0] != `scribe {"plan.md":0}` {
		t.Fatalf("artifact deltas %v\n%s", got, s.logs)
	}
	if got := deltas(turn("s1", "save note title=plan text=v2")); len(got) != 1 || got[0] != `scribe {"plan.md":1}` {
		t.Fatalf("second save: deltas %v", got)
	}
	if got := deltas(turn("s1", "save note title=todo text=call shared=true")); len(got) != 1 || got[0] != `scribe {"user:todo.md":0}` {
		t.Fatalf("user save: deltas %v", got)
	}

	var names []string
	if get("/s1/artifacts", &names); strings.Join(names, ",") != "plan.md,user:todo.md" {
		t.Fatalf("s1 artifacts %v", names)
	}
	if get("/s2/artifacts", &names); strings.Join(names, ",") != "user:todo.md" {
		t.Fatalf("s2 artifacts %v", names)
	}
	var versions []int
	if get("/s1/artifacts/plan.md/versions", &versions); len(versions) != 2 {
		t.Fatalf("versions %v", versions)
	}
	for path, want := range map[string]string{"/s1/artifacts/plan.md": "# plan\n\nv2\n", "/s1/artifacts/plan.md/versions/0": "# plan\n\nbuy milk\n",
		"/s2/artifacts/user:todo.md": "# todo\n\ncall\n"} {
		var part struct {
			InlineData struct{ Data, MimeType string } `json:"inlineData"`
		}
		if status := get(path, &part); status != http.StatusOK {
			t.Fatalf("%s: %d", path, status)
		}
		data, err := base64.URLEncoding.DecodeString(part.InlineData.Data)
		if err != nil || string(data) != want || part.InlineData.MimeType != "text/markdown" {
			t.Fatalf("%s = %q %q (%v), want %q", path, data, part.InlineData.MimeType, err, want)
		}
	}

	// A later turn (in another session) loads what the host sent it: the user's note,
	// not s1's.
	evs = turn("s2", "read notes")
	var read map[string]any
	for _, ev := range evs {
		content, _ := ev["content"].(map[string]any)
		parts, _ := content["parts"].([]any)
		for _, p := range parts {
			if fr, ok := p.(map[string]any)["functionResponse"].(map[string]any); ok && fr["name"] == "read_notes" {
				read, _ = fr["response"].(map[string]any)
			}
		}
	}
	if len(read) != 1 || read["user:todo.md"] != "# todo\n\ncall\n" {
		t.Fatalf("read_notes in s2 = %v", read)
	}

	// The stored session's events carry the delta on the tool's response, as ADK's do.
	var sess struct {
		Events []map[string]any `json:"events"`
	}
	get("/s1", &sess)
	found := false
	for _, ev := range sess.Events {
		a, _ := ev["actions"].(map[string]any)
		if d, _ := a["artifactDelta"].(map[string]any); d["plan.md"] == 0.0 && ev["content"] != nil {
			found = true
		}
	}
	if !found {
		t.Fatalf("no stored event with artifactDelta plan.md: 0 and its content")
	}

	// Deleting the session deletes its artifacts; the user's stay.
	req, _ := http.NewRequest(http.MethodDelete, base+"/s1", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("delete session: %v %v", resp, err)
	}
	if status := get("/s1/artifacts/plan.md", nil); status != http.StatusNotFound {
		t.Fatalf("a deleted session's artifact: %d", status)
	}
	if get("/s2/artifacts", &names); strings.Join(names, ",") != "user:todo.md" {
		t.Fatalf("the user's artifacts after deleting s1: %v", names)
	}
}

// adkTeamScenarios are examples/adk-team's turns compared with adk api_server's: the
// scribe's saves after the coordinator's transfer, as /run_sse streams them and as the
// session and the artifact routes show them afterwards.
func adkTeamScenarios() []adkScenario {
	return []adkScenario{
		{name: "team_run_sse_artifact", run: func(c adkClient) []any {
			c.session("t1")
			return c.runSSE("t1", `save note title=plan text="buy milk"`)
		}},
		{name: "team_artifacts", run: func(c adkClient) []any {
			c.session("t2")
			c.run("t2", "save note title=plan text=one")
			c.session("t3")
			c.run("t3", "save note title=plan text=two")
			// The second turn starts with the scribe, the agent that answered last.
			c.run("t3", "save note title=todo text=call shared=true")
			base := "/apps/{app}/users/u1/sessions/t3/artifacts"
			return []any{c.getSession("t3"), c.get(base), c.get(base + "/plan.md"), c.get(base + "/plan.md/versions"),
				c.get(base + "/plan.md/versions/0"), c.get("/apps/{app}/users/u1/sessions/t2/artifacts")}
		}},
	}
}

// TestADKTeamArtifactEventsMatchADKAPIServer: examples/adk-team's events, artifact deltas
// and artifact routes are adk api_server's, field by field (ids and times aside; goldens
// in testdata/adk_api_server_team, recorded with -record-adk).
func TestADKTeamArtifactEventsMatchADKAPIServer(t *testing.T) {
	py := needPython(t)
	golden := filepath.Join("testdata", "adk_api_server_team")
	if *recordADK {
		recordADKTeamGoldens(t, py, golden)
	}
	dir := copyPyProject(t, "../../examples/adk-team", "")
	s := startPython(t, dir)
	c := adkClient{t: t, base: s.url, app: modelOf(t, dir)}
	for _, sc := range adkTeamScenarios() {
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
			w, g := normalizeADK(want), normalizeADK(sc.run(c))
			if diffs := diffJSON(w, g, "$"); len(diffs) > 0 {
				gj, _ := json.MarshalIndent(g, "", "  ")
				t.Fatalf("differs from adk api_server's (want, got):\n%s\nagentengine's:\n%s", strings.Join(diffs, "\n"), gj)
			}
		})
	}
}

// recordADKTeamGoldens runs adk api_server (in-memory sessions and artifacts) on a copy
// of examples/adk-team (as app adk_team: ADK wants an identifier) and records the scenarios.
func recordADKTeamGoldens(t *testing.T, py, dir string) {
	t.Helper()
	agents := t.TempDir()
	app := filepath.Join(agents, "adk_team") // ADK wants an identifier
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent.py", "offline_model.py"} {
		b, err := os.ReadFile(filepath.Join("../../examples/adk-team", f))
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
	cmd := exec.Command(py, "-m", "google.adk.cli", "api_server", "--port", fmt.Sprint(port),
		"--session_service_uri", "memory://", "--artifact_service_uri", "memory://", agents)
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
	c := adkClient{t: t, base: base, app: "adk_team"}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range adkTeamScenarios() {
		b, err := json.MarshalIndent(sc.run(c), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sc.name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	version, _ := exec.Command(py, "-c", "import google.adk; print(google.adk.__version__)").Output()
	readme := "Events and artifacts written by `adk api_server`, google-adk " + strings.TrimSpace(string(version)) +
		", for examples/adk-team,\nrecorded by `go test ./cmd/agentengine -run TestADKTeamArtifactEventsMatchADKAPIServer -record-adk`.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
}
