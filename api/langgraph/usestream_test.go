package langgraph

import (
	"net/http"
	"testing"
)

// A run may name the thread's latest checkpoint (useStream sends the head it last read with
// every run); an earlier one, or any on a thread without runs, is refused: branching is not
// offered.
func TestRunAtTheLatestCheckpoint(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	e.json("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "first"), http.StatusOK)
	first := str(e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["checkpoint"].(map[string]any)["checkpoint_id"])
	e.json("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "second", `"checkpoint":{"checkpoint_id":"`+first+`","checkpoint_ns":""}`), http.StatusOK)
	head := str(e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)["checkpoint"].(map[string]any)["checkpoint_id"])
	v := e.json("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "third", `"checkpoint_id":"`+head+`"`), http.StatusOK)
	if got := messages(t, v); len(got) != 6 {
		t.Fatalf("a run at the head continues the thread: %v", got)
	}
	e.fail("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "x", `"checkpoint_id":"`+first+`"`), http.StatusUnprocessableEntity, "is not the latest")
	e.fail("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "x", `"checkpoint":"nope"`), http.StatusUnprocessableEntity, "checkpoint must be an object")
	// A checkpoint without an id is the latest (RemoteGraph sends {"checkpoint_ns": ""}).
	e.json("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "fourth", `"checkpoint":{"checkpoint_ns":""}`), http.StatusOK)
	e.fail("POST", "/runs/wait", runBody("echo", "x", `"checkpoint_id":"`+head+`"`), http.StatusUnprocessableEntity, "checkpoint is not offered")
	e.fail("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "x", `"checkpoint_id":"run_nope"`), http.StatusUnprocessableEntity, "is not the latest")
}

// useStream resumes with "input": {} beside the command: as LangGraph's server does, the
// command is run and the input ignored.
func TestResumeIgnoresInputBesideCommand(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "please approve deleting notes.txt"), http.StatusOK)
	v := e.obj("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"ignored"}]},"command":{"resume":{"approve":true}}}`, http.StatusOK)
	got := messages(t, v)
	if got[len(got)-1] != [2]string{"ai", "Approved: deleted notes.txt."} {
		t.Fatalf("resumed: %v", got)
	}
	for _, m := range got[1:] {
		if m[0] == "human" {
			t.Fatalf("the input beside the command added a message: %v", got)
		}
	}
}
