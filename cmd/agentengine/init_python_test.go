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
			for _, f := range []string{"README.md", ".gitignore", ".env.example", "requirements.txt"} {
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
			for _, r := range list {
				if r.Pin == "" {
					t.Errorf("%s is not pinned", r.Name)
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

func TestConstraintPins(t *testing.T) {
	pins := constraintPins([]byte("# c\ngrpcio==1.85.1  # x\nLangChain_Core == 1.7.2\nbad>=1\n"))
	if pins["grpcio"] != "1.85.1" || pins["langchain-core"] != "1.7.2" || len(pins) != 2 {
		t.Fatalf("%v", pins)
	}
}
