package core

import (
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// CheckEventQuery rejects negative bounds and limits.
func CheckEventQuery(q session.EventQuery) error {
	if q.AfterSeq < 0 || q.BeforeSeq < 0 || q.Limit < 0 {
		return fmt.Errorf("%w: negative seq bound or limit in event query", session.ErrInvalid)
	}
	return nil
}

// CheckListQuery rejects negative paging and an empty owner.
func CheckListQuery(app, user string, q session.ListQuery) error {
	if app == "" || user == "" {
		return fmt.Errorf("%w: listing sessions needs app and user", session.ErrInvalid)
	}
	if q.Offset < 0 || q.Limit < 0 {
		return fmt.Errorf("%w: negative offset or limit", session.ErrInvalid)
	}
	return nil
}

// MatchEvent reports whether e passes q's filters other than Limit/Tail.
func MatchEvent(e *session.Event, q *session.EventQuery) bool {
	if e.Seq <= q.AfterSeq || (q.BeforeSeq > 0 && e.Seq >= q.BeforeSeq) {
		return false
	}
	if q.InvocationID != "" && e.InvocationID != q.InvocationID {
		return false
	}
	if len(q.Types) > 0 {
		for _, t := range q.Types {
			if e.Type == t {
				return true
			}
		}
		return false
	}
	return true
}
