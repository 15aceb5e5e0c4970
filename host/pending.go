package host

import (
	"context"
	"errors"
	"fmt"

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
// those of its latest run when that run ended interrupted. Surfaces use it to tell a
// resume (a tool result answering an approval) from an ordinary tool result item. An
// unknown session has none.
func (rt *Runtime) PendingApprovals(ctx context.Context, key session.Key) ([]PendingApproval, error) {
	if key.User == "" {
		key.User = rt.defUser
	}
	sess, err := rt.store.GetSession(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	if sess.ActiveRunStatus != session.StatusInterrupted || sess.ActiveInvocationID == "" {
		return nil, nil
	}
	evs, err := rt.store.Events(ctx, key, session.EventQuery{InvocationID: sess.ActiveInvocationID, Types: []string{session.TypeApprovalRequest}})
	if err != nil {
		return nil, fmt.Errorf("load approval requests: %w", err)
	}
	out := make([]PendingApproval, 0, len(evs))
	for _, e := range evs {
		d, err := session.DataOf[session.ApprovalRequestData](e)
		if err != nil {
			continue
		}
		out = append(out, PendingApproval{ID: e.ItemID, CallID: d.CallID, Name: d.Name, Arguments: d.Arguments})
	}
	return out, nil
}
