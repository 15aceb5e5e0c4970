package runnerproc_test

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/internal/runnerplugin"
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

// BenchmarkPythonRun measures a run of the Python SDK's demo runner (a text delta and the
// message's end) over the run lane and over gRPC Run calls: the transport's share of a
// Python turn. Needs $AGENTENGINE_PYTHON with grpcio and protobuf.
func BenchmarkPythonRun(b *testing.B) {
	sdk, err := filepath.Abs("../../pluginsdk/python/src")
	if err != nil {
		b.Fatal(err)
	}
	py, err := exec.LookPath(testPythonName())
	if err != nil {
		b.Skip(err)
	}
	for _, tc := range []struct{ name, lane string }{{"lane", "on"}, {"grpc", "off"}} {
		b.Run(tc.name, func(b *testing.B) {
			s := runnerproc.New(runnerproc.Config{
				Command: []string{py, "-m", "agentengine_runner", "agentengine_runner.testing.demo:DemoRunner"},
				Env:     []string{"PYTHONPATH=" + sdk, runnerplugin.RunLaneEnv + "=" + tc.lane},
			})
			b.Cleanup(func() { _ = s.Close(context.Background()) })
			if err := s.Start(context.Background()); err != nil {
				b.Skip("the Python runner SDK does not start here: ", err)
			}
			benchRun(b, s, "0")
		})
	}
}
