package main

import (
	"bytes"
	"embed"
	"fmt"
	"path/filepath"
	"text/template"
)

// templates holds the Python scaffolds: templates/<framework>/agent.py, the offline models
// in templates/offline/ (copied as is) and templates/common/.
//
//go:embed templates
var templates embed.FS

// pythonScaffold describes one framework's project.
type pythonScaffold struct {
	title      string
	entryPoint string
	// offlineModel is the templates/offline file written as the project's offline_model.py.
	offlineModel string
	// requirements are what agent.py imports, each with the lowest version its code is
	// written for: lower bounds, not pins, so the project installs beside other packages.
	requirements []string
}

func pythonScaffolds() map[string]pythonScaffold {
	// langchain-openai and litellm are imported only with OPENAI_API_KEY set, but listed so
	// that setting the key is all it takes; litellm's [mcp] extra because litellm imports
	// mcp whenever the model is given tools. No checkpointer packages: the graphs have none.
	langchainFamily := "langchain_offline_model.py"
	return map[string]pythonScaffold{
		"langgraph": {"LangGraph", "agent.py:graph", langchainFamily,
			[]string{"langgraph>=0.6", "langchain-core>=0.3", "langchain-openai>=0.3"}},
		"langchain": {"LangChain", "agent.py:agent", langchainFamily,
			[]string{"langchain>=1.0", "langchain-core>=1.0", "langchain-openai>=1.0"}},
		"deepagents": {"DeepAgents", "agent.py:agent", langchainFamily,
			[]string{"deepagents>=0.2", "langchain-core>=1.0", "langchain-openai>=1.0"}},
		"adk": {"Google ADK", "agent.py:root_agent", "adk_offline_model.py",
			[]string{"google-adk>=1.34", "litellm[mcp]>=1.84"}},
	}
}

// requirementsFile renders requirements.txt.
func requirementsFile(s pythonScaffold) []byte {
	var b bytes.Buffer
	b.WriteString("# What agent.py and offline_model.py import. `agentengine run` installs these into .venv\n")
	b.WriteString("# (with the few packages its runner needs); `pip install -r requirements.txt` works as well.\n")
	for _, r := range s.requirements {
		b.WriteString(r + "\n")
	}
	return b.Bytes()
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
	offline, err := templates.ReadFile("templates/offline/" + s.offlineModel)
	if err != nil {
		return nil, fmt.Errorf("embedded template: %w", err)
	}
	files["offline_model.py"] = offline
	files["requirements.txt"] = requirementsFile(s)
	return files, nil
}

// sdkPythonProjectFiles renders the scaffold of a runner on the Python runner SDK
// (`framework: python`): its requirements are only what the SDK needs.
func sdkPythonProjectFiles(dir, name string, runnerReqs []string) (map[string][]byte, error) {
	data := struct{ Name, Dir string }{name, dir}
	files := map[string][]byte{}
	for dst, src := range map[string]string{"agent.py": "templates/python/agent.py", "README.md": "templates/python/README.md"} {
		raw, err := templates.ReadFile(src)
		if err != nil {
			return nil, err
		}
		t, err := template.New(src).Option("missingkey=error").Parse(string(raw))
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", src, err)
		}
		var out bytes.Buffer
		if err := t.Execute(&out, data); err != nil {
			return nil, fmt.Errorf("template %s: %w", src, err)
		}
		files[dst] = out.Bytes()
	}
	gi, err := templates.ReadFile("templates/common/gitignore")
	if err != nil {
		return nil, err
	}
	files[".gitignore"] = gi
	files["agentengine.yaml"] = []byte(fmt.Sprintf("# agentengine project: `agentengine run .` serves it, `agentengine doctor .` checks it.\n"+
		"name: %s            # the OpenAI \"model\" id clients select\n"+
		"framework: python     # a runner on the Python runner SDK\n"+
		"entry_point: agent.py:Agent   # file.py:Runner (or package.module:Runner)\n"+
		"# run_timeout: 10m     # a run still going after this ends failed (default: no limit)\n", name))
	var b bytes.Buffer
	b.WriteString("# The runner SDK ships inside agentengine; it needs only these. `agentengine run` installs\n")
	b.WriteString("# them into .venv on the first run.\n")
	for _, r := range runnerReqs {
		b.WriteString(r + "\n")
	}
	files["requirements.txt"] = b.Bytes()
	return files, nil
}
