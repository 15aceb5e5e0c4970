package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentengine/agentengine"

// pkg is what the rules read of `go list -json`.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages lists the module's packages (tests excluded: a test may reach further).
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module+"/")] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; the rules would check nothing", len(pkgs))
	}
	return pkgs
}

// under reports whether path (relative to the module) is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// rel is imp relative to the module, or "" when imp is outside it.
func rel(imp string) string {
	if imp == module {
		return "."
	}
	if r, ok := strings.CutPrefix(imp, module+"/"); ok {
		return r
	}
	return ""
}

// rule is one import rule: broken returns what breaks it in p (path relative to the
// module), or "".
type rule struct {
	name   string
	broken func(path string, p pkg) string
}

// importRules are the rules docs/ARCHITECTURE.md states.
func importRules() []rule {
	// The host packages a surface may import: the runtime, and the two it reaches around
	// the runtime (the uploads store and the agents' workspaces, served by api/files and
	// the action API's file actions).
	surfaceMayImport := map[string]bool{"host": true, "host/attach": true, "host/workspace": true}
	return []rule{
		{name: "surfaces (api/...) import of host only host, host/attach and host/workspace, never host's internal packages", broken: func(path string, p pkg) string {
			if !under(path, "api") {
				return ""
			}
			for _, imp := range p.Imports {
				if r := rel(imp); under(r, "host") && !surfaceMayImport[r] {
					return imp
				}
			}
			return ""
		}},
		{name: "surfaces (api/...) do not import the binary (cmd/...)", broken: func(path string, p pkg) string {
			if !under(path, "api") {
				return ""
			}
			for _, imp := range p.Imports {
				if under(rel(imp), "cmd") {
					return imp
				}
			}
			return ""
		}},
		{name: "the host and the session stores reach no HTTP surface (api/..., gin)", broken: func(path string, p pkg) string {
			if !under(path, "host") && !under(path, "session") {
				return ""
			}
			for _, d := range p.Deps {
				if under(rel(d), "api") || strings.HasPrefix(d, "github.com/gin-gonic/") {
					return d
				}
			}
			return ""
		}},
		{name: "the session stores do not import the host", broken: func(path string, p pkg) string {
			if !under(path, "session") {
				return ""
			}
			for _, d := range p.Deps {
				if under(rel(d), "host") {
					return d
				}
			}
			return ""
		}},
		{name: "host/runnerproc is the only host package that imports go-plugin", broken: func(path string, p pkg) string {
			if !under(path, "host") || path == "host/runnerproc" {
				return ""
			}
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, "github.com/hashicorp/go-plugin") {
					return imp
				}
			}
			return ""
		}},
		{name: "the host does not import the runner SDK (pluginsdk): what both sides must agree on is internal/runnerplugin", broken: func(path string, p pkg) string {
			if !under(path, "host") {
				return ""
			}
			for _, imp := range p.Imports {
				if rel(imp) == "pluginsdk" {
					return imp
				}
			}
			return ""
		}},
		{name: "wire is a leaf: of the module it imports only internal/jsonscan, which imports none of it", broken: func(path string, p pkg) string {
			if path != "wire" && path != "internal/jsonscan" {
				return ""
			}
			for _, imp := range p.Imports {
				if r := rel(imp); r != "" && (path != "wire" || r != "internal/jsonscan") {
					return imp
				}
			}
			return ""
		}},
	}
}

// violations lists what breaks r among pkgs.
func violations(r rule, pkgs map[string]pkg) []string {
	var out []string
	for path, p := range pkgs {
		if imp := r.broken(path, p); imp != "" {
			out = append(out, path+" imports "+imp)
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range importRules() {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range violations(r, pkgs) {
				t.Error(v)
			}
		})
	}
}

// Each rule fails on a module that breaks it.
func TestImportRulesCatchBreaks(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	breaking := []map[string]pkg{
		{"api/openai": {Imports: []string{m("host"), m("host/internal/journal")}}},
		{"api/actions": {Imports: []string{m("cmd/agentengine")}}},
		{"host": {Deps: []string{"github.com/gin-gonic/gin"}}},
		{"session/sqlite": {Deps: []string{m("host")}}},
		{"host/runnerpool": {Imports: []string{"github.com/hashicorp/go-plugin"}}},
		{"host/runnerproc": {Imports: []string{m("pluginsdk"), m("pluginsdk/proto/runner/v1")}}},
		{"wire": {Imports: []string{m("session")}}},
	}
	rules := importRules()
	if len(rules) != len(breaking) {
		t.Fatalf("%d rules, %d breaking cases", len(rules), len(breaking))
	}
	for i, r := range rules {
		if v := violations(r, breaking[i]); len(v) != 1 {
			t.Errorf("rule %q on its breaking case: %v", r.name, v)
		}
		allowed := map[string]pkg{"api/files": {Imports: []string{m("host"), m("host/attach"), m("host/workspace")}}, "host/runnerproc": {Imports: []string{"github.com/hashicorp/go-plugin"}}, "wire": {Imports: []string{m("internal/jsonscan")}}}
		if v := violations(r, allowed); len(v) != 0 {
			t.Errorf("rule %q refuses what is allowed: %v", r.name, v)
		}
	}
}
