package project

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// writeTree creates files (path → content) under a new temp dir and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const graphPy = "from langgraph.graph import StateGraph\ngraph = build()\n"

func TestLoadPythonProjects(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		wantErr   []string // substrings the error must contain
		wantName  string
		wantFW    string
		wantEntry string
		wantAttr  string
		wantCfg   string // base name of ConfigPath
	}{
		{
			name:     "agentengine.yaml with file entry",
			files:    map[string]string{"agentengine.yaml": "name: chat\nframework: langgraph\nentry_point: agent.py:graph\n", "agent.py": graphPy},
			wantName: "chat", wantFW: "langgraph", wantEntry: "agent.py:graph", wantAttr: "graph", wantCfg: "agentengine.yaml",
		},
		{
			name:     "KsADK defaults: agent.py and root_agent",
			files:    map[string]string{"agentengine.yaml": "name: qa\nframework: LangChain\n", "agent.py": "root_agent = create_agent()\n"},
			wantName: "qa", wantFW: "langchain", wantEntry: "agent.py", wantAttr: "root_agent", wantCfg: "agentengine.yaml",
		},
		{
			name:     "module entry in a package",
			files:    map[string]string{"agentengine.yaml": "name: r\nframework: deepagents\nentry_point: research.agent:agent\n", "research/__init__.py": "", "research/agent.py": "agent = x\n"},
			wantName: "r", wantFW: "deepagents", wantEntry: "research.agent:agent", wantAttr: "agent", wantCfg: "agentengine.yaml",
		},
		{
			name:     "KsADK runner_class",
			files:    map[string]string{"agentengine.yaml": "name: lt\nframework: langgraph\nrunner_class: ' agent.LongTaskE2ERunner '\n", "agent.py": "class LongTaskE2ERunner: pass\n"},
			wantName: "lt", wantFW: "langgraph", wantEntry: "agent.py", wantAttr: "root_agent", wantCfg: "agentengine.yaml",
		},
		{
			name:    "runner_class without a module",
			files:   map[string]string{"agentengine.yaml": "name: lt\nframework: langgraph\nrunner_class: LongTaskRunner\n", "agent.py": "x = 1\n"},
			wantErr: []string{`field "runner_class"`, `"LongTaskRunner" is not a fully-qualified class path`, "module.Class"},
		},
		{
			name:    "runner_class on an adk project",
			files:   map[string]string{"agentengine.yaml": "name: lt\nframework: adk\nrunner_class: agent.R\n", "agent.py": "x = 1\n"},
			wantErr: []string{`field "runner_class"`, "remove it from this adk project"},
		},
		{
			name:     "installed module is not checked",
			files:    map[string]string{"agentengine.yaml": "name: r\nframework: langgraph\nentry_point: some_pkg.graphs:main\n"},
			wantName: "r", wantFW: "langgraph", wantEntry: "some_pkg.graphs:main", wantAttr: "main", wantCfg: "agentengine.yaml",
		},
		{
			name:   "langgraph.json alone",
			files:  map[string]string{"langgraph.json": `{"graphs": {"agent": "./src/agent.py:graph"}, "dependencies": ["."]}`, "src/agent.py": graphPy},
			wantFW: "langgraph", wantEntry: "./src/agent.py:graph", wantAttr: "graph", wantCfg: "langgraph.json",
		},
		{
			name:   "langgraph.json graph object form",
			files:  map[string]string{"langgraph.json": `{"graphs": {"agent": {"path": "./agent.py:graph", "description": "d"}}}`, "agent.py": graphPy},
			wantFW: "langgraph", wantEntry: "./agent.py:graph", wantAttr: "graph", wantCfg: "langgraph.json",
		},
		{
			name:     "agentengine.yaml without entry takes the graph of langgraph.json",
			files:    map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\n", "langgraph.json": `{"graphs": {"g": "./agent.py:graph"}}`, "agent.py": graphPy},
			wantName: "x", wantFW: "langgraph", wantEntry: "./agent.py:graph", wantAttr: "graph", wantCfg: "agentengine.yaml",
		},
		{
			name:     "agentengine.yaml entry wins over langgraph.json",
			files:    map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: b.py:graph\n", "langgraph.json": `{"graphs": {"a": "./a.py:graph", "b": "./b.py:graph"}}`, "b.py": graphPy},
			wantName: "x", wantFW: "langgraph", wantEntry: "b.py:graph", wantAttr: "graph", wantCfg: "agentengine.yaml",
		},
		{
			name:    "several graphs need a choice",
			files:   map[string]string{"langgraph.json": `{"graphs": {"a": "./a.py:graph", "b": "./b.py:graph"}}`},
			wantErr: []string{"langgraph.json", `"graphs"`, "2 graphs", "entry_point: ./a.py:graph", "fix:"},
		},
		{
			name:    "missing entry file names file, field and fix",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: agnet.py:graph\n", "agent.py": graphPy},
			wantErr: []string{"agentengine.yaml", `"entry_point"`, "agnet.py does not exist", "fix:", "agent.py:graph"},
		},
		{
			name:    "missing file from langgraph.json names that file",
			files:   map[string]string{"langgraph.json": `{"graphs": {"a": "./nope.py:graph"}}`},
			wantErr: []string{"langgraph.json", `"graphs"`, "nope.py does not exist"},
		},
		{
			name:    "object not defined",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: agent.py:grpah\n", "agent.py": "app = 1\ngraph = 2\n"},
			wantErr: []string{`"entry_point"`, `does not define "grpah"`, "graph"},
		},
		{
			name:    "agent_variable not defined",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\n", "agent.py": "graph = 2\n"},
			wantErr: []string{`"agent_variable"`, `"root_agent"`, "fix:"},
		},
		{
			name:    "no entry point and no agent.py",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\n", "graph.py": graphPy},
			wantErr: []string{`"entry_point"`, "missing", "graph.py:graph"},
		},
		{
			name:    "entry outside the project",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: ../agent.py:graph\n"},
			wantErr: []string{`"entry_point"`, "outside the project"},
		},
		{
			name:    "bad attr",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: agent.py:9x\n", "agent.py": graphPy},
			wantErr: []string{`"entry_point"`, "not a Python identifier"},
		},
		{
			name:    "adk without agent.py",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: adk\n"},
			wantErr: []string{`"entry_point"`, "no agent.py"},
		},
		{
			name:    "binary on a python project",
			files:   map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nbinary: x\n"},
			wantErr: []string{`"binary"`},
		},
		{
			name:    "invalid langgraph.json",
			files:   map[string]string{"langgraph.json": `{"graphs": `},
			wantErr: []string{"langgraph.json is not valid JSON"},
		},
		{
			name:    "nothing there",
			files:   map[string]string{"README.md": "x"},
			wantErr: []string{"no agentengine.yaml (or langgraph.json)", "agentengine init"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			p, err := Load(dir)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("loaded %+v, want an error", p.Config)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q\nlacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantName := tt.wantName
			if wantName == "" {
				wantName = filepath.Base(dir)
			}
			if p.Name != wantName || p.Framework != tt.wantFW || p.EntryPoint != tt.wantEntry || p.Entry.Attr != tt.wantAttr || filepath.Base(p.ConfigPath) != tt.wantCfg {
				t.Fatalf("got name %q fw %q entry %q attr %q cfg %q", p.Name, p.Framework, p.EntryPoint, p.Entry.Attr, p.ConfigPath)
			}
			if !p.IsPython() || p.AgentVariable == "" || p.Processes != 1 {
				t.Fatalf("python defaults: %+v", p.Config)
			}
		})
	}
}

