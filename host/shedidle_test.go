package host

import (
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// A memory trim keeps the runs in memory (into a map of their size); the history
// cache's side is history's TestCacheEvictsIdleEntries.
func TestShedIdleKeepsRuns(t *testing.T) {
	rt, err := New(Config{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	active := session.Key{App: "a", User: "u", ID: "active"}
	rt.runs[runKey{active, "run"}] = &Run{}
	if more := rt.ShedIdle(); more {
		t.Error("ShedIdle reports cached history left in an empty cache")
	}
	if len(rt.runs) != 1 || rt.runs[runKey{active, "run"}] == nil {
		t.Fatalf("runs after the trim: %v", rt.runs)
	}
}
