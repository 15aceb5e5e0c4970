package runnerproc_test

import (
	"context"
	"io"
	"testing"

	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// benchRun drives b.N echo turns of the given shape and reports per-delta cost.
func benchRun(b *testing.B, c runnerv1.RunnerClient, deltas string) {
	req := runReq("hello bench", `{"deltas":`+deltas+`}`)
	ctx := context.Background()
	events := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := c.Run(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkSubprocess measures turns against the echo runner as a real go-plugin subprocess.
func BenchmarkSubprocess(b *testing.B) {
	s := runnerproc.New(runnerproc.Config{Command: []string{bin("echo-go")}})
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	if err := s.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Run("turn", func(b *testing.B) { benchRun(b, s, "0") })
	b.Run("1000deltas", func(b *testing.B) { benchRun(b, s, "1000") })
}

// BenchmarkInProcess is the same over inprocess.Serve (gRPC on bufconn).
func BenchmarkInProcess(b *testing.B) {
	c, stop := inprocess.Serve(echoagent.New())
	b.Cleanup(stop)
	b.Run("turn", func(b *testing.B) { benchRun(b, c, "0") })
	b.Run("1000deltas", func(b *testing.B) { benchRun(b, c, "1000") })
}
