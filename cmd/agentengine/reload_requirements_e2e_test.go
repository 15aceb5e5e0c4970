package main_test

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeWheel writes a pure-Python wheel of module greet at version into dir, so that a
// requirements change can be installed without a package index.
func writeWheel(t *testing.T, dir, version string) string {
	t.Helper()
	name := fmt.Sprintf("greet-%s-py3-none-any.whl", version)
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	info := fmt.Sprintf("greet-%s.dist-info", version)
	files := []struct{ name, body string }{
		{"greet.py", fmt.Sprintf("VERSION = %q\n", version)},
		{info + "/METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: greet\nVersion: %s\n", version)},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: agentengine-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, fl := range files {
		w, err := z.Create(fl.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(fl.body)); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(fl.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", fl.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(fl.body))
	}
	record.WriteString(info + "/RECORD,,\n")
	w, err := z.Create(info + "/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

const greetAgent = `import greet
from agentengine_runner import Description, Emitter, Runner, RunRequest


class Agent(Runner):
    def describe(self) -> Description:
        return Description(framework="python", agent_name="reqs")

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        await emit.message_done("greet " + greet.VERSION)
`

// A changed requirements.txt is installed into the project's environment, with pip's
// progress on the terminal, and the new runner uses what it installed. The project has no
// interpreter of its own at first: the server makes its .venv as a user's first run would
// (pip resolves the runner's grpcio and protobuf from the package index, as setup does).
func TestReloadReinstallsChangedRequirements(t *testing.T) {
	needPython(t)
	wheels := t.TempDir() // outside the project: the watcher sees only the requirements edit
	v1, v2 := writeWheel(t, wheels, "1.0"), writeWheel(t, wheels, "2.0")
	dir := filepath.Join(t.TempDir(), "reqs")
	writeFiles(t, dir, map[string]string{
		"agentengine.yaml": "name: reqs\nframework: python\nentry_point: agent.py:Agent\n",
		"agent.py":         greetAgent,
		"requirements.txt": v1 + "\n",
	})
	s := startServerWithin(t, 5*time.Minute, dir, "--session-backend", "memory", "--reload")
	if got := answer(t, s.url, "reqs"); got != "greet 1.0" {
		t.Fatalf("first answer %q\n%s", got, s.logs)
	}
	writeFiles(t, dir, map[string]string{"requirements.txt": v2 + "\n"})
	waitLog(t, s, "reloaded reqs", 1)
	if got := answer(t, s.url, "reqs"); got != "greet 2.0" {
		t.Fatalf("after the requirements change: %q\n%s", got, s.logs)
	}
	if !strings.Contains(s.logs.String(), "greet-2.0") {
		t.Fatalf("the reinstall did not show pip's progress:\n%s", s.logs)
	}
}
