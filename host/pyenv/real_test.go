package pyenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/project"
)

// TestSetupRealVirtualenv makes a real virtualenv from a one-line requirements.txt with
// the real pip: the project's pin is installed as written (agentengine's old constraints
// file pinned protobuf 7.36.2, which made this a ResolutionImpossible), the runner's own
// packages come in the same resolve, as does python-dotenv for the code's unlisted
// `from dotenv import`, and a pin the runner cannot load on is reported with the
// package, both requirements and the fix.
func TestSetupRealVirtualenv(t *testing.T) {
	base, _, err := BasePython(t.Context())
	if err != nil {
		t.Skipf("no Python 3.11+ to create a virtualenv with: %v", err)
	}
	if out, err := exec.Command(base, "-c", "import venv, ensurepip").CombinedOutput(); err != nil {
		t.Skipf("%s -m venv is unavailable here (%v): %s", base, err, bytes.TrimSpace(out))
	}
	dir := writeTree(t, map[string]string{
		"agentengine.yaml": yaml,
		"agent.py":         "from dotenv import load_dotenv\ngraph = 1\n",
		"requirements.txt": "protobuf==5.29.3\n",
	})
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in, err := Setup(t.Context(), p, Options{Runner: testRunner, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if in.Venv != filepath.Join(dir, ".venv") {
		t.Fatalf("interpreter %+v", in)
	}
	got, err := installedVersions(t.Context(), in.Path, []string{"protobuf", "grpcio", "python-dotenv"})
	if err != nil {
		t.Fatal(err)
	}
	if got["protobuf"] != "5.29.3" || got["grpcio"] == "" || got["python-dotenv"] == "" {
		t.Fatalf("installed %v, want the project's protobuf 5.29.3, a grpcio and python-dotenv for its import\n%s", got, out.String())
	}
	for _, w := range []string{"note: also installing python-dotenv (agent.py:1 imports dotenv)", "creating virtualenv", "virtualenv created in", "installed in", "Python environment ready"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, out.String())
		}
	}
	if strings.Contains(out.String(), " -c ") {
		t.Errorf("pip ran with a constraints file:\n%s", out.String())
	}

	// protobuf 3.20 cannot load the runner's stubs: the error says so before anything
	// changes in the environment.
	if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("protobuf==3.20.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	_, err = Setup(t.Context(), p, Options{Runner: testRunner, Out: &out, DisplayDir: "proj"})
	for _, w := range []string{"protobuf: ", "protobuf>=4.25,<8", "protobuf==3.20.3", "fix: change protobuf==3.20.3 in requirements.txt", "`agentengine setup proj`"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("error %v lacks %q\n%s", err, w, out.String())
		}
	}
	if got, _ := installedVersions(t.Context(), in.Path, []string{"protobuf"}); got["protobuf"] != "5.29.3" {
		t.Fatalf("a failed resolve changed protobuf to %q", got["protobuf"])
	}
}
