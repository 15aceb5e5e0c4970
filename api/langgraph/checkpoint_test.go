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
