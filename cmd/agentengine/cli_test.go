package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, dir, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestInteractiveChatStreamsAndAnswersApprovals(t *testing.T) {
	project := copyProject(t)
	db := filepath.Join(t.TempDir(), "s.sqlite")
	out, err := runCLI(t, t.TempDir(), "hello there\nplease approve deleting notes.txt\ny\nhistory\n/exit\n",
		"run", "-i", project, "--session-path", db, "--show-thinking")
	if err != nil {
		t.Fatalf("run -i: %v\n%s", err, out)
	}
	for _, want := range []string{
		"(thinking) Thinking about: hello there", "Echo: hello there",
		"[tool] delete_file", "approve? [y/N]", "Approved: deleted notes.txt.",
		// Three turns before it (the resume is part of the second) reach the agent as history.
		"History: ",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}

	// The same conversation is in the store the sessions command reads.
	list, err := runCLI(t, project, "", "sessions", "list", "--session-path", db)
	if err != nil {
		t.Fatalf("sessions list: %v\n%s", err, list)
	}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "SESSION") || !strings.Contains(lines[1], "hello there") {
		t.Fatalf("sessions list:\n%s", list)
	}
	id := strings.Fields(lines[1])[0]

	export, err := runCLI(t, project, "", "sessions", "export", id, "--session-path", db)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, export)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(export))
	for sc.Scan() {
		var e struct {
			Seq  int64  `json:"seq"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		if e.Seq != int64(len(types)+1) {
			t.Fatalf("export seq %d at line %d", e.Seq, len(types)+1)
		}
		types = append(types, e.Type)
	}
	joined := strings.Join(types, ",")
	for _, want := range []string{"user_message,run_status", "approval_request", "approval_response", "tool_result"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("exported events lack %s: %s", want, joined)
		}
	}

	show, err := runCLI(t, project, "", "sessions", "show", id, "--session-path", db)
	if err != nil || !strings.Contains(show, "approval_response") {
		t.Fatalf("show: %v\n%s", err, show)
	}
	if out, err := runCLI(t, project, "", "sessions", "show", id, "--session-path", db, "--user", "someone-else"); err == nil {
		t.Fatalf("another user's session must not be readable:\n%s", out)
	}
	if out, err := runCLI(t, project, "", "sessions", "delete", id, "--session-path", db); err != nil {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	if out, err := runCLI(t, project, "", "sessions", "show", id, "--session-path", db); err == nil || !strings.Contains(out, "not found") {
		t.Fatalf("show after delete: %v\n%s", err, out)
	}
}

func TestInitScaffoldRunsAsIs(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, dir, "", "init", "my-agent", "-f", "go")
	if err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	out, err = runCLI(t, dir, "hi\n/exit\n", "run", "-i", "my-agent", "--session-backend", "memory")
	if err != nil || !strings.Contains(out, "You said: hi") {
		t.Fatalf("run -i on the scaffold: %v\n%s", err, out)
	}
	if out, err := runCLI(t, dir, "", "init", "my-agent", "-f", "go"); err == nil || !strings.Contains(out, "already exists") {
		t.Fatalf("init over an existing directory: %v\n%s", err, out)
	}
	if out, err := runCLI(t, dir, "", "init", "bad name!", "-f", "go"); err == nil || !strings.Contains(out, "not a valid project name") {
		t.Fatalf("init with a bad name: %v\n%s", err, out)
	}
}

func TestMisconfiguredProjectsGetClearErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"no framework", "name: x\n", `field "framework": missing`},
		{"unknown framework", "name: x\nframework: cobol\n", `unknown framework "cobol"`},
		{"bad name", "name: 'has space'\nframework: go\n", `field "name"`},
		{"entry outside", "name: x\nframework: go\nentry_point: ../elsewhere\n", "outside the project directory"},
		{"missing binary", "name: x\nframework: go\nbinary: nope\n", `field "binary"`},
		{"not yaml", "name: [unclosed\n", "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeText(filepath.Join(dir, "agentengine.yaml"), c.yaml); err != nil {
				t.Fatal(err)
			}
			out, err := runCLI(t, dir, "", "run", ".", "--port", "0", "--session-backend", "memory")
			if err == nil || !strings.Contains(out, c.want) || !strings.Contains(out, "agentengine.yaml") {
				t.Fatalf("want an error naming the file and %q, got %v:\n%s", c.want, err, out)
			}
		})
	}
	out, err := runCLI(t, t.TempDir(), "", "run", ".", "--session-backend", "memory")
	if err == nil || !strings.Contains(out, "no agentengine.yaml") {
		t.Fatalf("no config: %v\n%s", err, out)
	}
}

func writeText(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// A Go project whose SDK copy speaks an older runner protocol is told to update it, and
// `agentengine sdk update` does.
func TestSDKUpdateReplacesAnOldCopy(t *testing.T) {
	dir := t.TempDir()
	if out, err := runCLI(t, dir, "", "init", "my-agent", "-f", "go"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	sdk := filepath.Join(dir, "my-agent", "third_party", "agentengine", "internal", "runnerplugin", "runnerplugin.go")
	src, err := os.ReadFile(sdk)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(src), `const ProtocolVersion = 1`, `const ProtocolVersion = 0`, 1)
	if old == string(src) {
		t.Fatal("the SDK copy has no ProtocolVersion 1 to age")
	}
	if err := os.WriteFile(sdk, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, dir, "", "run", "my-agent", "--port", "0", "--session-backend", "memory")
	if err == nil || !strings.Contains(out, "speaks runner protocol 0, this agentengine speaks 1: run `agentengine sdk update my-agent`") {
		t.Fatalf("run with an old SDK copy: %v\n%s", err, out)
	}
	if out, err := runCLI(t, dir, "", "sdk", "update", "my-agent"); err != nil || !strings.Contains(out, "runner protocol 1") {
		t.Fatalf("sdk update: %v\n%s", err, out)
	}
	out, err = runCLI(t, dir, "hi\n/exit\n", "run", "-i", "my-agent", "--session-backend", "memory")
	if err != nil || !strings.Contains(out, "You said: hi") {
		t.Fatalf("run after sdk update: %v\n%s", err, out)
	}
}
