package actions

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

type listMessagesRequest struct {
	sessionRequest
	AfterSeqID         *int64 `json:"AfterSeqId"`
	BeforeSeqID        *int64 `json:"BeforeSeqId"`
	Limit              *int   `json:"Limit"`
	IncludeReasoning   bool   `json:"IncludeReasoning"`
	IncludeToolEvents  bool   `json:"IncludeToolEvents"`
	IncludeAttachments *bool  `json:"IncludeAttachments"`
}

type listMessagesData struct {
	SessionID   string     `json:"SessionId"`
	Messages    []*message `json:"Messages"`
	LatestSeqID int64      `json:"LatestSeqId"`
	HasMore     bool       `json:"HasMore"`
	NextCursor  *int64     `json:"NextCursor"`
}

// windowEvents is how many events one page reads at most (a page ends early rather
// than reading more, except to complete a turn that the window cut).
const windowEvents = 2000

// listMessages serves ListSessionMessages. Without AfterSeqId it pages backwards from
// BeforeSeqId (or the newest event): the newest turns holding up to Limit messages,
// NextCursor being the BeforeSeqId of the next older page. With AfterSeqId it pages
// forwards (catching up after a reconnect). Either way a page holds whole turns.
func (s *Surface) listMessages(ctx context.Context, c *gin.Context, req *listMessagesRequest) (any, *actionError) {
	if e := firstError(checkRange("Limit", req.Limit, 1, 200),
		checkSeq("AfterSeqId", req.AfterSeqID),
		checkSeq("BeforeSeqId", req.BeforeSeqID)); e != nil {
		return nil, e
	}
	key, _, e := s.callerSession(ctx, c, "ListSessionMessages", req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	pg := pager{s: s, key: key, limit: orDefault(req.Limit, 50)}
	if req.BeforeSeqID != nil {
		pg.before = *req.BeforeSeqID
	}
	opts := projectOptions{reasoning: req.IncludeReasoning, tools: req.IncludeToolEvents,
		attachments: req.IncludeAttachments == nil || *req.IncludeAttachments}
	var pageData listMessagesData
	var err error
	if req.AfterSeqID != nil {
		pageData, err = pg.forward(ctx, *req.AfterSeqID, opts)
	} else {
		pageData, err = pg.backward(ctx, opts)
	}
	if err != nil {
		return nil, s.fromHost("ListSessionMessages", err)
	}
	pageData.SessionID = key.ID
	return pageData, nil
}

// pager reads one page of messages.
type pager struct {
	s      *Surface
	key    session.Key
	limit  int
	before int64
}

func (pg *pager) events(ctx context.Context, q session.EventQuery) ([]session.Event, error) {
	return pg.s.rt.Events(ctx, pg.key, q)
}

func (pg *pager) backward(ctx context.Context, opts projectOptions) (listMessagesData, error) {
	chunk := min(max(pg.limit*8, 200), windowEvents)
	evs, err := pg.events(ctx, session.EventQuery{BeforeSeq: pg.before, Tail: true, Limit: chunk})
	if err != nil {
		return listMessagesData{}, err
	}
	atStart := len(evs) < chunk
	gs := groupEvents(evs)
	if !atStart && len(gs) > 0 {
		// The oldest turn may have begun before the window: leave it to the next page,
		// or complete it when it is the only one.
		if len(gs) > 1 {
			gs = gs[1:]
		} else if err := pg.complete(ctx, gs[0], session.EventQuery{InvocationID: gs[0].inv, BeforeSeq: gs[0].start()}); err != nil {
			return listMessagesData{}, err
		}
	}
	msgs, err := pg.project(ctx, evs, gs, opts, pg.before > 0)
	if err != nil {
		return listMessagesData{}, err
	}
	// Newest turns first, whole turns only, at least one.
	first, n := len(gs), 0
	for first > 0 && (n == 0 || n+len(msgs[first-1]) <= pg.limit) {
		first--
		n += len(msgs[first])
	}
	out := listMessagesData{HasMore: first > 0 || !atStart}
	if len(evs) > 0 {
		out.LatestSeqID = evs[len(evs)-1].Seq
	}
	if out.HasMore && first < len(gs) {
		out.NextCursor = ptr(gs[first].start())
	} else if out.HasMore && len(evs) > 0 {
		out.NextCursor = ptr(evs[0].Seq)
	}
	out.Messages, err = pg.flatten(ctx, gs[first:], msgs[first:])
	return out, err
}

func (pg *pager) forward(ctx context.Context, after int64, opts projectOptions) (listMessagesData, error) {
	evs, err := pg.events(ctx, session.EventQuery{AfterSeq: after, BeforeSeq: pg.before, Limit: windowEvents})
	if err != nil {
		return listMessagesData{}, err
	}
	more := len(evs) == windowEvents
	gs := groupEvents(evs)
	// The first turn may have begun at or before the cursor: a page holds it whole.
	if len(gs) > 0 {
		if err := pg.complete(ctx, gs[0], session.EventQuery{InvocationID: gs[0].inv, BeforeSeq: gs[0].start()}); err != nil {
			return listMessagesData{}, err
		}
	}
	if more && len(gs) > 1 {
		gs = gs[:len(gs)-1] // may continue after the window: next page
	}
	msgs, err := pg.project(ctx, evs, gs, opts, more || pg.before > 0)
	if err != nil {
		return listMessagesData{}, err
	}
	last, n := 0, 0
	for last < len(gs) && (n == 0 || n+len(msgs[last]) <= pg.limit) {
		n += len(msgs[last])
		last++
	}
	out := listMessagesData{HasMore: more || last < len(gs), LatestSeqID: after}
	switch {
	case last < len(gs):
		out.LatestSeqID = gs[last].start() - 1
	case more && len(gs) > 0:
		out.LatestSeqID = max(after, gs[len(gs)-1].end())
	case len(evs) > 0:
		out.LatestSeqID = evs[len(evs)-1].Seq
	}
	out.Messages, err = pg.flatten(ctx, gs[:last], msgs[:last])
	return out, err
}

// complete prepends the events of g's invocation that q finds before the window.
func (pg *pager) complete(ctx context.Context, g *group, q session.EventQuery) error {
	earlier, err := pg.events(ctx, q)
	if err != nil || len(earlier) == 0 {
		return err
	}
	kept := earlier[:0]
	for _, e := range earlier {
		if e.Type != session.TypeFeedback {
			kept = append(kept, e)
		}
	}
	g.events = append(kept, g.events...)
	return nil
}

// project projects each group. cut tells that newer events exist beyond the window,
// where decisions on the window's approval requests may be.
func (pg *pager) project(ctx context.Context, evs []session.Event, gs []*group, opts projectOptions, cut bool) ([][]*message, error) {
	p := newProjector(opts, evs)
	if cut {
		if err := pg.laterDecisions(ctx, p, gs); err != nil {
			return nil, err
		}
	}
	out := make([][]*message, len(gs))
	for i, g := range gs {
		out[i] = p.project(g)
	}
	return out, nil
}

// laterDecisions loads the approval decisions newer than the window for approval
// requests the window leaves undecided.
func (pg *pager) laterDecisions(ctx context.Context, p *projector, gs []*group) error {
	var oldest, newest int64
	for _, g := range gs {
		for _, e := range g.events {
			if e.Type == session.TypeApprovalRequest && oldest == 0 {
				oldest = e.Seq
			}
			newest = max(newest, e.Seq)
		}
	}
	if oldest == 0 {
		return nil
	}
	later, err := pg.events(ctx, session.EventQuery{AfterSeq: newest, Types: []string{session.TypeApprovalResponse}})
	if err != nil {
		return err
	}
	p.addDecisions(later)
	return nil
}

// flatten lists the selected groups' messages, finishing them and naming each
// assistant message's response.
func (pg *pager) flatten(ctx context.Context, gs []*group, msgs [][]*message) ([]*message, error) {
	out := []*message{}
	for i, g := range gs {
		for _, m := range msgs[i] {
			if m.Role == "assistant" {
				id, err := pg.responseID(ctx, g.inv)
				if err != nil {
					return nil, err
				}
				m.ResponseID = id
			}
			out = append(out, m)
		}
	}
	finish(out)
	return out, nil
}

// responseID is the id feedback and approvals name a turn's response by: its
// Responses id, or the invocation id for runs that have none (chat format).
func (pg *pager) responseID(ctx context.Context, inv string) (string, error) {
	run, err := pg.s.rt.Open(ctx, pg.key, inv)
	if errors.Is(err, host.ErrNotFound) {
		return inv, nil
	}
	if err != nil {
		return "", err
	}
	if run.ResponseID != "" {
		return run.ResponseID, nil
	}
	return inv, nil
}
