package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetupHelpSaysRequirementsWin(t *testing.T) {
	out, err := runCLI(t, t.TempDir(), "", "setup", "--help")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"exactly as written", "no constraints", "protobuf>=4.25,<8", "litellm", "never into a system Python"} {
		if !strings.Contains(out, want) {
			t.Errorf("setup --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "constraints file") {
		t.Errorf("setup --help still mentions a constraints file:\n%s", out)
	}
}

// writePyProject makes a Python project that declares requirements and has no
// environment: `run` would create .venv and install into it.
func writePyProject(t *testing.T, dir, agent string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"agentengine.yaml": "name: envtest\nframework: adk\nentry_point: agent.py:root_agent\n",
		"agent.py":         agent,
		"requirements.txt": "google-adk\n",
	} {
		if err := writeText(filepath.Join(dir, name), text); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A busy port is reported at once, naming the port and -p, before any virtualenv or
// install.
func TestPythonRunReportsABusyPortBeforeSetup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := writePyProject(t, filepath.Join(t.TempDir(), "p"), "root_agent = 1\n")
	out, err := runCLI(t, dir, "", "run", dir, "-p", fmt.Sprint(port), "--session-backend", "memory")
	if err == nil {
		t.Fatalf("run on a busy port succeeded:\n%s", out)
	}
	for _, want := range []string{fmt.Sprintf("port %d on 127.0.0.1 is already in use", port), "-p "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "virtualenv") || strings.Contains(out, "pip") {
		t.Errorf("setup started before the port was checked:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".venv")); err == nil {
		t.Error(".venv was created")
	}
}

// Every command doctor prints as a fix parses as a shell command whose arguments are the
// real paths, and none installs into an interpreter outside the project (here the
// project has no environment: the fixes say `agentengine setup DIR`). The project is a
// KsADK `init -f adk` layout: LiteLlm imported, litellm not listed.
func TestDoctorFixesArePasteable(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH: doctor's interpreter checks need one")
	}
	dir := writePyProject(t, filepath.Join(t.TempDir(), "it's a $dir"),
		"from dotenv import load_dotenv\nfrom google.adk.agents import LlmAgent\nfrom google.adk.models.lite_llm import LiteLlm\nroot_agent = LlmAgent(name='a', model=LiteLlm(model='openai/x'))\n")
	out, _ := exec.Command(binPath, "doctor", dir, "--json").Output()
	var rep struct {
		OK     bool
		Checks []struct {
			Name, Detail, Fix string
			OK                bool
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor --json printed %q (%v)", out, err)
	}
	if rep.OK {
		t.Fatalf("doctor passed a project without its environment: %+v", rep)
	}
	commands := 0
	for _, c := range rep.Checks {
		if c.OK || c.Fix == "" {
			continue
		}
		if strings.Contains(c.Fix, "site-packages") {
			t.Errorf("check %s: the fix points into an installed library: %s", c.Name, c.Fix)
		}
		for _, command := range fixCommands(c.Fix) {
			commands++
			words := shellWords(t, command)
			switch {
			case words[0] == "agentengine" && words[1] == "setup":
				if len(words) != 3 || words[2] != dir {
					t.Errorf("check %s: %q parses as %q, want the project dir %q", c.Name, command, words, dir)
				}
			case len(words) > 2 && words[1] == "-m" && words[2] == "pip":
				t.Errorf("check %s: %q installs into %s, which is not the project's environment", c.Name, command, words[0])
			}
		}
		if c.Name == "imports" && !strings.Contains(c.Detail, "litellm (agent.py:3 imports google.adk.models.lite_llm)") {
			t.Errorf("imports check does not name litellm: %+v", c)
		}
	}
	if commands == 0 {
		t.Fatalf("no fix commands in %+v", rep.Checks)
	}
}

// fixCommands are the commands in a fix: the whole fix when it is one, else the
// `backticked` commands in its prose.
func fixCommands(fix string) []string {
	if strings.HasPrefix(fix, "agentengine ") || strings.Contains(fix, " -m pip ") && !strings.Contains(fix, "`") {
		return []string{fix}
	}
	var out []string
	parts := strings.Split(fix, "`")
	for i := 1; i < len(parts); i += 2 {
		if strings.HasPrefix(parts[i], "agentengine ") || strings.Contains(parts[i], " -m pip ") {
			out = append(out, parts[i])
		}
	}
	return out
}

// shellWords has sh split a command into its words, the way a pasted line is read.
func shellWords(t *testing.T, command string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", `eval "set -- $1" && for w in "$@"; do printf '%s\0' "$w"; done`, "sh", command).Output()
	if err != nil {
		t.Fatalf("%q is not a well-formed shell command: %v", command, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}
