package runnerproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/internal/testutil"
)

func TestLineLogger(t *testing.T) {
	type rec struct{ level, msg string }
	tests := []struct {
		name   string
		chunks []string
		plain  hclog.Level
		want   []rec
		kv     map[string]any // extra fields expected on the first record
	}{
		{name: "hclog json", chunks: []string{`{"@level":"warn","@message":"careful","@timestamp":"2026-01-01T00:00:00.000000Z","n":1,"s":"x"}` + "\n"},
			want: []rec{{"warn", "careful"}}, kv: map[string]any{"n": "1", "s": "x", "stream": "stderr"}},
		{name: "number message", chunks: []string{`{"@message": 5}` + "\n"}, want: []rec{{"debug", `{"@message": 5}`}}},
		{name: "null message", chunks: []string{`{"@message":null,"@level":"info"}` + "\n"}, want: []rec{{"debug", `{"@message":null,"@level":"info"}`}}},
		{name: "number level", chunks: []string{`{"@message":"m","@level":3}` + "\n"}, want: []rec{{"debug", `{"@message":"m","@level":3}`}}},
		{name: "unknown level", chunks: []string{`{"@message":"m","@level":"loud"}` + "\n"}, want: []rec{{"debug", `{"@message":"m","@level":"loud"}`}}},
		{name: "no level", chunks: []string{`{"@message":"m"}` + "\n"}, want: []rec{{"debug", `{"@message":"m"}`}}},
		{name: "trailing garbage", chunks: []string{`{"@message":"m","@level":"info"} x` + "\n"}, want: []rec{{"debug", `{"@message":"m","@level":"info"} x`}}},
		{name: "array", chunks: []string{"[1,2]\n"}, want: []rec{{"debug", "[1,2]"}}},
		{name: "split across writes", chunks: []string{`{"@level":"in`, `fo","@message":"joined"}`, "\n"}, want: []rec{{"info", "joined"}}},
		{name: "several lines in one write", chunks: []string{"a\nb\r\n\n  \nc\n"}, want: []rec{{"debug", "a"}, {"debug", "b"}, {"debug", "c"}}},
		{name: "prefixes", chunks: []string{"[ERROR] bad\n[INFO] fine\n[NOPE] x\n"},
			want: []rec{{"error", "[ERROR] bad"}, {"info", "[INFO] fine"}, {"debug", "[NOPE] x"}}},
		{name: "go panic", chunks: []string{"before\npanic: boom\n\ngoroutine 1 [running]:\n"},
			want: []rec{{"debug", "before"}, {"error", "panic: boom"}, {"error", "goroutine 1 [running]:"}}},
		{name: "python traceback", chunks: []string{"Traceback (most recent call last):\n  File \"x.py\"\n"},
			want: []rec{{"error", "Traceback (most recent call last):"}, {"error", "  File \"x.py\""}}},
		{name: "control characters", chunks: []string{"a\x1b[2Jb\x00c\td\n"}, want: []rec{{"debug", "a\uFFFD[2Jb\uFFFDc\td"}}},
		{name: "invalid utf8", chunks: []string{"a\xffb\n"}, want: []rec{{"debug", "a\uFFFDb"}}},
		{name: "python traceback field keeps its lines", chunks: []string{`{"@level":"error","@message":"cannot load","error":"Traceback (most recent call last):\n  File \"a.py\", line 1\r\nValueError: ünï\u001b[2J\n"}` + "\n"},
			want: []rec{{"error", "cannot load"}}, kv: map[string]any{"error": "Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: ünï\uFFFD[2J"}},
		{name: "multi-line message", chunks: []string{`{"@level":"warn","@message":"first\nsecond\r\nthird\n"}` + "\n"},
			want: []rec{{"warn", "first"}}, kv: map[string]any{"more": "second\nthird"}},
		{name: "plain level", plain: hclog.Info, chunks: []string{"hello\n"}, want: []rec{{"info", "hello"}}},
		{name: "last line without newline is flushed", chunks: []string{"end"}, want: []rec{{"debug", "end"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			plain := tt.plain
			if plain == hclog.NoLevel {
				plain = hclog.Debug
			}
			w := newLineLogger(hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: &out, JSONFormat: true}), "stderr", plain)
			for _, c := range tt.chunks {
				if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.flush()
			var got []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if l == "" {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("bad log output %q", l)
				}
				got = append(got, m)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d records %v, want %v", len(got), got, tt.want)
			}
			for i, w := range tt.want {
				if got[i]["@level"] != w.level || got[i]["@message"] != w.msg {
					t.Errorf("record %d = %v %q, want %v %q", i, got[i]["@level"], got[i]["@message"], w.level, w.msg)
				}
			}
			for k, v := range tt.kv {
				if got[0][k] != v {
					t.Errorf("field %s = %v, want %v", k, got[0][k], v)
				}
			}
		})
	}
}

