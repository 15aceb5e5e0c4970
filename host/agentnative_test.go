package host_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session/memory"
)

// describedRunner reports described in Describe and answers host.NativeCall with out or
// err, counting the calls.
type describedRunner struct {
	runnerv1.RunnerClient
	described string
	out       string
	err       error
	calls     int
}

func (r *describedRunner) Describe(context.Context, *runnerv1.DescribeRequest, ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	return &runnerv1.DescribeResponse{Framework: "adk", AgentName: "a", NativeJson: []byte(r.described)}, nil
}

func (r *describedRunner) Call(_ context.Context, in *runnerv1.CallRequest, _ ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	if in.GetMethod() != host.NativeCall {
		return nil, status.Error(codes.Unimplemented, in.GetMethod())
	}
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	return &runnerv1.CallResponse{Json: []byte(r.out)}, nil
}

// TestAgentNative: the native description is Describe's when it carries one, else the
// runner's answer to NativeCall, asked once and kept until the agent reloads; a runner
// without the call has none; a failed call is an error and is asked again next time.
func TestAgentNative(t *testing.T) {
	tests := []struct {
		name   string
		runner *describedRunner
		want   string // "": none
		calls  int    // after two reads, a reload and a third read
		kind   error
	}{
		{"in Describe", &describedRunner{described: `{"d":1}`, out: `{"c":1}`}, `{"d":1}`, 0, nil},
		{"by its call", &describedRunner{out: `{"c":1}`}, `{"c":1}`, 2, nil},
		{"null", &describedRunner{out: `null`}, "", 2, nil},
		{"invalid JSON", &describedRunner{out: `{`}, "", 2, nil},
		{"no such call", &describedRunner{err: status.Error(codes.Unimplemented, "no")}, "", 2, nil},
		{"runner gone", &describedRunner{err: status.Error(codes.Unavailable, "gone")}, "", 3, host.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Framework: "adk", Runner: tt.runner}}})
			read := func() {
				t.Helper()
				got, err := rt.AgentNative(context.Background(), "a")
				if tt.kind != nil {
					if !errors.Is(err, tt.kind) {
						t.Fatalf("error %v, want %v", err, tt.kind)
					}
					return
				}
				if err != nil || string(got) != tt.want {
					t.Fatalf("= %s, %v; want %q", got, err, tt.want)
				}
			}
			read()
			read()
			rt.AgentReloaded("a")
			read()
			if tt.runner.calls != tt.calls {
				t.Errorf("the runner was called %d times, want %d", tt.runner.calls, tt.calls)
			}
		})
	}
}
