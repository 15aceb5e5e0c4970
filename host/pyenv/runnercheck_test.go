package pyenv

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/project"
)

func TestSatisfies(t *testing.T) {
	for _, tt := range []struct {
		version, spec string
		ok            bool
	}{
		{"4.25.0", ">=4.25,<8", true},
		{"7.36.2", ">=4.25,<8", true},
		{"6.33.6", "<8,>=4.25", true},
		{"3.20.3", ">=4.25,<8", false},
		{"8.0.0", ">=4.25,<8", false},
		{"1.60.0", ">=1.60", true},
		{"1.59.3", ">=1.60", false},
		{"1.62.0rc1", ">=1.60", true},
		{"2.0", "==2.0.0", true},
		{"2.0.1", "!=2.0.1", false},
		{"5.0", "~=5.0", true}, // not an operator the runner uses: not held against it
	} {
		if got := satisfies(tt.version, tt.spec); got != tt.ok {
			t.Errorf("satisfies(%q, %q) = %v", tt.version, tt.spec, got)
		}
	}
}

func TestCheckRunner(t *testing.T) {
	for _, tt := range []struct {
		name, installed string
		want            []string // "" means no error
	}{
		{"in range", `{"grpcio": "1.62.3", "protobuf": "4.25.8"}`, nil},
		{"protobuf too old", `{"grpcio": "1.85.1", "protobuf": "3.20.3"}`, []string{
			"cannot host the agentengine runner: protobuf is 3.20.3; the runner needs protobuf>=4.25,<8",
			"/.venv/bin/python3 -m pip install 'protobuf>=4.25,<8'",
		}},
		{"grpcio missing", `{"grpcio": "", "protobuf": "7.36.2"}`, []string{"grpcio is not installed (the runner needs grpcio>=1.60)", "'grpcio>=1.60'"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agentengine.yaml": yaml, "agent.py": "graph = 1\n"}
			fakeVenv(files, ".venv", "#!/bin/sh\necho '"+tt.installed+"'\n")
			dir := writeTree(t, files)
			p, err := project.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckRunner(t.Context(), p, testRunner, "proj")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
			if err != nil && !strings.Contains(err.Error(), filepath.Join(dir, ".venv")) {
				t.Errorf("error does not name the environment: %v", err)
			}
		})
	}
}

func TestCheckRunnerClass(t *testing.T) {
	const withClass = yaml + "runner_class: agent.LongTaskRunner\n"
	for _, tt := range []struct {
		name, config, installed string
		want                    []string // "" means no error
	}{
		{"ksadk installed", withClass, `{"ksadk": "0.8.5"}`, nil},
		{"no runner_class", yaml, `{"ksadk": ""}`, nil},
		{"ksadk missing", withClass, `{"ksadk": ""}`, []string{
			`field "runner_class": agent.LongTaskRunner is a KsADK runner class, which needs the ksadk package, and ksadk is not installed`,
			"fix: add ksadk to ", "requirements.txt, then run `agentengine setup proj`",
			"/.venv/bin/python3 -m pip install ksadk",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agentengine.yaml": tt.config, "agent.py": "graph = None\n"}
			fakeVenv(files, ".venv", "#!/bin/sh\necho '"+tt.installed+"'\n")
			dir := writeTree(t, files)
			p, err := project.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckRunnerClass(t.Context(), p, "proj")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
		})
	}
}