func TestFindPython(t *testing.T) {
	venv := func(files map[string]string, dir string) {
		files[dir+"/pyvenv.cfg"] = "home = /usr/bin\n"
		files[dir+"/bin/python3"] = "#!/bin/sh\n"
	}
	base := map[string]string{"agent.py": graphPy}
	tests := []struct {
		name       string
		yaml       string
		venvs      []string
		wantSuffix string
		wantSource string
		wantVenv   bool
		wantErr    string
	}{
		{"dot venv first", "", []string{".venv", "venv"}, ".venv/bin/python3", SourceDotVenv, true, ""},
		{"then venv", "", []string{"venv"}, "venv/bin/python3", SourceVenv, true, ""},
		{"python: venv dir wins", "python: envs/py\n", []string{".venv", "envs/py"}, "envs/py/bin/python3", SourceConfig, true, ""},
		{"python: interpreter in a venv", "python: envs/py/bin/python3\n", []string{"envs/py"}, "envs/py/bin/python3", SourceConfig, true, ""},
		{"python: missing dir", "python: envs/none\n", nil, "", "", false, "agentengine setup"},
		{"python: missing interpreter", "python: /nonexistent/python3.12\n", nil, "", "", false, "does not exist"},
		{"python: not a venv", "python: sub\n", []string{}, "", "", false, "not a virtualenv"},
		{"PATH fallback", "", nil, "", SourcePath, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: agent.py:graph\n" + tt.yaml}
			for k, v := range base {
				files[k] = v
			}
			for _, v := range tt.venvs {
				venv(files, v)
			}
			if tt.name == "python: not a venv" {
				files["sub/readme"] = "x"
			}
			dir := writeTree(t, files)
			for _, v := range tt.venvs {
				if err := os.Chmod(filepath.Join(dir, v, "bin", "python3"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			in, err := p.FindPython()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `"python"`) {
					t.Fatalf("err %v, want %q naming the python field", err, tt.wantErr)
				}
				return
			}
			if tt.wantSource == SourcePath {
				if err != nil && !strings.Contains(err.Error(), "python3") {
					t.Fatal(err)
				}
				if err == nil && (in.Source != SourcePath || !filepath.IsAbs(in.Path)) {
					t.Fatalf("got %+v", in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(in.Path, tt.wantSuffix) || in.Source != tt.wantSource || (in.Venv != "") != tt.wantVenv || !filepath.IsAbs(in.Path) {
				t.Fatalf("got %+v", in)
			}
		})
	}
}

func TestPythonEnvIsTheContract(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"agentengine.yaml":  "name: chat\nframework: langgraph\nentry_point: ./agent.py:graph\nenv:\n  FROM_YAML: y\n  SHARED: yaml\n",
		"agent.py":          graphPy,
		".env":              "OPENAI_API_KEY=sk-test\nSHARED=dotenv\nPYTHONPATH=lib\n",
		".venv/pyvenv.cfg":  "home = /usr/bin\n",
		".venv/bin/python3": "#!/bin/sh\n",
	})
	t.Setenv("FROM_THE_SHELL", "exported")
	t.Setenv("SHARED", "shell")
	t.Setenv("AGENTENGINE_TOKEN", "host-secret")
	t.Setenv("KSADK_SESSION_DSN", "postgres://u:pw@db/x")
	t.Setenv("AGENTENGINE_TEST_PG_DSN", "postgres://u:pw@db/y")
	t.Setenv("PGPASSWORD", "pw")
	t.Setenv("PYTHONPATH", "/host/path")
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.RunnerLaunch(t.Context(), BuildOptions{PythonPath: []string{"/b/sdk", "/b/adapters"}})
	if err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(dir, ".venv")
	if l.Python.Path != filepath.Join(venv, "bin", "python3") || l.Python.Venv != venv {
		t.Fatalf("interpreter %+v", l.Python)
	}
	if want := []string{l.Python.Path, "-u", "-m", "agentengine_adapters"}; !slices.Equal(l.Command, want) || l.Dir != dir {
		t.Fatalf("command %v in %s", l.Command, l.Dir)
	}
	env := map[string]string{}
	for _, kv := range l.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	want := map[string]string{
		"AGENTENGINE_PROJECT_DIR":    dir,
		"AGENTENGINE_AGENT_NAME":     "chat",
		"AGENTENGINE_FRAMEWORK":      "langgraph",
		"AGENTENGINE_ENTRY_POINT":    "./agent.py:graph",
		"AGENTENGINE_AGENT_VARIABLE": "root_agent",
		"AGENTENGINE_STATE_DIR":      filepath.Join(dir, ".agentengine"),
		"PYTHONPATH":                 "/b/sdk:/b/adapters:lib:/host/path",
		"FROM_THE_SHELL":             "exported",
		"OPENAI_API_KEY":             "sk-test",
		"FROM_YAML":                  "y",
		"SHARED":                     "yaml",
		"VIRTUAL_ENV":                venv,
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	if !strings.HasPrefix(env["PATH"], filepath.Join(venv, "bin")+string(os.PathListSeparator)) {
		t.Errorf("PATH %q does not start with the venv's bin", env["PATH"])
	}
	for _, k := range []string{"AGENTENGINE_TOKEN", "KSADK_SESSION_DSN", "AGENTENGINE_TEST_PG_DSN", "PGPASSWORD"} {
		if _, ok := env[k]; ok {
			t.Errorf("agentengine's secret %s reached the runner", k)
		}
	}
	// --isolate-env: only what is configured, and the basics.
	p.IsolateEnv = true
	l, err = p.RunnerLaunch(t.Context(), BuildOptions{PythonPath: []string{"/b/sdk", "/b/adapters"}})
	if err != nil {
		t.Fatal(err)
	}
	isolated := map[string]string{}
	for _, kv := range l.Env {
		k, v, _ := strings.Cut(kv, "=")
		isolated[k] = v
	}
	if _, ok := isolated["FROM_THE_SHELL"]; ok || isolated["OPENAI_API_KEY"] != "sk-test" || isolated["SHARED"] != "yaml" ||
		isolated["PYTHONPATH"] != "/b/sdk:/b/adapters:lib" || isolated["HOME"] != os.Getenv("HOME") {
		t.Errorf("isolated environment %v", isolated)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agentengine")); err != nil {
		t.Errorf("state dir not created: %v", err)
	}
}

func TestRequirements(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		sources  []string
		packages []string
		parsed   []Requirement
	}{
		{"none", map[string]string{}, nil, nil, nil},
		{"requirements.txt", map[string]string{"requirements.txt": "# pins\nlanggraph==1.2.22  # graph\nlangchain-core[extra]==1.8.1\n-r more.txt\nhttpx>=0.27\n-e .\n", "more.txt": "aiosqlite==0.22.1\n"},
			[]string{"requirements.txt"}, nil,
			[]Requirement{{Name: "aiosqlite", Pin: "0.22.1"}, {Name: "httpx"}, {Name: "langchain-core", Pin: "1.8.1", Extras: []string{"extra"}}, {Name: "langgraph", Pin: "1.2.22"}}},
		{"pyproject", map[string]string{"pyproject.toml": "[project]\nname='x'\ndependencies = [\"langgraph==1.2.22\", \"rich; python_version>'3'\"]\n"},
			[]string{"pyproject.toml"}, []string{"langgraph==1.2.22", "rich; python_version>'3'"},
			[]Requirement{{Name: "langgraph", Pin: "1.2.22"}, {Name: "rich"}}},
		{"pyproject without project table", map[string]string{"pyproject.toml": "[tool.ruff]\nx=1\n"}, nil, nil, nil},
		{"langgraph.json deps", map[string]string{"langgraph.json": `{"graphs":{"a":"./agent.py:graph"},"dependencies":[".","./sub","langchain-openai==1.7.4"]}`, "sub/requirements.txt": "deepagents==0.7.32\n"},
			[]string{"sub/requirements.txt", "langgraph.json"}, []string{"langchain-openai==1.7.4"},
			[]Requirement{{Name: "deepagents", Pin: "0.7.32"}, {Name: "langchain-openai", Pin: "1.7.4"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agent.py": graphPy}
			if _, ok := tt.files["langgraph.json"]; !ok {
				files["agentengine.yaml"] = "name: x\nframework: langgraph\nentry_point: agent.py:graph\n"
			}
			for k, v := range tt.files {
				files[k] = v
			}
			p, err := Load(writeTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Requirements()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Sources, tt.sources) || !slices.Equal(r.Packages, tt.packages) || r.Empty() != (len(tt.sources) == 0) {
				t.Fatalf("sources %v packages %v", r.Sources, r.Packages)
			}
			got, err := ParseRequirements(r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.parsed) {
				t.Fatalf("parsed %v, want %v", got, tt.parsed)
			}
			if d1, d2 := r.Digest(), r.Digest(); d1 != d2 {
				t.Fatal("digest is not stable")
			}
		})
	}
}

func TestLangGraphEnv(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"langgraph.json": `{"graphs":{"a":"./agent.py:graph"},"env":"conf/app.env"}`,
		"agent.py":       graphPy,
		"conf/app.env":   "FROM_FILE=1\n",
		".env":           "FROM_DOTENV=1\n",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	env, err := p.ProjectEnv()
	if err != nil {
		t.Fatal(err)
	}
	if env["FROM_FILE"] != "1" || env["FROM_DOTENV"] != "1" {
		t.Fatalf("env %v", env)
	}
	dir = writeTree(t, map[string]string{
		"langgraph.json": `{"graphs":{"a":"./agent.py:graph"},"env":{"A":"map"}}`,
		"agent.py":       graphPy,
		".env":           "B=${A}-x\n",
	})
	if p, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if env, err = p.ProjectEnv(); err != nil || env["A"] != "map" || env["B"] != "map-x" {
		t.Fatalf("env %v %v", env, err)
	}
	// A broken .env is an error naming the file and line.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("OK=1\nbroken line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ProjectEnv(); err == nil || !strings.Contains(err.Error(), ".env: line 2") {
		t.Fatalf("err %v", err)
	}
}

func TestProcesses(t *testing.T) {
	auto := AutoMaxProcesses()
	tests := []struct {
		name      string
		framework string
		setting   string // the `processes` line; empty for none
		start     int
		max       int
		wantErr   string
	}{
		{"python default: one, growing while CPU-bound", "langgraph", "", 1, auto, ""},
		{"python auto", "adk", "processes: auto", 1, auto, ""},
		{"python auto, any case", "langchain", "processes: ' Auto '", 1, auto, ""},
		{"python fixed", "deepagents", "processes: 3", 3, 3, ""},
		{"python fixed one", "langgraph", "processes: 1", 1, 1, ""},
		{"zero is the default", "langgraph", "processes: 0", 1, auto, ""},
		{"go default: one process uses every core", "go", "", 1, 1, ""},
		{"go auto is one", "go", "processes: auto", 1, 1, ""},
		{"go fixed", "go", "processes: 2", 2, 2, ""},
		{"negative", "langgraph", "processes: -1", 0, 0, "not a number of processes"},
		{"fraction", "langgraph", "processes: 1.5", 0, 0, "not a number of processes"},
		{"word", "langgraph", "processes: many", 0, 0, `"many" is not a number of processes`},
		{"bool", "langgraph", "processes: true", 0, 0, "not a number of processes"},
		{"too many", "langgraph", "processes: 1000", 0, 0, "too many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			cfg := "name: a\nframework: " + tt.framework + "\n"
			if tt.framework == "go" {
				cfg += "binary: runner\n"
				files["runner"] = "#!/bin/sh\n"
			} else {
				cfg += "entry_point: agent.py:graph\n"
				files["agent.py"] = graphPy
			}
			if tt.setting != "" {
				cfg += tt.setting + "\n"
			}
			files["agentengine.yaml"] = cfg
			p, err := Load(writeTree(t, files))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `"processes"`) {
					t.Fatalf("error %v, want one about \"processes\" containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Processes != tt.start || p.MaxProcesses != tt.max {
				t.Fatalf("processes %d up to %d, want %d up to %d", p.Processes, p.MaxProcesses, tt.start, tt.max)
			}
		})
	}
}

func TestRunnerClassReachesTheBridge(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"agentengine.yaml": "name: lt\nframework: langgraph\nrunner_class: ' agent.LongTaskE2ERunner '\n",
		"agent.py":         "class LongTaskE2ERunner: pass\n",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	env, err := p.PythonEnv(Interpreter{Path: "/usr/bin/python3"}, []string{"/b"})
	if err != nil {
		t.Fatal(err)
	}
	if p.RunnerClass != "agent.LongTaskE2ERunner" || !slices.Contains(env, EnvRunnerClass+"=agent.LongTaskE2ERunner") {
		t.Fatalf("runner class %q, env %v", p.RunnerClass, env)
	}
	// Without one the variable is not set at all.
	p.RunnerClass = ""
	env, _ = p.PythonEnv(Interpreter{Path: "/usr/bin/python3"}, []string{"/b"})
	for _, kv := range env {
		if strings.HasPrefix(kv, EnvRunnerClass+"=") {
			t.Fatalf("%s set without runner_class", kv)
		}
	}
}
