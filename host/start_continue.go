package host

import (
	"context"
	"errors"
	"fmt"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/wire"
)

// checkInput refuses a turn without input, and input on a turn that continues a
// checkpoint (which runs on from saved state, so new input would have nowhere to go).
func checkInput(req TurnRequest) error {
	if req.ContinueFrom == nil {
		if req.Input.Empty() {
			return clientErr(ErrInvalidInput, "input", "input is empty")
		}
		return nil
	}
	if !req.Input.Empty() {
		return clientErr(ErrInvalidInput, "input", "a run that continues a checkpoint takes no input; send new input as a new turn")
	}
	if req.ContinueFrom.ThreadID == "" {
		return clientErr(ErrInvalidInput, "thread_id", "continuing a checkpoint needs its thread id")
	}
	if req.SessionID == "" {
		return clientErr(ErrInvalidInput, "conversation", "continuing a checkpoint needs the session that saved it")
	}
	return nil
}

// checkContinue checks that the agent's runner can continue a checkpoint in place and
// that ref names the latest saved checkpoint of one of the session's threads.
func (rt *Runtime) checkContinue(ctx context.Context, key session.Key, agent string, caps *runnerv1.Capabilities, ref *wire.CheckpointRef) error {
	if !canContinue(caps) {
		return clientErr(ErrInvalidInput, "", "agent %q cannot continue a checkpoint in place: its runner keeps no checkpoints with the host", agent)
	}
	cps, err := rt.store.Checkpoints(ctx, key)
	if err != nil && !errors.Is(err, session.ErrNotFound) { // a session the turn creates has none
		return fmt.Errorf("load checkpoints: %w", err)
	}
	for _, cp := range cps {
		if cp.ThreadID != ref.ThreadID || cp.Namespace != "" {
			continue
		}
		if ref.CheckpointID != "" && cp.ID != ref.CheckpointID {
			return clientErr(ErrNotFound, "checkpoint_id", "checkpoint %q is not the latest of thread %q (%s is): only the latest continues", ref.CheckpointID, ref.ThreadID, cp.ID)
		}
		return nil
	}
	return clientErr(ErrNotFound, "thread_id", "session %q has no saved checkpoint of thread %q", key.ID, ref.ThreadID)
}

// canContinue reports whether a runner with these capabilities continues checkpoints in
// place: it keeps them with the host and resumes. Unknown capabilities (nil) allow it;
// the run then reports what fails.
func canContinue(caps *runnerv1.Capabilities) bool {
	return caps == nil || (caps.GetCheckpoints() && caps.GetResume())
}

// CanContinue reports whether the agent's runner continues checkpoints in place
// (TurnRequest.ContinueFrom).
func (rt *Runtime) CanContinue(ctx context.Context, app string) bool {
	ag, err := rt.agent(app)
	if err != nil {
		return false
	}
	caps := rt.capabilities(ctx, ag)
	return caps != nil && canContinue(caps)
}
