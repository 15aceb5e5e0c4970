package host

import (
	"context"
	"errors"

	"github.com/agentengine/agentengine/session"
)

// PendingApproval is an unanswered approval request of a session.
type PendingApproval struct {
	// ID is the approval id clients answer with (mcp_approval_response.approval_request_id).
	ID string
	// CallID is the tool call the approval guards, if any (function_call_output.call_id).
	CallID    string
	Name      string
	Arguments string
}

// PendingApprovals lists the approval requests a resume of the session would answer:
// those of its latest run when that run ended interrupted. An unknown session has none.
// Tool outputs are sorted into resumes and history by SortToolOutputs.
func (rt *Runtime) PendingApprovals(ctx context.Context, key session.Key) ([]PendingApproval, error) {
	if key.User == "" {
		key.User = rt.defUser
	}
	reqs, _, err := rt.interruptedApprovals(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]PendingApproval, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, PendingApproval{ID: r.itemID, CallID: r.data.CallID, Name: r.data.Name, Arguments: r.data.Arguments})
	}
	return out, nil
}
