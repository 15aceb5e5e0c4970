package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplay(t *testing.T) {
	project := copyProject(t)
	db := filepath.Join(t.TempDir(), "s.sqlite")
	out, err := runCLI(t, project, "hello there\nuse the tool on paris\n/session\n/exit\n", "run", "-i", ".", "--session-path", db)
	if err != nil {
		t.Fatalf("run -i: %v\n%s", err, out)
	}
	i := strings.Index(out, "session: ")
	if i < 0 {
		t.Fatalf("no session id in:\n%s", out)
	}
	id := strings.Fields(out[i+len("session: "):])[0]

	type event struct {
		Seq  int64           `json:"seq"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	jsonEvents := func(args ...string) []event {
		t.Helper()
		out, err := runCLI(t, project, "", append([]string{"replay", id, "--session-path", db, "--format", "json"}, args...)...)
		if err != nil {
			t.Fatalf("replay %v: %v\n%s", args, err, out)
		}
		var evs []event
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("replay --format json line %q: %v", line, err)
			}
			evs = append(evs, e)
		}
		return evs
	}
	all := jsonEvents()
	if len(all) < 8 || all[0].Seq != 1 || all[0].Type != "user_message" {
		t.Fatalf("replay json: %+v", all)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// Both bounds are exclusive.
	part := jsonEvents("--after-seq-id", "2", "--before-seq-id", "6")
	if len(part) != 3 || part[0].Seq != 3 || part[2].Seq != 5 {
		t.Fatalf("--after-seq-id 2 --before-seq-id 6: %+v", part)
	}

	text, err := runCLI(t, project, "", "replay", id, "--session-path", db)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != len(all) {
		t.Fatalf("%d text lines for %d events:\n%s", len(lines), len(all), text)
	}
	for _, want := range []string{"user: hello there", "Echo: hello there", "(thinking): Thinking about: hello there",
		"user: use the tool on paris", `lookup({"query":"paris"})`, "completed (run "} {
		if !strings.Contains(text, want) {
			t.Fatalf("replay lacks %q:\n%s", want, text)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", id, "--session-path", db, "--format", "yaml"}, `--format "yaml": use text or json`},
		{[]string{"replay", "no-such-session", "--session-path", db}, "not found"},
		{[]string{"replay", id, "--session-path", db, "--after-seq-id", "-1"}, "sequence numbers"},
		{[]string{"replay", "--session-path", db}, "accepts 1 arg"},
	} {
		if out, err := runCLI(t, project, "", c.args...); err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("%v: want an error with %q, got %v:\n%s", c.args, c.want, err, out)
		}
	}
}
