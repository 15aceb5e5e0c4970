package runnerproc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/runnerproc"
)

func TestARunnerOfAnotherProtocolVersionIsRefused(t *testing.T) {
	s, _ := newSupervisor(t, runnerproc.Config{Name: "oldproto", Command: []string{bin("oldproto")}})
	err := s.Start(ctxT(t))
	var pe *runnerproc.ProtocolError
	if !errors.As(err, &pe) || pe.Got != "0" || pe.Want != "1" {
		t.Fatalf("Start = %v, want a ProtocolError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "protocol version 0") || !strings.Contains(msg, "version 1") {
		t.Fatalf("error does not say which versions: %s", msg)
	}
}
