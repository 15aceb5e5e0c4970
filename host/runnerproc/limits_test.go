package runnerproc_test

import (
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/runnerproc"
)

// An input over gRPC's default 4 MiB message limit (carried several times in the
// payload) goes through a subprocess runner and back.
func TestLargeInputThroughRunner(t *testing.T) {
	s, _ := newSupervisor(t, runnerproc.Config{Name: "echo-go", Command: []string{bin("echo-go")}})
	if err := s.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	in := strings.Repeat("x", 5<<20)
	text, kinds := drain(t, s, runReq(in, ""))
	if text != "Echo: "+in {
		t.Fatalf("text of %d bytes (kinds %v), want the %d-byte input echoed", len(text), kinds, len(in))
	}
}
