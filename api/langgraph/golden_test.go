package langgraph

import (
	"flag"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got, *update, "./api/langgraph")
}

// volatile matches generated ids and times in wire output of real runs.
var volatile = testutil.Replacements{
	testutil.Replace(`\b(run|sess|call|apr|msg|fc|rs)_[0-9a-f]{12,32}\b`, "${1}_X"),
	testutil.Replace(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00`, "T"),
}

func normalise(b []byte) []byte {
	return volatile.Apply(b)
}

// The wire format of a run's stream in every mode served, and of a paused thread's
// state, for the echo agent's tool call and approval.
func TestGoldenWire(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	status, _, b := e.do("POST", "/threads/"+tid+"/runs/stream",
		runBody("echo", "use the tool on paris", `"stream_mode":["values","messages-tuple","messages","updates","custom"]`))
	if status != http.StatusOK {
		t.Fatalf("stream: %d %s", status, b)
	}
	golden(t, "stream_tool.sse", normalise(b))
	status, _, b = e.do("POST", "/threads/"+tid+"/runs/stream", runBody("echo", "please approve deleting notes.txt", `"stream_mode":["updates"]`))
	if status != http.StatusOK {
		t.Fatalf("stream: %d %s", status, b)
	}
	golden(t, "stream_interrupt.sse", normalise(b))
	status, _, b = e.do("GET", "/threads/"+tid+"/state", "")
	if status != http.StatusOK {
		t.Fatalf("state: %d %s", status, b)
	}
	golden(t, "state_interrupted.json", normalise(b))
}
