package pyenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/project"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(rel, "/bin/") || strings.HasPrefix(rel, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testRunner stands for the embedded runner-requirements.txt.
var testRunner = []string{"grpcio>=1.60", "protobuf>=4.25,<8"}

const yaml = "name: x\nframework: langgraph\nentry_point: agent.py:graph\n"

func fakeVenv(files map[string]string, dir, script string) {
	files[dir+"/pyvenv.cfg"] = "home = /usr/bin\n"
	files[dir+"/bin/python3"] = script
}

func TestNeeded(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		marker     *marker // written into .venv after setup of the tree
		wantCreate bool
		wantReason string // "" means nothing to do
	}{
		{"requirements and no environment", map[string]string{"requirements.txt": "langgraph\n"}, nil, true, "no Python environment"},
		{"pyproject and no environment", map[string]string{"pyproject.toml": "[project]\ndependencies=[\"langgraph\"]\n"}, nil, true, "pyproject.toml"},
		{"nothing declared", map[string]string{}, nil, false, ""},
		{"user's own venv", map[string]string{"requirements.txt": "langgraph\n", "venv": ""}, nil, false, ""},
		{"our venv, up to date", map[string]string{"requirements.txt": "langgraph\n", "venv": ""}, &marker{Complete: true}, false, ""},
		{"our venv, unfinished", map[string]string{"requirements.txt": "langgraph\n", "venv": ""}, &marker{}, false, "did not finish"},
		{"our venv, requirements changed", map[string]string{"requirements.txt": "langgraph\n", "venv": ""}, &marker{Complete: true, Digest: "old"}, false, "changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agentengine.yaml": yaml, "agent.py": "graph = 1\n"}
			for k, v := range tt.files {
				if k == "venv" {
					fakeVenv(files, ".venv", "#!/bin/sh\n")
					continue
				}
				files[k] = v
			}
			dir := writeTree(t, files)
			p, err := project.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.marker != nil {
				reqs, _ := p.Requirements()
				m := *tt.marker
				if m.Digest == "" {
					m.Digest = digest(reqs, testRunner, Hints(p, reqs))
				}
				if err := writeMarker(filepath.Join(dir, ".venv"), m); err != nil {
					t.Fatal(err)
				}
			}
			a, err := Needed(p, testRunner)
			if err != nil {
				t.Fatal(err)
			}
			if (a.Create != "") != tt.wantCreate || (tt.wantCreate && a.Create != filepath.Join(dir, ".venv")) {
				t.Fatalf("create %q", a.Create)
			}
			if tt.wantReason == "" {
				if !a.None() {
					t.Fatalf("want nothing to do, got %+v", a)
				}
				return
			}
			if !a.Install || !strings.Contains(a.Reason, tt.wantReason) {
				t.Fatalf("got %+v, want an install because %q", a, tt.wantReason)
			}
		})
	}
}

func TestNeededLeavesGoProjectsAlone(t *testing.T) {
	dir := writeTree(t, map[string]string{"agentengine.yaml": "name: g\nframework: go\n", "requirements.txt": "x\n"})
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := Needed(p, testRunner); err != nil || !a.None() {
		t.Fatalf("%+v %v", a, err)
	}
}

func TestVersions(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr bool
		old     bool
	}{
		{"3.11.7\n", Version{3, 11, 7}, false, false},
		{"3.10", Version{3, 10, 0}, false, true},
		{"3.11", Version{3, 11, 0}, false, false},
		{"3.9.18", Version{3, 9, 18}, false, true},
		{"2.7.18", Version{2, 7, 18}, false, true},
		{"4.0.0", Version{4, 0, 0}, false, false},
		{"Python 3", Version{}, true, false},
		{"3.x.1", Version{}, true, false},
	}
	for _, tt := range tests {
		v, err := ParseVersion(tt.in)
		if (err != nil) != tt.wantErr || v != tt.want {
			t.Fatalf("%q: %v %v", tt.in, v, err)
		}
		if err == nil && v.Less(MinVersion()) != tt.old {
			t.Fatalf("%q: old %v", tt.in, v.Less(MinVersion()))
		}
	}
}

func TestSplitFixAndQuote(t *testing.T) {
	d, f := splitFix(`agentengine.yaml: field "entry_point": x.py does not exist; fix: point it at agent.py`)
	if d != `agentengine.yaml: field "entry_point": x.py does not exist` || f != "point it at agent.py" {
		t.Fatalf("%q / %q", d, f)
	}
	if d, f := splitFix("plain"); d != "plain" || f != "" {
		t.Fatalf("%q / %q", d, f)
	}
	for in, want := range map[string]string{"examples/chat": "examples/chat", "my dir": "'my dir'", "it's": `'it'\''s'`} {
		if got := shellQuote(in); got != want {
			t.Fatalf("quote %q = %q", in, got)
		}
	}
}

// fakePython answers the doctor's probes like an interpreter would: its version, the
// installed packages, and the bridge's doctor report.
const fakePython = `#!/bin/sh
case "$2" in
  *version_info*) echo "%s"; exit 0;;
  *metadata*) echo '{"langgraph": "1.2.22", "aiosqlite": ""}'; exit 0;;
esac
if [ "$1" = "-m" ] && [ "$2" = "agentengine_adapters" ]; then
  [ "$AGENTENGINE_ENTRY_POINT" = "agent.py:graph" ] || { echo "no contract env" >&2; exit 3; }
  echo '{"ok": false, "checks": [{"name": "grpcio", "ok": true, "detail": "1.85.1"}, {"name": "entry point", "ok": false, "detail": "agent.py has no graph", "fix": "define graph"}]}'
  exit 1
fi
exit 2
`