// In the host's text log a Python traceback logged by the runner SDK (an hclog JSON line
// whose "error" field holds the traceback) reads as an indented block, one line per
// traceback line, with no U+FFFD where the line breaks were.
func TestLineLoggerTextLogKeepsTracebackLines(t *testing.T) {
	var out bytes.Buffer
	w := newLineLogger(hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Trace}), "stderr", hclog.Debug)
	tb := "Traceback (most recent call last):\n  File \"/p/agent.py\", line 3, in <module>\n    f()\nRuntimeError: kaputt: ünï\n"
	line, _ := json.Marshal(map[string]string{"@level": "error", "@message": "cannot load the agent\nsee below", "@timestamp": "2026-01-01T00:00:00.000000Z", "error": tb})
	_, _ = w.Write(append(line, '\n'))
	got := out.String()
	if strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("replacement characters in:\n%s", got)
	}
	for _, want := range []string{
		"[ERROR] cannot load the agent: stream=stderr",
		"  error=\n  | Traceback (most recent call last):\n  |   File \"/p/agent.py\", line 3, in <module>\n  |     f()\n  | RuntimeError: kaputt: ünï\n",
		` more="see below"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	// Every output line is a log record or part of an indented block: a value cannot
	// start a line of its own.
	for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
		if !strings.Contains(l, "[ERROR]") && !strings.HasPrefix(l, "  ") {
			t.Errorf("unindented line %q", l)
		}
	}
}

func TestLineLoggerBoundsLines(t *testing.T) {
	var out bytes.Buffer
	w := newLineLogger(hclog.New(&hclog.LoggerOptions{Output: &out, JSONFormat: true, Level: hclog.Trace}), "stderr", hclog.Debug)
	long := `{"@level":"info","@message":"` + strings.Repeat("y", 3*maxLineBytes) + `"}`
	for i := 0; i < len(long); i += 1000 {
		_, _ = w.Write([]byte(long[i:min(i+1000, len(long))]))
	}
	_, _ = w.Write([]byte("\nnext\n"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d records", len(lines))
	}
	var first map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	if msg, _ := first["@message"].(string); len(msg) != maxLineBytes || first["@level"] != "debug" || first["truncated_at_bytes"] == nil {
		t.Errorf("long line logged as %d bytes at %v", len(msg), first["@level"])
	}
	if !strings.Contains(lines[1], `"next"`) {
		t.Errorf("line after the long one: %s", lines[1])
	}
	if tail := w.lastLines(); len(tail) != 2 || len(tail[0]) > tailLineBytes+len("…") {
		t.Errorf("tail %d lines, first %d bytes", len(tail), len(tail[0]))
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	for _, tt := range []struct {
		failures int
		want     time.Duration
	}{
		{0, 0}, {1, 0}, {2, 100 * time.Millisecond}, {3, 200 * time.Millisecond},
		{4, 400 * time.Millisecond}, {5, 800 * time.Millisecond}, {6, time.Second}, {1000, time.Second},
	} {
		if got := b.delay(tt.failures); got != tt.want {
			t.Errorf("delay(%d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

func TestDefunct(t *testing.T) {
	if defunct(os.Getpid()) {
		t.Fatal("the test process itself is reported defunct")
	}
	if defunct(0) || defunct(-1) {
		t.Fatal("invalid pids are not defunct")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if defunct(cmd.Process.Pid) {
		t.Fatal("a running child is reported defunct")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: a zombie. Wait (bounded) for the kernel to finish the kill.
	testutil.Eventually(t, 5*time.Second, func() error {
		if !defunct(cmd.Process.Pid) {
			return errors.New("a killed, unreaped child is not reported defunct")
		}
		return nil
	})
	_ = cmd.Wait()
	// Reaped (go-plugin's Wait runs before it reports the exit): still not alive.
	if !defunct(cmd.Process.Pid) {
		t.Fatal("a reaped child is not reported defunct")
	}
}
