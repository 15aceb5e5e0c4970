package project

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Each error names its fix: the tests check the message, not just that there is one.
func TestConfigKeys(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantErr  []string
		wantWarn []string
	}{
		{name: "typo names the key", yaml: "name: a\nframework: go\nentry_pont: ./cmd\n",
			wantErr: []string{`unknown key "entry_pont"`, `did you mean "entry_point"?`}},
		{name: "case typo", yaml: "name: a\nframework: go\nFramework: go\n",
			wantErr: []string{`unknown key "Framework"`, `did you mean "framework"?`}},
		{name: "far from any key lists them", yaml: "name: a\nframework: go\nzzzzzzzzzz: 1\n",
			wantErr: []string{`unknown key "zzzzzzzzzz": the keys are`, "entry_point", "run_timeout"}},
		{name: "KsADK keys warn, naming them", yaml: "name: a\nframework: go\nregion: cn-beijing\nui_path: ./ui\n",
			wantWarn: []string{"does not use these KsADK keys", "region (KsADK deployment)", "ui_path (KsADK's custom UI)"}},
		{name: "known keys are quiet", yaml: "name: a\nframework: go\nrun_timeout: 5m\nenv: {A: b}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"agentengine.yaml": tt.yaml, "main.go": "package main\n"})
			p, err := Load(dir)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("loaded")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			warn := strings.Join(p.Warnings, "\n")
			if len(tt.wantWarn) == 0 && warn != "" {
				t.Errorf("warnings %q", warn)
			}
			for _, w := range tt.wantWarn {
				if !strings.Contains(warn, w) {
					t.Errorf("warnings %q lack %q", warn, w)
				}
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	tests := []struct {
		val     string
		want    time.Duration
		wantErr string
	}{
		{val: "", want: 0},
		{val: "run_timeout: 90s", want: 90 * time.Second},
		{val: "run_timeout: 10m", want: 10 * time.Minute},
		{val: "run_timeout: 30", want: 30 * time.Second},
		{val: "run_timeout: 1.5", want: 1500 * time.Millisecond},
		{val: "run_timeout: soon", wantErr: "write a duration such as 90s or 10m"},
		{val: "run_timeout: -5", wantErr: "write a duration such as 90s or 10m"},
	}
	for _, tt := range tests {
		t.Run(tt.val, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"agentengine.yaml": "name: a\nframework: go\n" + tt.val + "\n", "main.go": "package main\n"})
			p, err := Load(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "run_timeout") {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.RunTimeout != tt.want {
				t.Fatalf("RunTimeout = %s, want %s", p.RunTimeout, tt.want)
			}
		})
	}
}

func TestGoEntryPointMustBeMain(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{name: "library package", files: map[string]string{"agentengine.yaml": "name: a\nframework: go\nentry_point: ./agent\n", "agent/agent.go": "package agent\n"},
			want: []string{"is package agent, not a main package", "point entry_point at the directory of your runner's `package main`", "pluginsdk.Serve"}},
		{name: "no Go files", files: map[string]string{"agentengine.yaml": "name: a\nframework: go\nentry_point: ./docs\n", "docs/README.md": "x"},
			want: []string{"has no Go files", "point entry_point at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Load(writeTree(t, tt.files))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.RunnerLaunch(t.Context(), BuildOptions{})
			if err == nil {
				t.Fatal("launched")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
