package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/project"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func initCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb, strings.NewReader(""))
	root.SetArgs(args)
	err := root.Execute()
	return out.String() + errb.String(), err
}

const langgraphBuilder = `import os
from typing import TypedDict

from dotenv import load_dotenv
from langgraph.graph import StateGraph, START, END, MessagesState
from langchain_openai import ChatOpenAI

from helpers import tidy

builder = StateGraph(MessagesState)
builder.add_node("chat", lambda s: s)
builder.add_edge(START, "chat")
graph = builder.compile()
`

const customStateGraph = `from typing import TypedDict

from langgraph.graph import StateGraph, START, END


class QAState(TypedDict):
    question: str
    history: list
    answer: str


def answer(state: QAState) -> dict:
    return {"answer": "You asked: " + state["question"]}


workflow = StateGraph(QAState)
workflow.add_node("answer", answer)
workflow.add_edge(START, "answer")
workflow.add_edge("answer", END)
qa_graph = workflow.compile()
`

const adkAgent = `from google.adk.agents import Agent
from google.adk.models.lite_llm import LiteLlm

helper = Agent(name="helper", model=LiteLlm(model="openai/gpt-4o-mini"))
root_agent = Agent(name="assistant", model=LiteLlm(model="openai/gpt-4o-mini"), sub_agents=[helper])
`

func TestInitFromAgent(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		// path is what --from-agent gets, relative to the temp dir ("" = the dir).
		path                 string
		wantFramework        string
		wantEntry, wantVar   string
		wantReqs, notReqs    []string
		wantAdapter          bool
		adapterHas           []string
		extraArgs            []string
		wantName             string
		wantOutput, notExist string
	}{
		{
			name:          "single file: the compiled graph, not the builder",
			files:         map[string]string{"bot/agent.py": langgraphBuilder, "bot/helpers.py": "def tidy(s): return s\n"},
			path:          "bot/agent.py",
			wantFramework: "langgraph", wantEntry: "agent.py", wantVar: "graph",
			wantReqs: []string{"langchain-openai", "langgraph", "python-dotenv"},
			notReqs:  []string{"os", "typing", "helpers"},
			wantName: "bot",
		},
		{
			name:          "directory with an ADK package and LiteLlm",
			files:         map[string]string{"svc/assistant/__init__.py": "from .agent import root_agent\n", "svc/assistant/agent.py": adkAgent},
			path:          "svc",
			wantFramework: "adk", wantEntry: "assistant/agent.py", wantVar: "root_agent",
			wantReqs: []string{"google-adk", "litellm"},
			wantName: "svc",
		},
		{
			name:          "custom LangGraph state gets a ksadk_prepare_state adapter",
			files:         map[string]string{"qa/flow.py": customStateGraph},
			path:          "qa",
			extraArgs:     []string{"my-qa"},
			wantFramework: "langgraph", wantEntry: adapterFile, wantVar: "root_agent",
			wantReqs:    []string{"langgraph"},
			wantAdapter: true,
			adapterHas: []string{
				"from flow import qa_graph as root_agent",
				"def ksadk_prepare_state(payload: dict, session_context: dict) -> dict:",
				`state["question"] = payload.get("input", "")`,
				`state["history"] = session_context.get("history", [])`,
				"# answer (str): not set from the request",
			},
			wantName: "my-qa",
		},
		{
			name: "DeepAgents, framework from the imports",
			files: map[string]string{"deep/main.py": "from deepagents import create_deep_agent\n\n" +
				"agent = create_deep_agent(tools=[], system_prompt='hi')\n"},
			path:          "deep",
			wantFramework: "deepagents", wantEntry: "main.py", wantVar: "agent",
			wantReqs: []string{"deepagents"},
			wantName: "deep",
		},
		{
			name: "LangChain create_agent, with -f overriding nothing it needs",
			files: map[string]string{"lc/app.py": "from langchain.agents import create_agent\n\n" +
				"assistant = create_agent(model='openai:gpt-4o-mini', tools=[])\nroot_agent = assistant\n"},
			path:          "lc",
			extraArgs:     []string{"-f", "langchain"},
			wantFramework: "langchain", wantEntry: "app.py", wantVar: "root_agent",
			wantReqs: []string{"langchain"},
			wantName: "lc",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			writeTree(t, base, c.files)
			from := filepath.Join(base, c.path)
			out, err := initCLI(t, append([]string{"init", "--from-agent", from}, c.extraArgs...)...)
			if err != nil {
				t.Fatalf("init --from-agent: %v\n%s", err, out)
			}
			dir := from
			if strings.HasSuffix(from, ".py") {
				dir = filepath.Dir(from)
			}
			p, err := project.Load(dir)
			if err != nil {
				t.Fatalf("the written project does not load: %v\n%s", err, out)
			}
			if p.Name != c.wantName || p.Framework != c.wantFramework || p.EntryPoint != c.wantEntry || p.AgentVariable != c.wantVar {
				t.Fatalf("project %+v, want name %s framework %s entry %s:%s", p.Config, c.wantName, c.wantFramework, c.wantEntry, c.wantVar)
			}
			reqs, err := os.ReadFile(filepath.Join(dir, "requirements.txt"))
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string]bool{}
			for _, l := range strings.Split(string(reqs), "\n") {
				lines[strings.TrimSpace(l)] = true
			}
			for _, r := range c.wantReqs {
				if !lines[r] {
					t.Errorf("requirements.txt lacks %s:\n%s", r, reqs)
				}
			}
			for _, r := range c.notReqs {
				if lines[r] {
					t.Errorf("requirements.txt lists %s:\n%s", r, reqs)
				}
			}
			adapter, err := os.ReadFile(filepath.Join(dir, adapterFile))
			if c.wantAdapter != (err == nil) {
				t.Fatalf("adapter written: %v, want %v", err == nil, c.wantAdapter)
			}
			for _, w := range c.adapterHas {
				if !strings.Contains(string(adapter), w) {
					t.Errorf("adapter lacks %q:\n%s", w, adapter)
				}
			}
			// A second run refuses: the project exists now.
			if out, err := initCLI(t, "init", "--from-agent", from); err == nil || !strings.Contains(out+err.Error(), "already has agentengine.yaml") {
				t.Fatalf("second init --from-agent: %v\n%s", err, out)
			}
		})
	}
}

func TestInitFromAgentErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		path  string
		args  []string
		want  string
	}{
		{"missing path", nil, "nope", nil, "no such file"},
		{"not python", map[string]string{"x/readme.md": "hi"}, "x/readme.md", nil, "Python file (.py) or a directory"},
		{"only a builder", map[string]string{"b/agent.py": "from langgraph.graph import StateGraph\nbuilder = StateGraph(dict)\n"}, "b", nil, "no compiled graph"},
		{"no agent at all", map[string]string{"n/util.py": "import os\nx = 1\n"}, "n", nil, "found no agent object"},
		{"unknown framework", map[string]string{"u/agent.py": "from mylib import make\nroot_agent = Agent(name='x')\n"}, "u", nil, "cannot tell the framework"},
		{"bad -f", map[string]string{"f/agent.py": adkAgent}, "f", []string{"-f", "go"}, "--from-agent wraps"},
		{"bad name", map[string]string{"bad/agent.py": adkAgent}, "bad", []string{"has space"}, "not a valid project name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			writeTree(t, base, c.files)
			out, err := initCLI(t, append([]string{"init", "--from-agent", filepath.Join(base, c.path)}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error with %q, got %v\n%s", c.want, err, out)
			}
			if _, err := os.Stat(filepath.Join(base, c.path, "agentengine.yaml")); err == nil {
				t.Fatal("agentengine.yaml written despite the error")
			}
		})
	}
	// Plain init still needs its NAME.
	if out, err := initCLI(t, "init"); err == nil || !strings.Contains(err.Error(), "NAME") {
		t.Fatalf("init without a name: %v\n%s", err, out)
	}
}
