package actions

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
)

type cancelRequest struct {
	sessionRequest
	InvocationID string `json:"InvocationId"`
}

type cancelData struct {
	Cancelled    bool   `json:"Cancelled"`
	Found        bool   `json:"Found"`
	Status       string `json:"Status"` // cancelling, not_found or finished
	RunStatus    string `json:"RunStatus,omitempty"`
	InvocationID string `json:"InvocationId"`
}

// cancelRun serves CancelRun. SessionId is required: runs are found within the
// caller's session (KsADK looked them up process-wide). An unknown invocation is
// Found=false, not an error, as in KsADK; a run that already ended is Status
// "finished" with its RunStatus. A cancelled run's RunStatus becomes "cancelled"
// once it has stopped, which the answer waits for briefly.
func (s *Surface) cancelRun(ctx context.Context, c *gin.Context, req *cancelRequest) (any, *actionError) {
	if e := requireID("InvocationId", req.InvocationID); e != nil {
		return nil, e
	}
	key, _, e := s.callerSession(ctx, c, "CancelRun", req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	out := cancelData{InvocationID: req.InvocationID}
	err := s.rt.Cancel(ctx, key, req.InvocationID)
	switch {
	case errors.Is(err, host.ErrNotFound):
		out.Status = "not_found"
		return out, nil
	case errors.Is(err, host.ErrRunNotActive):
		out.Found, out.Status = true, "finished"
	case err != nil:
		return nil, s.fromHost("CancelRun", err)
	default:
		out.Found, out.Cancelled, out.Status = true, true, "cancelling"
	}
	run, err := s.rt.Open(ctx, key, req.InvocationID)
	if err != nil {
		return nil, s.fromHost("CancelRun", err)
	}
	wait, stop := context.WithTimeout(ctx, s.cfg.CancelWait)
	defer stop()
	select {
	case <-run.Done():
	case <-wait.Done():
		if ctx.Err() != nil {
			return nil, clientGone()
		}
	}
	out.RunStatus = run.Status()
	return out, nil
}
