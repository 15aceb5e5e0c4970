package host

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// AgentCall runs a framework-native operation in the agent's runner (the Call RPC) with
// arg as its JSON argument and returns its JSON result: what a surface needs from the
// loaded agent itself, such as ADK's evaluator ("adk.eval.run"). The runner's refusals
// come back as client errors with its message: an unknown method or bad input is
// ErrInvalidInput, a missing resource ErrNotFound; a runner that cannot be reached is
// ErrUnavailable. ctx bounds the call (an evaluation runs the agent, so it may be long).
func (rt *Runtime) AgentCall(ctx context.Context, name, method string, arg json.RawMessage) (json.RawMessage, error) {
	ag, err := rt.agent(name)
	if err != nil {
		return nil, err
	}
	resp, err := ag.Runner.Call(ctx, &runnerv1.CallRequest{Method: method, Json: arg})
	if err != nil {
		return nil, callError(name, method, err)
	}
	out := resp.GetJson()
	if len(out) == 0 {
		return json.RawMessage("null"), nil
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("%w: the runner of %q answered %s with invalid JSON", ErrUnavailable, name, method)
	}
	return out, nil
}

// callError maps the runner's gRPC status to the host's error kinds.
func callError(agent, method string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%w: call %s on %q: %w", ErrUnavailable, method, agent, err)
	}
	switch st.Code() { //nolint:exhaustive // the rest: the runner could not be reached or answer
	case codes.Unimplemented:
		return &ClientError{Kind: ErrInvalidInput, Err: err,
			Message: fmt.Sprintf("the agent %q does not offer %s (its framework or runner version has no such operation)", agent, method)}
	case codes.InvalidArgument, codes.FailedPrecondition:
		return &ClientError{Kind: ErrInvalidInput, Message: st.Message(), Err: err}
	case codes.NotFound:
		return &ClientError{Kind: ErrNotFound, Message: st.Message(), Err: err}
	case codes.Canceled:
		return fmt.Errorf("call %s on %q: %w", method, agent, context.Canceled)
	case codes.Unknown, codes.Internal:
		// A bug in the operation (the runner logged its traceback): an internal error.
		return fmt.Errorf("call %s on %q failed in the runner: %w", method, agent, err)
	}
	return fmt.Errorf("%w: call %s on %q: %w", ErrUnavailable, method, agent, err)
}
