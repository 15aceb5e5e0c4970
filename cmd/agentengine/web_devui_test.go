package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestADKDevUILocation: web serves ADK's dev UI from the google-adk of the ADK project's
// interpreter, says why not when that google-adk has none or is missing, and says nothing
// for projects of other frameworks.
func TestADKDevUILocation(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	// A fake google-adk the project's "interpreter" (a wrapper of python3) imports.
	site := t.TempDir()
	pkg := filepath.Join(site, "google", "adk")
	write := func(path, text string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(pkg, "__init__.py"), "", 0o644)
	project := func(name, framework, pythonPath string) string {
		dir := filepath.Join(t.TempDir(), name)
		py := filepath.Join(dir, "python.sh")
		write(py, "#!/bin/sh\nPYTHONPATH="+pythonPath+" exec "+python+" \"$@\"\n", 0o755)
		write(filepath.Join(dir, "agent.py"), "root_agent = None\n", 0o644)
		write(filepath.Join(dir, "agentengine.yaml"), "name: "+name+"\nframework: "+framework+"\nentry_point: agent.py\nagent_variable: root_agent\npython: "+py+"\n", 0o644)
		return dir
	}
	ctx := context.Background()

	s, note := adkDevUI(ctx, []string{project("lg", "langgraph", site)})
	if s != nil || note != "" {
		t.Errorf("a LangGraph project: %v %q, want nothing", s, note)
	}
	s, note = adkDevUI(ctx, []string{project("bare", "adk", site)})
	if s != nil || !strings.Contains(note, "has no dev UI files") {
		t.Errorf("google-adk without browser/: %v %q", s, note)
	}
	s, note = adkDevUI(ctx, []string{project("none", "adk", t.TempDir())})
	if s != nil || !strings.Contains(note, "google-adk is not installed") {
		t.Errorf("without google-adk: %v %q", s, note)
	}
	write(filepath.Join(pkg, "cli", "browser", "index.html"), "<html>", 0o644)
	s, note = adkDevUI(ctx, []string{project("lg2", "langgraph", site), project("adk", "adk", site)})
	if s == nil || note != "/dev-ui/" {
		t.Errorf("with the dev UI: %v %q", s, note)
	}
}
