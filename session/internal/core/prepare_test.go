package core

import (
	"testing"

	"github.com/agentengine/agentengine/session"
)

// The start's run_status data, recognised without decoding, is what the runtime writes.
func TestInProgressData(t *testing.T) {
	if got := string(session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})); got != inProgressData {
		t.Fatalf("a run's start data is %s, not %s", got, inProgressData)
	}
	ps, err := Prepare([]session.NewEvent{{Type: session.TypeRunStatus, Data: []byte(inProgressData)}}, "inv")
	if err != nil || ps[0].runStatus != session.StatusInProgress {
		t.Fatalf("prepared %+v, %v", ps, err)
	}
}
