package main_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
)

// startAgentengine starts the binary with args and env (added to a minimal environment)
// and waits for its serving line, like startServer does for `run`.
func startAgentengine(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	return launch(t, cmd, 90*time.Second, fmt.Sprintf("agentengine %v", args))
}

// fakeOpener puts an xdg-open (and open) on PATH that records the URL it is given.
func fakeOpener(t *testing.T) (pathEnv, record string) {
	t.Helper()
	bin := t.TempDir()
	record = filepath.Join(t.TempDir(), "opened")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$1\" >> %q\n", record)
	for _, name := range []string{"xdg-open", "open"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), record
}

// waitFile waits for the fake opener, which runs beside the server, to have written.
func waitFile(path string) string {
	var got string
	_ = testutil.Wait(5*time.Second, func() error { // the caller reports an empty result
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(b) == 0 {
			return errors.New("empty")
		}
		got = string(b)
		return nil
	})
	return got
}

func TestWebServesTheUIOpensTheBrowserAndKeepsLocalSessions(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		env      []string
		wantOpen bool
		// wantFile: sessions land in the project's .agentengine/ui/sessions.sqlite.
		wantFile bool
		// wantTraces: the turns are traced and kept for the UIs' trace views.
		wantTraces bool
	}{
		{name: "opens the browser", args: nil, wantOpen: true, wantFile: true, wantTraces: true},
		{name: "--no-open", args: []string{"--no-open"}, wantOpen: false, wantFile: true, wantTraces: true},
		{name: "shell chose the memory store", args: []string{"--no-open"}, env: []string{"KSADK_SESSION_BACKEND=memory"}, wantFile: false, wantTraces: true},
		{name: "--no-trace", args: []string{"--no-open", "--no-trace"}, wantFile: true, wantTraces: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			project := copyProject(t)
			pathEnv, record := fakeOpener(t)
			env := append([]string{pathEnv}, c.env...)
			s := startAgentengine(t, project, env, append([]string{"web", ".", "-p", "0"}, c.args...)...)

			resp := mustGet(t, s.url+"/")
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<html") {
				t.Fatalf("GET /: %d\n%.300s", resp.StatusCode, body)
			}
			port := s.url[strings.LastIndex(s.url, ":")+1:]
			wantURL := "http://localhost:" + port + "/"
			// Printed once the server listens, so possibly after GET / was answered.
			testutil.Eventually(t, 5*time.Second, func() error {
				if !strings.Contains(s.logs.String(), "Web UI: "+wantURL) {
					return fmt.Errorf("the URL is not printed:\n%s", s.logs)
				}
				return nil
			})
			// A turn, so that a session exists.
			out := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "hello"}))
			if out["status"] != "completed" {
				t.Fatalf("turn: %v", out)
			}
			boot := decode(t, post(t, s.url+"/agentengine/api/v1/GetAgentUiBootstrap", map[string]any{}))
			caps, _ := boot["Data"].(map[string]any)["Capabilities"].(map[string]any)
			if caps["Traces"] != c.wantTraces {
				t.Errorf("bootstrap Traces = %v, want %v", caps["Traces"], c.wantTraces)
			}
			if c.wantOpen {
				if got := strings.TrimSpace(waitFile(record)); got != wantURL {
					t.Fatalf("the browser was opened at %q, want %q", got, wantURL)
				}
			} else if _, err := os.Stat(record); err == nil {
				t.Fatalf("the browser was opened with --no-open")
			}
			_, err := os.Stat(filepath.Join(project, ".agentengine", "ui", "sessions.sqlite"))
			if c.wantFile != (err == nil) {
				t.Fatalf("project session file exists: %v, want %v", err == nil, c.wantFile)
			}
		})
	}
}

