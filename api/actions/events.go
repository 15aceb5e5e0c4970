package actions

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/session"
)

type listEventsRequest struct {
	sessionRequest
	Offset      *int   `json:"Offset"`
	Limit       *int   `json:"Limit"`
	AfterSeqID  *int64 `json:"AfterSeqId"`
	BeforeSeqID *int64 `json:"BeforeSeqId"`
}

// maxEventOffset bounds Offset, which costs a read of Offset+Limit events.
const maxEventOffset = 100000

type listEventsData struct {
	Events      []eventPayload `json:"Events"`
	Total       int64          `json:"Total"`
	Offset      int            `json:"Offset"`
	Limit       int            `json:"Limit"`
	AfterSeqID  *int64         `json:"AfterSeqId"`
	BeforeSeqID *int64         `json:"BeforeSeqId"`
	LatestSeqID int64          `json:"LatestSeqId"`
	HasMore     bool           `json:"HasMore"`
}

// listEvents serves ListSessionEvents: the newest Limit events of the window
// (AfterSeqId, BeforeSeqId), skipping the newest Offset (KsADK's tail semantics),
// in ascending seq order. SessionId is required: KsADK's "all sessions of the agent"
// is a read of every log.
//
// Total counts the window from the session row's latest seq: stores assign seqs
// densely from 1 and never remove single events, so no count query is needed.
func (s *Surface) listEvents(ctx context.Context, c *gin.Context, req *listEventsRequest) (any, *actionError) {
	if e := firstError(checkRange("Offset", req.Offset, 0, maxEventOffset),
		checkRange("Limit", req.Limit, 1, 2000),
		checkSeq("AfterSeqId", req.AfterSeqID),
		checkSeq("BeforeSeqId", req.BeforeSeqID)); e != nil {
		return nil, e
	}
	key, sess, e := s.callerSession(ctx, c, "ListSessionEvents", req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	offset, limit := orDefault(req.Offset, 0), orDefault(req.Limit, 200)
	q := session.EventQuery{Tail: true, Limit: offset + limit}
	if req.AfterSeqID != nil {
		q.AfterSeq = *req.AfterSeqID
	}
	if req.BeforeSeqID != nil {
		q.BeforeSeq = *req.BeforeSeqID
	}
	evs, err := s.rt.Events(ctx, key, q)
	if err != nil {
		return nil, s.fromHost("ListSessionEvents", err)
	}
	latest := sess.LastSeq
	if n := len(evs); n > 0 {
		latest = max(latest, evs[n-1].Seq) // appended since the row was read
	}
	evs = evs[:max(0, len(evs)-offset)]
	total := windowSize(latest, q.AfterSeq, q.BeforeSeq)
	out := listEventsData{Events: make([]eventPayload, 0, len(evs)), Total: total, Offset: offset, Limit: limit,
		AfterSeqID: req.AfterSeqID, BeforeSeqID: req.BeforeSeqID, LatestSeqID: latest,
		HasMore: int64(offset+len(evs)) < total}
	for i := range evs {
		out.Events = append(out.Events, payloadOf(&evs[i], ""))
	}
	return out, nil
}

// windowSize is the number of seqs in (after, before) among 1..last.
func windowSize(last, after, before int64) int64 {
	hi := last
	if before > 0 {
		hi = min(hi, before-1)
	}
	return max(0, hi-after)
}
