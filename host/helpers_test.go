package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// serve runs agent in-process for the test and returns its runner.
func serve(t testing.TB, agent pluginsdk.Runner) runnerv1.RunnerClient {
	t.Helper()
	client, stop := inprocess.Serve(agent)
	t.Cleanup(stop)
	return client
}

// startRuntime builds a runtime for the test and closes it when the test ends.
func startRuntime(t testing.TB, cfg host.Config) *host.Runtime {
	t.Helper()
	rt, err := host.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
	})
	return rt
}
