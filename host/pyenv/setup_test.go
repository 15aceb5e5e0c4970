package pyenv

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/project"
)

// pip's explanations as pip 23 (" and ") and pip 24+ (",") print them.
const (
	pip23Conflict = `Collecting protobuf<8,>=4.25
ERROR: Cannot install protobuf<8 and >=4.25 and protobuf==3.20.3 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested protobuf<8 and >=4.25
    The user requested protobuf==3.20.3

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts
`
	pip25Transitive = `ERROR: Cannot install -r requirements.txt (line 1) and protobuf<8,>=4.25 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested protobuf<8,>=4.25
    grpcio-tools 1.48.2 depends on protobuf<4.0dev,>=3.12.0
    grpcio-tools 1.48.1 depends on protobuf<4.0dev,>=3.12.0

To fix this you could try to:
`
	pipOwnConflict = `The conflict is caused by:
    ksadk 0.8.5 depends on opentelemetry-api<=1.41.1 and >=1.39.0
    google-adk 2.13.0 depends on opentelemetry-api>=1.44.0

To fix this you could try to:
`
)

func TestConflictError(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want []string
	}{
		{"a pin against the runner (pip 23)", pip23Conflict, []string{
			"together with what the agentengine runner needs",
			"protobuf: the agentengine runner needs protobuf>=4.25,<8; requirements.txt asks for protobuf==3.20.3",
			"fix: change protobuf==3.20.3 in requirements.txt to allow protobuf>=4.25,<8, then run `agentengine setup 'my dir'`",
		}},
		{"a dependency against the runner (pip 25)", pip25Transitive, []string{
			"protobuf: the agentengine runner needs protobuf>=4.25,<8; grpcio-tools 1.48.2 requires protobuf<4.0dev,>=3.12.0\n",
			"require a version of grpcio-tools in requirements.txt that accepts protobuf>=4.25,<8",
		}},
		{"the project's own requirements", pipOwnConflict, []string{
			"pip cannot install requirements.txt: its requirements conflict",
			"opentelemetry-api: ksadk 0.8.5 requires opentelemetry-api<=1.41.1,>=1.39.0; google-adk 2.13.0 requires opentelemetry-api>=1.44.0",
			"fix: change one of these requirements in requirements.txt so that they agree",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := conflictError(parseConflict(tt.out), testRunner, nil, []string{"requirements.txt"}, "agentengine setup "+shellQuote("my dir"))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%s", w, err)
				}
			}
			if strings.Contains(err.Error(), "1.48.1") {
				t.Errorf("every tried version listed:\n%s", err)
			}
		})
	}
	added := "The conflict is caused by:\n    The user requested litellm<=1.83.14 and >=1.83.7\n    crewai 1.2.0 depends on litellm>=1.90\n\n"
	err := conflictError(parseConflict(added), testRunner, []string{"litellm>=1.83.7,<=1.83.14"}, []string{"requirements.txt"}, "agentengine setup x")
	for _, w := range []string{
		"litellm: setup added litellm<=1.83.14,>=1.83.7 because the code imports it; crewai 1.2.0 requires litellm>=1.90",
		"fix: add a version of litellm that fits the other requirements to requirements.txt",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if err := conflictError(parseConflict("ERROR: No matching distribution found for nope"), testRunner, nil, nil, "x"); err != nil {
		t.Fatalf("a failure that is no conflict: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	out := "ERROR: Could not find a version that satisfies the requirement langgraph==9.9 (from versions: 0.1, 1.2.22)\nERROR: No matching distribution found for langgraph==9.9\n"
	if got := notFound(out); got != "langgraph==9.9" {
		t.Fatalf("got %q", got)
	}
	if got := notFound("Successfully installed x"); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestHints(t *testing.T) {
	const adkAgent = "import os\nfrom dotenv import load_dotenv\nfrom google.adk.agents import LlmAgent\nfrom google.adk.models.lite_llm import LiteLlm\nimport common.tools\n"
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"KsADK init -f adk", map[string]string{"requirements.txt": "requests_aws4auth\ngoogle-adk\npython-dotenv\n", "agent.py": adkAgent},
			[]string{"litellm"}},
		{"nothing listed", map[string]string{"requirements.txt": "google-adk\n", "agent.py": adkAgent},
			[]string{"litellm", "python-dotenv"}},
		{"LiteLlm from google.adk.models", map[string]string{"requirements.txt": "google-adk\npython-dotenv\n", "agent.py": "from google.adk.models import Gemini, LiteLlm\n"},
			[]string{"litellm"}},
		{"LiteLlm in a parenthesized import", map[string]string{"requirements.txt": "google-adk\npython-dotenv\n", "agent.py": "from google.adk.models import (  # models\n    Gemini,\n    LiteLlm,\n)\n"},
			[]string{"litellm"}},
		{"ksadk with the adk extra provides them", map[string]string{"requirements.txt": "ksadk[adk]>=0.7.0\n", "agent.py": adkAgent + "from langchain_openai import ChatOpenAI\n"},
			[]string{"langchain-openai"}},
		{"ksadk base provides dotenv, not litellm", map[string]string{"requirements.txt": "ksadk>=0.7.0\n", "agent.py": adkAgent},
			[]string{"litellm"}},
		{"listed under another spelling", map[string]string{"requirements.txt": "Python_Dotenv==1.2.2\nLiteLLM\ngoogle-adk\n", "agent.py": adkAgent},
			nil},
		{"virtualenvs, hidden dirs, docstrings and own modules are not the project's imports",
			map[string]string{
				"requirements.txt": "google-adk\n", "agent.py": "\"\"\"Example:\n\nimport litellm\n\"\"\"\nimport mcp\n",
				"mcp/__init__.py": "", ".venv/pyvenv.cfg": "", ".venv/lib/x.py": "import dotenv\n", ".hidden/y.py": "import dotenv\n", "env/pyvenv.cfg": "", "env/z.py": "import bs4\n",
			},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agentengine.yaml": "name: x\nframework: adk\nentry_point: agent.py:root_agent\n"}
			for k, v := range tt.files {
				files[k] = v
			}
			files["agent.py"] += "\nroot_agent = 1\n"
			p, err := project.Load(writeTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			reqs, _ := p.Requirements()
			hints := Hints(p, reqs)
			var got []string
			for _, h := range hints {
				got = append(got, distName(h.Dist))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("hints %v, want %v", hints, tt.want)
			}
			for _, h := range hints {
				if h.File != "agent.py" || h.Line == 0 {
					t.Errorf("hint %+v does not point at the import", h)
				}
			}
		})
	}
}

// fakePip records its arguments and answers like pip; with FAIL in the environment of the
// test it prints a resolution conflict instead.
const fakePip = `#!/bin/sh
echo "$@" > "$(dirname "$0")/../pip-args"
if [ -f "$(dirname "$0")/../fail" ]; then cat "$(dirname "$0")/../fail"; exit 1; fi
echo "Successfully installed grpcio protobuf"
`

func TestSetupInstallsTheRequirementsAsWritten(t *testing.T) {
	files := map[string]string{
		"agentengine.yaml": "name: x\nframework: adk\nentry_point: agent.py:root_agent\n",
		"agent.py":         "from google.adk.models.lite_llm import LiteLlm\nfrom dotenv import load_dotenv\nroot_agent = 1\n",
		"requirements.txt": "google-adk>=1.34,<2\npython-dotenv\nprotobuf==5.29.3\n",
	}
	fakeVenv(files, ".venv", fakePip)
	dir := writeTree(t, files)
	if err := writeMarker(filepath.Join(dir, ".venv"), marker{}); err != nil {
		t.Fatal(err)
	}
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Setup(t.Context(), p, Options{Runner: testRunner, Out: &out, DisplayDir: "my dir"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	args, _ := os.ReadFile(filepath.Join(dir, ".venv", "pip-args"))
	want := "-m pip install --disable-pip-version-check -r " + filepath.Join(dir, "requirements.txt") + " grpcio>=1.60 protobuf>=4.25,<8 litellm>=1.83.7,<=1.83.14\n"
	if string(args) != want {
		t.Fatalf("pip ran with\n  %s\nwant\n  %s", args, want)
	}
	for _, w := range []string{
		"note: also installing litellm>=1.83.7,<=1.83.14 (agent.py:1 imports google.adk.models.lite_llm), which requirements.txt does not list",
		"'protobuf>=4.25,<8'", // the printed command is pasteable
		"installed in ", "Python environment ready", "in all)",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if a, err := Needed(p, testRunner); err != nil || !a.None() {
		t.Fatalf("after setup: %+v %v", a, err)
	}
	// A new import KsADK would have provided makes the next run install again.
	if err := os.WriteFile(filepath.Join(dir, "agent.py"), []byte("from langchain_openai import ChatOpenAI\nroot_agent = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, _ := Needed(p, testRunner); !a.Install {
		t.Fatalf("a new import did not trigger an install: %+v", a)
	}

	// A conflict becomes an error that names the package, both requirements and the fix.
	if err := os.WriteFile(filepath.Join(dir, ".venv", "fail"), []byte(pip23Conflict), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Setup(t.Context(), p, Options{Runner: testRunner, Out: &out, DisplayDir: "my dir"})
	if err == nil || !strings.Contains(err.Error(), "protobuf==3.20.3 in requirements.txt") || !strings.Contains(err.Error(), "`agentengine setup 'my dir'`") {
		t.Fatalf("err %v", err)
	}
	if a, _ := Needed(p, testRunner); !a.Install {
		t.Fatal("a failed install is not redone by the next run")
	}

	// A requirement pip finds no release of is named.
	if err := os.WriteFile(filepath.Join(dir, ".venv", "fail"), []byte("ERROR: No matching distribution found for google-adk<2,>=1.34\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Setup(t.Context(), p, Options{Runner: testRunner, Out: &out, DisplayDir: "my dir"})
	if err == nil || !strings.Contains(err.Error(), "no release of google-adk<2,>=1.34") || !strings.Contains(err.Error(), "in requirements.txt") {
		t.Fatalf("err %v", err)
	}
}

func TestHintNotice(t *testing.T) {
	one := []Hint{{Dist: "litellm", Module: "litellm", File: "agent.py", Line: 2}}
	two := append(one, Hint{Dist: "python-dotenv", Module: "dotenv", File: "agent.py", Line: 1})
	for _, tt := range []struct {
		hints   []Hint
		sources []string
		want    string
	}{
		{one, []string{"requirements.txt"}, "note: also installing litellm (agent.py:2 imports litellm), which requirements.txt does not list and KsADK would have installed; add it to requirements.txt to make this explicit"},
		{two, nil, "note: also installing litellm (agent.py:2 imports litellm), python-dotenv (agent.py:1 imports dotenv), which the project's requirements do not list and KsADK would have installed; add them to requirements.txt to make this explicit"},
	} {
		if got := hintNotice(tt.hints, tt.sources); got != tt.want {
			t.Errorf("notice\n  %s\nwant\n  %s", got, tt.want)
		}
	}
}

func TestSetupNeverInstallsIntoASystemInterpreter(t *testing.T) {
	files := map[string]string{
		"agentengine.yaml": yaml + "python: tools/python3\n",
		"agent.py":         "graph = 1\n",
		"requirements.txt": "langgraph\n",
		"tools/python3":    fakePip,
	}
	dir := writeTree(t, files)
	if err := os.Chmod(filepath.Join(dir, "tools/python3"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Setup(t.Context(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "is not a virtualenv") || !strings.Contains(err.Error(), "python: .venv") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pip-args")); err == nil {
		t.Fatal("pip ran")
	}
}

// On a terminal pip's output is not captured; the conflict is asked for again with
// --dry-run, which installs nothing.
func TestExplainFailureAsksPipAgainWithoutInstalling(t *testing.T) {
	files := map[string]string{"agentengine.yaml": yaml, "agent.py": "graph = 1\n"}
	fakeVenv(files, ".venv", "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/../pip-args\"\necho 'The conflict is caused by:'\necho '    The user requested protobuf==3.20.3'\n")
	dir := writeTree(t, files)
	p, err := project.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	in, err := p.FindPython()
	if err != nil {
		t.Fatal(err)
	}
	out := explainFailure(t.Context(), p, in, []string{"-m", "pip", "install", "--disable-pip-version-check", "-r", "requirements.txt"})
	if c := parseConflict(out); len(c) != 1 || c[0].Spec != "protobuf==3.20.3" {
		t.Fatalf("parsed %+v from %q", c, out)
	}
	args, _ := os.ReadFile(filepath.Join(dir, ".venv", "pip-args"))
	if string(args) != "-m pip install --dry-run --disable-pip-version-check -r requirements.txt\n" {
		t.Fatalf("pip ran with %q", args)
	}
}
