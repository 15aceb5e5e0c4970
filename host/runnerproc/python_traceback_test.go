package runnerproc_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host/runnerproc"
)

// sdkPython returns an interpreter that can run the Python runner SDK from pythonPath
// (testPythonName), or skips (fails in CI).
func sdkPython(t *testing.T, pythonPath string) string {
	t.Helper()
	py := testPythonName()
	cmd := exec.Command(py, "-c", "import agentengine_runner.server")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	out, err := cmd.CombinedOutput()
	if err == nil {
		py, err = exec.LookPath(py)
	}
	if err != nil {
		msg := fmt.Sprintf("%s cannot run the runner SDK (%v):\n%s\nset AGENTENGINE_PYTHON to a Python with grpcio and protobuf", py, err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

// A Python runner whose module raises at import: the traceback the SDK logs reaches the
// host's (text) log line by line, with no U+FFFD where the line breaks were.
func TestPythonTracebackKeepsItsLinesInTheHostLog(t *testing.T) {
	sdk, err := filepath.Abs("../../pluginsdk/python/src")
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	agent := "def load():\n    raise RuntimeError('kaputt: ünïcödé')\n\nload()\n"
	if err := os.WriteFile(filepath.Join(project, "broken_agent.py"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	pythonPath := sdk + string(os.PathListSeparator) + project
	py := sdkPython(t, pythonPath)

	sink := &logSink{}
	sup, _ := newSupervisor(t, runnerproc.Config{
		Name:    "broken",
		Command: []string{py, "-u", "-m", "agentengine_runner", "broken_agent"},
		Dir:     project,
		Env:     []string{"HOME=" + os.Getenv("HOME"), "PYTHONPATH=" + pythonPath},
		Logger:  hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Trace, Output: sink}),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sup.Start(ctx); err == nil {
		t.Fatal("a runner whose module raises at import started")
	}
	sink.mu.Lock()
	got := sink.buf.String()
	sink.mu.Unlock()
	if strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("U+FFFD in the host log:\n%s", got)
	}
	for _, want := range []string{
		"[ERROR] test: cannot load runner broken_agent: RuntimeError: kaputt: ünïcödé",
		"\n  | Traceback (most recent call last):\n",
		"broken_agent.py\", line 4, in <module>\n  |     load()\n",
		"\n  | RuntimeError: kaputt: ünïcödé\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("host log lacks %q:\n%s", want, got)
		}
	}
}