func TestDoctor(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		version string
		want    map[string]bool   // check name → ok
		fixes   map[string]string // check name → fix substring
	}{
		{
			name:  "broken config",
			files: map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: nope.py:graph\n"},
			want:  map[string]bool{"config": false},
			fixes: map[string]string{"config": "point entry_point at"},
		},
		{
			name:    "python too old",
			files:   map[string]string{"agentengine.yaml": yaml, "agent.py": "graph = 1\n", "venv": ""},
			version: "3.9.1",
			want:    map[string]bool{"config": true, "interpreter": true, "python version": false},
			fixes:   map[string]string{"python version": "3.11"},
		},
		{
			name:    "requirements missing, bridge findings appended",
			files:   map[string]string{"agentengine.yaml": yaml, "agent.py": "graph = 1\n", "venv": "", "requirements.txt": "langgraph==1.2.22\naiosqlite==0.22.1\n"},
			version: "3.11.7",
			want:    map[string]bool{"config": true, "interpreter": true, "python version": true, "environment": true, "requirements": false, "grpcio": true, "entry point": false},
			fixes:   map[string]string{"requirements": "agentengine setup", "entry point": "define graph"},
		},
		{
			name:    "an import KsADK would have provided is named, with the venv's pip",
			files:   map[string]string{"agentengine.yaml": yaml, "agent.py": "from dotenv import load_dotenv\ngraph = 1\n", "venv": "", "requirements.txt": "langgraph==1.2.22\n"},
			version: "3.11.7",
			want:    map[string]bool{"config": true, "interpreter": true, "python version": true, "environment": true, "requirements": true, "imports": false, "grpcio": true, "entry point": false},
			fixes:   map[string]string{"imports": "/.venv/bin/python3 -m pip install python-dotenv"},
		},
		{
			name: "python: names a system interpreter: the fix makes a virtualenv first",
			files: map[string]string{"agentengine.yaml": yaml + "python: tools/bin/python3\n", "agent.py": "graph = 1\n",
				"tools/bin/python3": strings.Replace(fakePython, "%s", "3.11.7", 1), "requirements.txt": "aiosqlite==0.22.1\n"},
			want:  map[string]bool{"config": true, "interpreter": true, "python version": true, "environment": true, "requirements": false, "grpcio": true, "entry point": false},
			fixes: map[string]string{"requirements": "set `python: .venv` in agentengine.yaml, then run `agentengine setup "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range tt.files {
				if k == "venv" {
					fakeVenv(files, ".venv", strings.Replace(fakePython, "%s", tt.version, 1))
					continue
				}
				files[k] = v
			}
			dir := writeTree(t, files)
			rep := Doctor(t.Context(), dir, DoctorOptions{PythonPath: []string{"/bridge"}})
			if rep.OK {
				t.Fatalf("report ok: %+v", rep)
			}
			got := map[string]Check{}
			for _, c := range rep.Checks {
				got[c.Name] = c
			}
			if len(got) != len(tt.want) {
				t.Errorf("checks %+v", rep.Checks)
			}
			for name, ok := range tt.want {
				c, found := got[name]
				if !found || c.OK != ok {
					t.Errorf("check %q: %+v (found %v), want ok=%v", name, c, found, ok)
				}
			}
			for name, fix := range tt.fixes {
				if !strings.Contains(got[name].Fix, fix) {
					t.Errorf("check %q fix %q lacks %q", name, got[name].Fix, fix)
				}
			}
			if c := got["requirements"]; tt.name == "requirements missing, bridge findings appended" && !strings.Contains(c.Detail, "missing: aiosqlite") {
				t.Errorf("requirements detail %q", c.Detail)
			}
			if c, ok := got["imports"]; ok && !strings.Contains(c.Detail, "python-dotenv (agent.py:1 imports dotenv)") {
				t.Errorf("imports detail %q", c.Detail)
			}
		})
	}
}

func hasPython() bool {
	for _, name := range []string{"python3", "python"} {
		if _, err := exec.LookPath(name); err == nil {
			return true
		}
	}
	return false
}

func TestSetupNeverWritesIntoAForeignDirectory(t *testing.T) {
	for _, tt := range []struct {
		name, yaml, dir string
		needsPython     bool // without `python:`, setup looks for an interpreter first
	}{
		{"python: names a plain directory", "python: env\n", "env", false},
		{".venv that is not a virtualenv", "", ".venv", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsPython && !hasPython() {
				t.Skip("needs python3 (or python) on PATH: setup finds an interpreter before it looks at .venv")
			}
			dir := writeTree(t, map[string]string{
				"agentengine.yaml": yaml + tt.yaml, "agent.py": "graph = 1\n",
				"requirements.txt": "langgraph\n", tt.dir + "/notes.txt": "mine\n",
			})
			p, err := project.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Setup(t.Context(), p, Options{})
			if err == nil || !strings.Contains(err.Error(), "not a virtualenv") {
				t.Fatalf("err %v", err)
			}
			entries, _ := os.ReadDir(filepath.Join(dir, tt.dir))
			if len(entries) != 1 {
				t.Fatalf("setup wrote into %s: %v", tt.dir, entries)
			}
		})
	}
}
