package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// qaGraph is existing LangGraph code with its own state schema (no messages).
const qaGraph = `from typing import TypedDict

from langgraph.graph import StateGraph, START, END


class QAState(TypedDict):
    question: str
    history: list
    answer: str


def answer(state: QAState) -> dict:
    return {"answer": "You asked: %s (after %d messages)" % (state["question"], len(state.get("history") or []))}


workflow = StateGraph(QAState)
workflow.add_node("answer", answer)
workflow.add_edge(START, "answer")
workflow.add_edge("answer", END)
qa_graph = workflow.compile()
`

// The code init --from-agent wraps runs as is: the generated ksadk_prepare_state fills
// the graph's own state from each turn, history included.
func TestPythonFromAgentCustomState(t *testing.T) {
	py := needPython(t)
	dir := filepath.Join(t.TempDir(), "qa")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeText(filepath.Join(dir, "flow.py"), qaGraph); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, dir, "", "init", "--from-agent", ".")
	if err != nil || !strings.Contains(out, "agentengine_entry.py") {
		t.Fatalf("init --from-agent: %v\n%s", err, out)
	}
	appendYAML(t, dir, "python: "+py+"\n")
	s := startPython(t, dir)
	first := streamTurn(t, s.url, map[string]any{"model": "qa", "input": "what is 2+2", "conversation": "c1"}, nil)
	if first.status() != "completed" || first.text != "You asked: what is 2+2 (after 0 messages)" {
		t.Fatalf("first turn: %s %q\n%s", first.status(), first.text, s.logs)
	}
	second := streamTurn(t, s.url, map[string]any{"model": "qa", "input": "and 3+3", "conversation": "c1"}, nil)
	if second.text != "You asked: and 3+3 (after 2 messages)" {
		t.Fatalf("second turn: %s %q\n%s", second.status(), second.text, s.logs)
	}
}