// A project KsADK served before: its sessions.sqlite is imported and the conversation
// continues by the same id with its history (the runner sees the earlier turns).
func TestWebContinuesAKsADKConversation(t *testing.T) {
	project := copyProject(t)
	// The fixture's agent is named ksadk-echo: the project takes its name.
	cfg, err := os.ReadFile(filepath.Join(project, "agentengine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "name: echo-go", "name: ksadk-echo", 1))
	if err := os.WriteFile(filepath.Join(project, "agentengine.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile("../../session/sqlite/testdata/ksadk-0.8.5/sessions.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(project, ".agentengine", "ui", "sessions.sqlite")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, fixture, 0o600); err != nil {
		t.Fatal(err)
	}

	s := startAgentengine(t, project, nil, "web", ".", "-p", "0", "--no-open")
	out := decode(t, post(t, s.url+"/v1/responses", map[string]any{
		"model": "ksadk-echo", "input": "history", "conversation": "conv-fixture-1",
	}))
	text, _ := out["output_text"].(string)
	if out["status"] != "completed" || !strings.Contains(text, "History: 8 messages. First user message: hello there") {
		t.Fatalf("the continued turn did not see the KsADK history: %v", out)
	}
	if b, err := os.ReadFile(db + ".ksadk-backup"); err != nil || string(b) != string(fixture) {
		t.Fatalf("no faithful backup of KsADK's file: %v", err)
	}

	// replay reads the same conversation, KsADK's turns first.
	s.stop()
	replay, err := runCLI(t, project, "", "replay", "conv-fixture-1")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, replay)
	}
	for _, want := range []string{"user: hello there", "Echo: hello there (history: 0 messages)", "user: second turn",
		`lookup({"query":"paris"})`, "lookup → paris has 5 letters", "user: history", "History: 8 messages"} {
		if !strings.Contains(replay, want) {
			t.Fatalf("replay lacks %q:\n%s", want, replay)
		}
	}
}

func TestRunKsADKFlags(t *testing.T) {
	runner := filepath.Join(t.TempDir(), "envecho")
	if out, err := exec.Command("go", "build", "-o", runner, "./testdata/envecho").CombinedOutput(); err != nil {
		t.Fatalf("build envecho: %v\n%s", err, out)
	}
	project := filepath.Join(t.TempDir(), "envecho")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	// .env sets a model: --model wins over it, as in KsADK.
	if err := writeText(filepath.Join(project, "agentengine.yaml"), "name: envecho\nframework: go\nbinary: "+runner+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeText(filepath.Join(project, ".env"), "OPENAI_MODEL_NAME=from-dotenv\n"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no flags", nil, []string{"model=from-dotenv model_name= langsmith_tracing= langchain_tracing="}},
		{"--model", []string{"--model", "gpt-x"}, []string{"model=gpt-x model_name=gpt-x"}},
		{"--no-trace", []string{"--no-trace"}, []string{"langsmith_tracing=false langchain_tracing=false"}},
		{"accepted KsADK flags", []string{"--no-alt-screen", "--no-stream", "--show-thinking", "--no-trace", "--model", "m"}, []string{"model=m"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "-i", project, "--session-backend", "memory"}, c.args...)
			out, err := runCLI(t, t.TempDir(), "hi\n/exit\n", args...)
			if err != nil {
				t.Fatalf("run %v: %v\n%s", c.args, err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Fatalf("run %v: output lacks %q:\n%s", c.args, w, out)
				}
			}
		})
	}
	// The server reads --model too (every turn of every session).
	s := startAgentengine(t, project, nil, "run", ".", "--port", "0", "--model", "served-model", "--no-trace", "--session-backend", "memory")
	out := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "envecho", "input": "x"}))
	if text, _ := out["output_text"].(string); !strings.Contains(text, "model=served-model") {
		t.Fatalf("served turn: %v", out)
	}
	s.stop()
	// So does web.
	w := startAgentengine(t, project, nil, "web", ".", "-p", "0", "--no-open", "--model", "web-model", "--no-trace")
	out = decode(t, post(t, w.url+"/v1/responses", map[string]any{"model": "envecho", "input": "x"}))
	if text, _ := out["output_text"].(string); !strings.Contains(text, "model=web-model model_name=web-model langsmith_tracing=false") {
		t.Fatalf("web turn: %v", out)
	}
}

func TestChatFlagsShowThinkingAndNoStream(t *testing.T) {
	project := copyProject(t)
	cases := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"default hides thinking", nil, []string{"Echo: hello there"}, []string{"Thinking about"}},
		{"--show-thinking", []string{"--show-thinking"}, []string{"(thinking) Thinking about: hello there", "Echo: hello there"}, nil},
		{"--no-stream", []string{"--no-stream"}, []string{"> Echo: hello there\n"}, []string{"Thinking about"}},
		{"--no-stream --show-thinking", []string{"--no-stream", "--show-thinking"}, []string{"> (thinking) Thinking about: hello there\nEcho: hello there\n"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "-i", project, "--session-backend", "memory"}, c.args...)
			out, err := runCLI(t, t.TempDir(), "hello there\n/exit\n", args...)
			if err != nil {
				t.Fatalf("run -i %v: %v\n%s", c.args, err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Fatalf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(out, w) {
					t.Fatalf("output has %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "Echo: hello there"); n != 1 {
				t.Fatalf("the answer is printed %d times:\n%s", n, out)
			}
		})
	}
}
