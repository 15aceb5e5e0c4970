package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session/memory"
)

// callRunner answers Call with a fixed result or status.
type callRunner struct {
	runnerv1.RunnerClient
	out []byte
	err error
	got *runnerv1.CallRequest
}

func (r *callRunner) Call(_ context.Context, in *runnerv1.CallRequest, _ ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	r.got = in
	if r.err != nil {
		return nil, r.err
	}
	return &runnerv1.CallResponse{Json: r.out}, nil
}

// TestAgentCall: the runner's answer comes back as is; its refusals as the host's error
// kinds with its message for the client; a runner that is not reached is unavailable.
func TestAgentCall(t *testing.T) {
	tests := []struct {
		name    string
		runner  *callRunner
		want    string
		kind    error
		message string
	}{
		{"answer", &callRunner{out: []byte(`{"ok":true}`)}, `{"ok":true}`, nil, ""},
		{"no answer", &callRunner{}, `null`, nil, ""},
		{"invalid JSON", &callRunner{out: []byte(`{`)}, "", host.ErrUnavailable, ""},
		{"unimplemented", &callRunner{err: status.Error(codes.Unimplemented, "no")}, "", host.ErrInvalidInput, `the agent "a" does not offer m.x`},
		{"invalid", &callRunner{err: status.Error(codes.InvalidArgument, "bad arg")}, "", host.ErrInvalidInput, "bad arg"},
		{"precondition", &callRunner{err: status.Error(codes.FailedPrecondition, "install x")}, "", host.ErrInvalidInput, "install x"},
		{"not found", &callRunner{err: status.Error(codes.NotFound, "no such case")}, "", host.ErrNotFound, "no such case"},
		{"unavailable", &callRunner{err: status.Error(codes.Unavailable, "gone")}, "", host.ErrUnavailable, ""},
		{"bug", &callRunner{err: status.Error(codes.Unknown, "KeyError")}, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Framework: "adk", Runner: tt.runner}}})
			out, err := rt.AgentCall(context.Background(), "a", "m.x", []byte(`{"in":1}`))
			if tt.runner.got.GetMethod() != "m.x" || string(tt.runner.got.GetJson()) != `{"in":1}` {
				t.Errorf("runner got %v", tt.runner.got)
			}
			if tt.want != "" {
				if err != nil || string(out) != tt.want {
					t.Fatalf("= %s, %v; want %s", out, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("= %s, want an error", out)
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("error %v, want kind %v", err, tt.kind)
			}
			var ce *host.ClientError
			if tt.message != "" && (!errors.As(err, &ce) || !strings.HasPrefix(ce.Message, tt.message)) {
				t.Errorf("client message of %v, want %q", err, tt.message)
			}
			if tt.message == "" && errors.As(err, &ce) {
				t.Errorf("%v is a client error; its detail is not the client's", err)
			}
		})
	}
	if _, err := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Framework: "adk", Runner: &callRunner{}}}}).AgentCall(context.Background(), "nope", "m", nil); !errors.Is(err, host.ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
}
