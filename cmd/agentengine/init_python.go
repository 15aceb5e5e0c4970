package main

import (
	"bytes"
	"embed"
	"fmt"
	"path/filepath"
	"strings"
	"text/template"

	agentengine "github.com/agentengine/agentengine"
	"github.com/agentengine/agentengine/host/pybridge"
)

// templates holds the Python scaffolds: templates/<framework>/ plus templates/common/.
//
//go:embed templates
var templates embed.FS

// pythonScaffold describes one framework's project.
type pythonScaffold struct {
	title      string
	entryPoint string
	// requirements are package names; their versions come from the constraints file, so
	// a scaffold pins exactly what the tests run with.
	requirements []string
}

func pythonScaffolds() map[string]pythonScaffold {
	// langgraph-checkpoint-sqlite: the bridge keeps checkpoints on disk so that interrupts
	// survive runner restarts. langchain-openai: chat_model() uses it once a key is set.
	return map[string]pythonScaffold{
		"langgraph": {"LangGraph", "agent.py:graph",
			[]string{"langgraph", "langchain-core", "langgraph-checkpoint-sqlite", "langchain-openai"}},
		"langchain": {"LangChain", "agent.py:agent",
			[]string{"langchain", "langgraph", "langchain-core", "langgraph-checkpoint-sqlite", "langchain-openai"}},
		"deepagents": {"DeepAgents", "agent.py:agent",
			[]string{"deepagents", "langchain", "langgraph", "langchain-core", "langgraph-checkpoint-sqlite", "langchain-openai"}},
		// google-adk: the ADK bridge rebuilds sessions from the host's store, no checkpointer.
		"adk": {"Google ADK", "agent.py:root_agent", []string{"google-adk", "google-genai", "openai"}},
	}
}

// constraintPins reads name==version lines of a constraints file (names normalised).
func constraintPins(data []byte) map[string]string {
	pins := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		name, ver, ok := strings.Cut(strings.TrimSpace(line), "==")
		if ok {
			pins[normPkg(name)] = strings.TrimSpace(ver)
		}
	}
	return pins
}

func normPkg(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(strings.TrimSpace(s)))
}

// pinnedRequirements renders requirements.txt from the embedded constraints file.
func pinnedRequirements(framework string, s pythonScaffold) ([]byte, error) {
	data, err := agentengine.PythonBridge.ReadFile(pybridge.ConstraintsFile)
	if err != nil {
		return nil, fmt.Errorf("embedded constraints: %w", err)
	}
	pins := constraintPins(data)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s agent requirements, pinned to the versions agentengine is tested with.\n", s.title)
	b.WriteString("# agentengine installs them (plus grpcio and protobuf for its runner SDK) into .venv.\n")
	for _, r := range s.requirements {
		v, ok := pins[normPkg(r)]
		if !ok {
			return nil, fmt.Errorf("internal error: %s scaffold needs %s, which the constraints file does not pin", framework, r)
		}
		fmt.Fprintf(&b, "%s==%s\n", r, v)
	}
	return b.Bytes(), nil
}

// pythonProjectFiles renders the scaffold of a Python framework project.
func pythonProjectFiles(dir, name, framework string) (map[string][]byte, error) {
	s, ok := pythonScaffolds()[framework]
	if !ok {
		return nil, fmt.Errorf("no scaffold for %q", framework)
	}
	data := struct{ Name, Framework, Title, EntryPoint, Dir string }{name, framework, s.title, s.entryPoint, dir}
	render := func(path string) ([]byte, error) {
		src, err := templates.ReadFile(path)
		if err != nil {
			return nil, err
		}
		t, err := template.New(path).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", path, err)
		}
		var out bytes.Buffer
		if err := t.Execute(&out, data); err != nil {
			return nil, fmt.Errorf("template %s: %w", path, err)
		}
		return out.Bytes(), nil
	}
	files := map[string][]byte{}
	for dst, src := range map[string]string{
		"agent.py":         filepath.ToSlash(filepath.Join("templates", framework, "agent.py")),
		"agentengine.yaml": "templates/common/agentengine.yaml",
		"README.md":        "templates/common/README.md",
		".env.example":     "templates/common/env.example",
		".gitignore":       "templates/common/gitignore",
	} {
		b, err := render(src)
		if err != nil {
			return nil, err
		}
		files[dst] = b
	}
	req, err := pinnedRequirements(framework, s)
	if err != nil {
		return nil, err
	}
	files["requirements.txt"] = req
	return files, nil
}
