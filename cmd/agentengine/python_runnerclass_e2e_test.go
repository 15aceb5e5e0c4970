package main_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A runner_class project (KsADK's custom runner, a LangGraphRunner subclass) where ksadk
// is not installed: `run` stops before serving with an error naming the field and the
// fix, and doctor says the same instead of advising to assign a graph to root_agent.
// (With ksadk installed, the matrix sample ksadk-runner-class answers through the class.)
func TestPythonRunnerClassWithoutKsadk(t *testing.T) {
	py := needPython(t)
	if exec.Command(py, "-c", "import ksadk.runners").Run() == nil {
		t.Skipf("%s has ksadk installed: this test needs an environment without it", py)
	}
	dir := copyPyProject(t, "testdata/pyrunnerclass", "")

	cmd := exec.Command(binPath, "run", dir, "--port", "0", "--session-backend", "memory")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("run did not stop on a runner_class project without ksadk")
	}
	text := string(out)
	if exitStatus(err) == 0 || strings.Contains(text, "agentengine serving") {
		t.Fatalf("run served a runner_class project without ksadk (exit %d):\n%s", exitStatus(err), text)
	}
	for _, want := range []string{`field "runner_class"`, "agent.LongTaskRunner", "ksadk is not installed", "fix: add ksadk to", "requirements.txt"} {
		if !strings.Contains(text, want) {
			t.Errorf("run's error lacks %q:\n%s", want, text)
		}
	}

	out, err = exec.Command(binPath, "doctor", dir, "--json").Output()
	var rep struct {
		OK     bool
		Checks []struct {
			Name, Detail, Fix string
			OK                bool
		}
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("doctor --json printed %q (%v)", out, err)
	}
	var found bool
	for _, c := range rep.Checks {
		if c.Name == "agent_variable" || strings.Contains(c.Fix, "root_agent =") {
			t.Errorf("doctor advises on root_agent for a runner_class project: %+v", c)
		}
		if c.Name == "runner_class" {
			found = true
			if c.OK || !strings.Contains(c.Detail, "ksadk is not installed") || !strings.Contains(c.Fix, "add ksadk to") {
				t.Errorf("runner_class check %+v", c)
			}
		}
	}
	if rep.OK || !found {
		t.Errorf("doctor: ok=%v, runner_class check found=%v: %+v", rep.OK, found, rep.Checks)
	}
}
