package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/project"
)

func TestInitPythonScaffolds(t *testing.T) {
	for _, fw := range []string{"langgraph", "langchain", "deepagents", "adk"} {
		t.Run(fw, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-"+fw)
			var out, errb bytes.Buffer
			root := newRootCmd(&out, &errb, strings.NewReader(""))
			root.SetArgs([]string{"init", dir, "-f", fw})
			if err := root.Execute(); err != nil {
				t.Fatalf("init: %v\n%s", err, errb.String())
			}
			p, err := project.Load(dir)
			if err != nil {
				t.Fatalf("the scaffold does not load: %v", err)
			}
			if p.Name != "my-"+fw || p.Framework != fw || p.Entry.File != filepath.Join(dir, "agent.py") {
				t.Fatalf("project %+v", p.Config)
			}
			for _, f := range []string{"README.md", ".gitignore", ".env.example", "requirements.txt", "offline_model.py"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("missing %s", f)
				}
			}
			reqs, err := p.Requirements()
			if err != nil {
				t.Fatal(err)
			}
			list, err := project.ParseRequirements(reqs)
			if err != nil || len(list) == 0 {
				t.Fatalf("requirements %v %v", list, err)
			}
			// Lower bounds, never exact pins, and nothing the project does not import.
			raw, _ := os.ReadFile(filepath.Join(dir, "requirements.txt"))
			for _, line := range strings.Split(string(raw), "\n") {
				if line != "" && !strings.HasPrefix(line, "#") && (!strings.Contains(line, ">=") || strings.Contains(line, "==")) {
					t.Errorf("%q: want a lower bound, not a pin", line)
				}
			}
			for _, r := range list {
				if r.Pin != "" || strings.Contains(r.Name, "checkpoint") {
					t.Errorf("%s: pinned, or not imported by the project", r.Name)
				}
			}
			// Plain framework code: nothing of agentengine's is imported.
			for _, f := range []string{"agent.py", "offline_model.py"} {
				src, _ := os.ReadFile(filepath.Join(dir, f))
				if strings.Contains(string(src), "agentengine_adapters") || strings.Contains(string(src), "agentengine_runner") {
					t.Errorf("%s imports agentengine's bridge:\n%s", f, src)
				}
			}
			readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
			if strings.Contains(string(readme), "{{") || !strings.Contains(string(readme), "agentengine run "+dir) {
				t.Errorf("README not rendered:\n%s", readme)
			}
			if !strings.Contains(out.String(), "agentengine run "+dir) {
				t.Errorf("init output %q", out.String())
			}
		})
	}
}

func TestInitRejectsUnknownFrameworks(t *testing.T) {
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}, strings.NewReader(""))
	root.SetArgs([]string{"init", filepath.Join(t.TempDir(), "x"), "-f", "crewai"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "langgraph") {
		t.Fatalf("err %v", err)
	}
}

// The examples are standalone projects, so each carries its own offline_model.py; the
// scaffold's template is the one source, and the copies may not drift from it.
func TestExamplesCarryTheScaffoldsOfflineModel(t *testing.T) {
	for example, template := range map[string]string{
		"langgraph-chat":      "langchain_offline_model.py",
		"langchain-qa":        "langchain_offline_model.py",
		"deepagents-research": "langchain_offline_model.py",
		"adk-assistant":       "adk_offline_model.py",
	} {
		want, err := templates.ReadFile("templates/offline/" + template)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "examples", example, "offline_model.py"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/%s/offline_model.py differs from cmd/agentengine/templates/offline/%s: copy the template over it", example, template)
		}
	}
}
