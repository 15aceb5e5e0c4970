package prefork

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The Python side of the protocol is tested in pluginsdk/python/tests/test_zygote.py and,
// with the host attached, in host/runnerproc (TestPythonForked*).

func TestZygoteThatExitsBeforeReadyIsAStartErrorWithItsOutput(t *testing.T) {
	if !Supported {
		t.Skip("pre-forking is Linux only")
	}
	z := New(Config{
		Command:      []string{"/bin/sh", "-c", `echo '{"@level":"error","@message":"cannot load runner x"}' >&2; echo plain line; exit 3`},
		StartTimeout: 10 * time.Second,
		Logger:       hclog.NewNullLogger(),
	})
	defer func() { _ = z.Close(context.Background()) }()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(); _ = w.Close() }()
	_, err = z.Fork(t.Context(), nil, w, w)
	if err == nil {
		t.Fatal("Fork succeeded with a zygote that exited")
	}
	for _, want := range []string{"exited before it was ready", "exit status 3", "cannot load runner x", "plain line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if z.PID() != 0 {
		t.Errorf("PID %d after a failed start", z.PID())
	}
}

func TestForkAfterCloseFails(t *testing.T) {
	z := New(Config{Command: []string{"/bin/true"}})
	if err := z.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Fork(t.Context(), nil, os.Stdout, os.Stderr); !errors.Is(err, ErrClosed) {
		t.Fatalf("Fork after Close: %v", err)
	}
}

func TestLogWriterKeepsLinesAndLevels(t *testing.T) {
	var sink strings.Builder
	log := hclog.New(&hclog.LoggerOptions{Output: &sink, Level: hclog.Trace, JSONFormat: true})
	w := &logWriter{log: log, tail: &tail{}}
	_, _ = w.Write([]byte(`{"@level":"warn","@message":"threads started","threads":"t1"}` + "\npar"))
	_, _ = w.Write([]byte("tial\n"))
	w.flush()
	out := sink.String()
	for _, want := range []string{`"@level":"warn"`, `"@message":"threads started"`, `"threads":"t1"`, `"@message":"partial"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if got := w.tail.lines(); len(got) != 2 || got[0] != "threads started" || got[1] != "partial" {
		t.Errorf("tail = %q", got)
	}
}
