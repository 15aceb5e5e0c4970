package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// ToolOutput is a client's result of a tool call, whatever the surface's shape: a
// Responses function_call_output, a chat tool message, an ADK functionResponse.
type ToolOutput struct {
	// ID is the id the output answers: the tool call's id, or an approval's own id.
	ID string
	// Output is the tool's result; Approve and Reason are the verdict the surface read
	// from it. They are the resume's when the output answers an approval.
	Output  string
	Approve bool
	Reason  string
	// Raw is the client's item as it sent it (a resume's runner input).
	Raw json.RawMessage
	// Item is what the runner gets when the output is history (default Raw).
	Item json.RawMessage
}

// SortedToolOutputs are a turn's tool outputs sorted into resumes of the session's
// interrupted run and history items, each in the order sent.
type SortedToolOutputs struct {
	Resumes []Resume
	Items   []json.RawMessage
	// Resumed[i] tells whether the i-th output went to Resumes (else to Items), for
	// surfaces that keep outputs in place among other items.
	Resumed []bool
}

// SortToolOutputs decides, for every surface, which tool outputs resume the session's
// interrupted run: an output answers a pending approval when its id is the guarded
// call's id, else when it is the approval's id. Any other output is a history item the
// runner receives as it was sent. Without a session (key.ID "") or outputs nothing is
// loaded; an unknown session has nothing pending.
func (rt *Runtime) SortToolOutputs(ctx context.Context, key session.Key, outs []ToolOutput) (SortedToolOutputs, error) {
	sorted := SortedToolOutputs{Resumed: make([]bool, len(outs))}
	if key.User == "" {
		key.User = rt.defUser
	}
	var pending []approvalRequest
	if key.ID != "" && len(outs) > 0 {
		var err error
		if pending, _, err = rt.interruptedApprovals(ctx, key); err != nil && !errors.Is(err, session.ErrNotFound) {
			return sorted, err
		}
	}
	for i, o := range outs {
		p := matchApproval(pending, "", o.ID)
		if p == nil {
			p = matchApproval(pending, o.ID, "")
		}
		if p == nil {
			item := o.Item
			if item == nil {
				item = o.Raw
			}
			sorted.Items = append(sorted.Items, item)
			continue
		}
		res := Resume{Approve: o.Approve, Reason: o.Reason, Output: o.Output, Raw: o.Raw}
		if p.data.CallID == o.ID {
			res.CallID = o.ID
		} else {
			res.ApprovalRequestID = p.itemID
		}
		sorted.Resumes = append(sorted.Resumes, res)
		sorted.Resumed[i] = true
	}
	return sorted, nil
}

// approvalRequest is a stored approval request of an interrupted run.
type approvalRequest struct {
	itemID string
	data   session.ApprovalRequestData
}

// interruptedApprovals loads the approval requests of the session's latest run when
// that run ended interrupted; interrupted is false (and the list empty) otherwise. The
// error of a session that does not exist wraps session.ErrNotFound.
func (rt *Runtime) interruptedApprovals(ctx context.Context, key session.Key) (reqs []approvalRequest, interrupted bool, err error) {
	sess, err := rt.store.GetSession(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("load session: %w", err)
	}
	if sess.ActiveRunStatus != session.StatusInterrupted || sess.ActiveInvocationID == "" {
		return nil, false, nil
	}
	evs, err := rt.store.Events(ctx, key, session.EventQuery{InvocationID: sess.ActiveInvocationID, Types: []string{session.TypeApprovalRequest}})
	if err != nil {
		return nil, true, fmt.Errorf("load approval requests: %w", err)
	}
	reqs = make([]approvalRequest, 0, len(evs))
	for _, e := range evs {
		d, err := session.DataOf[session.ApprovalRequestData](e)
		if err != nil {
			rt.log.Warn("skipping an approval request that does not decode", "session", key.ID, "error", err)
			continue
		}
		reqs = append(reqs, approvalRequest{itemID: e.ItemID, data: d})
	}
	return reqs, true, nil
}

// matchApproval finds the request with the approval id, or the one guarding the call id
// ("" matches nothing).
func matchApproval(reqs []approvalRequest, approvalID, callID string) *approvalRequest {
	for i := range reqs {
		if (approvalID != "" && reqs[i].itemID == approvalID) || (callID != "" && reqs[i].data.CallID == callID) {
			return &reqs[i]
		}
	}
	return nil
}

// pendingApproval is an approval request a resume answers.
type pendingApproval struct {
	resume Resume
	itemID string
	data   session.ApprovalRequestData
}

// pendingApprovals matches resumes to the session's unanswered approval requests of its
// latest interrupted run.
func (rt *Runtime) pendingApprovals(ctx context.Context, key session.Key, resumes []Resume) ([]pendingApproval, error) {
	if len(resumes) == 0 {
		return nil, nil
	}
	reqs, interrupted, err := rt.interruptedApprovals(ctx, key)
	if err != nil {
		return nil, err
	}
	if !interrupted {
		return nil, clientErr(ErrNoPendingApproval, "input", "session %q has no pending approval request to resume", key.ID)
	}
	out := make([]pendingApproval, 0, len(resumes))
	for _, res := range resumes {
		found := matchApproval(reqs, res.ApprovalRequestID, res.CallID)
		if found == nil {
			id := res.ApprovalRequestID
			if id == "" {
				id = res.CallID
			}
			return nil, clientErr(ErrNoPendingApproval, "input", "no pending approval request %q in session %q", id, key.ID)
		}
		out = append(out, pendingApproval{resume: res, itemID: found.itemID, data: found.data})
	}
	return out, nil
}
