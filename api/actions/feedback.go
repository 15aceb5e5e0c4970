package actions

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// Feedback rates a response (a run's assistant output). It is stored as feedback
// events of the run, appended through the runtime; the latest one wins and a deletion
// is a tombstone, so the log keeps the history and nothing is rewritten.

type feedbackRef struct {
	sessionRequest
	ResponseID string `json:"ResponseId"`
}

type upsertFeedbackRequest struct {
	feedbackRef
	Rating     string `json:"Rating"`
	Comment    string `json:"Comment"`
	EventID    string `json:"EventId"`
	TraceID    string `json:"TraceId"`
	RootSpanID string `json:"RootSpanId"`
}

const (
	maxCommentLen = 4000
	maxRefLen     = 256
)

// feedbackRecord is the data of a feedback event.
type feedbackRecord struct {
	ResponseID string `json:"response_id"`
	EventID    string `json:"event_id,omitempty"`
	Rating     string `json:"rating,omitempty"`
	Comment    string `json:"comment,omitempty"`
	TraceID    string `json:"trace_id,omitempty"`
	RootSpanID string `json:"root_span_id,omitempty"`
	Deleted    bool   `json:"deleted,omitempty"`
}

type feedbackPayload struct {
	AgentID    string  `json:"AgentId"`
	SessionID  string  `json:"SessionId"`
	ResponseID string  `json:"ResponseId"`
	EventID    string  `json:"EventId"`
	Rating     string  `json:"Rating"`
	Comment    string  `json:"Comment"`
	TraceID    string  `json:"TraceId"`
	RootSpanID string  `json:"RootSpanId"`
	CreatedAt  float64 `json:"CreatedAt"`
	UpdatedAt  float64 `json:"UpdatedAt"`
}

type feedbackData struct {
	Feedback *feedbackPayload `json:"Feedback"`
}

// current is the live feedback of a response, with when it was first given.
type current struct {
	rec              feedbackRecord
	created, updated time.Time
}

func (s *Surface) feedbackKey(c *gin.Context, ref *feedbackRef) (session.Key, *actionError) {
	if e := requireID("ResponseId", ref.ResponseID); e != nil {
		return session.Key{}, e
	}
	return s.sessionKey(c, ref.scoped, ref.SessionID)
}

// response finds the run a response id names in the session: a Responses id, or an
// invocation id (runs without one, and clients that only know the invocation). A
// response of another session is not found.
func (s *Surface) response(ctx context.Context, key session.Key, id string) (*host.Run, error) {
	inv := id
	rec, err := s.rt.RunByResponseID(ctx, key.User, id)
	switch {
	case err == nil && rec.Key == key:
		inv = rec.InvocationID
	case err != nil && !errors.Is(err, host.ErrNotFound):
		return nil, err
	}
	run, err := s.rt.Open(ctx, key, inv)
	if errors.Is(err, host.ErrNotFound) {
		return nil, nil
	}
	return run, err
}

// latest reads the response's feedback events and returns the one in force.
func (s *Surface) latest(ctx context.Context, key session.Key, inv string) (*current, error) {
	evs, err := s.rt.Events(ctx, key, session.EventQuery{InvocationID: inv, Types: []string{session.TypeFeedback}})
	if err != nil {
		return nil, err
	}
	var cur *current
	for _, e := range evs {
		var r feedbackRecord
		if json.Unmarshal(e.Data, &r) != nil {
			continue
		}
		switch {
		case r.Deleted:
			cur = nil
		case cur == nil:
			cur = &current{rec: r, created: e.Time, updated: e.Time}
		default:
			cur.rec, cur.updated = r, e.Time
		}
	}
	return cur, nil
}

func (cur *current) payload(key session.Key, responseID string) *feedbackPayload {
	return &feedbackPayload{AgentID: key.App, SessionID: key.ID, ResponseID: responseID, EventID: cur.rec.EventID,
		Rating: cur.rec.Rating, Comment: cur.rec.Comment, TraceID: cur.rec.TraceID, RootSpanID: cur.rec.RootSpanID,
		CreatedAt: epoch(cur.created), UpdatedAt: epoch(cur.updated)}
}

// getFeedback serves GetResponseFeedback: Feedback is null when there is none or the
// response is unknown (as in KsADK); an unknown session is a 404.
func (s *Surface) getFeedback(ctx context.Context, c *gin.Context, req *feedbackRef) (any, *actionError) {
	key, e := s.feedbackKey(c, req)
	if e != nil {
		return nil, e
	}
	if _, e := s.existing(ctx, "GetResponseFeedback", key); e != nil {
		return nil, e
	}
	run, err := s.response(ctx, key, req.ResponseID)
	if err != nil {
		return nil, s.fromHost("GetResponseFeedback", err)
	}
	if run == nil {
		return feedbackData{}, nil
	}
	cur, err := s.latest(ctx, key, run.InvocationID)
	if err != nil {
		return nil, s.fromHost("GetResponseFeedback", err)
	}
	if cur == nil {
		return feedbackData{}, nil
	}
	return feedbackData{cur.payload(key, req.ResponseID)}, nil
}

// upsertFeedback serves UpsertResponseFeedback. The response must be an assistant
// response of the session, and EventId, when given, one of its assistant messages.
func (s *Surface) upsertFeedback(ctx context.Context, c *gin.Context, req *upsertFeedbackRequest) (any, *actionError) {
	rating := strings.ToLower(strings.TrimSpace(req.Rating))
	if rating != "up" && rating != "down" {
		if req.Rating == "" {
			return nil, missing("Rating")
		}
		return nil, invalid("Rating must be up or down, not %q", req.Rating)
	}
	if utf8.RuneCountInString(req.Comment) > maxCommentLen {
		return nil, invalid("Comment is longer than %d characters", maxCommentLen)
	}
	for field, v := range map[string]string{"EventId": req.EventID, "TraceId": req.TraceID, "RootSpanId": req.RootSpanID} {
		if len(v) > maxRefLen {
			return nil, invalid("%s is longer than %d characters", field, maxRefLen)
		}
	}
	key, e := s.feedbackKey(c, &req.feedbackRef)
	if e != nil {
		return nil, e
	}
	if _, e := s.existing(ctx, "UpsertResponseFeedback", key); e != nil {
		return nil, e
	}
	run, err := s.response(ctx, key, req.ResponseID)
	if err != nil {
		return nil, s.fromHost("UpsertResponseFeedback", err)
	}
	eventID := ""
	if run != nil {
		eventID = assistantEvent(run, key.ID, req.EventID)
	}
	if eventID == "" {
		if run != nil && req.EventID != "" {
			return nil, notFound("EventId %q is not an assistant message of response %q", req.EventID, req.ResponseID)
		}
		return nil, notFound("assistant response %q not found in session %q", req.ResponseID, key.ID)
	}
	cur, err := s.latest(ctx, key, run.InvocationID)
	if err != nil {
		return nil, s.fromHost("UpsertResponseFeedback", err)
	}
	rec := feedbackRecord{ResponseID: canonicalResponse(run), EventID: eventID, Rating: rating, Comment: req.Comment,
		TraceID: req.TraceID, RootSpanID: req.RootSpanID}
	evs, err := s.rt.AppendEvents(ctx, key, session.NewEvent{InvocationID: run.InvocationID, Type: session.TypeFeedback,
		Author: key.User, Data: session.MustJSON(rec)})
	if err != nil {
		return nil, s.fromHost("UpsertResponseFeedback", err)
	}
	now := evs[0].Time
	if cur == nil {
		cur = &current{created: now}
	}
	cur.rec, cur.updated = rec, now
	return feedbackData{cur.payload(key, req.ResponseID)}, nil
}

// deleteFeedback serves DeleteResponseFeedback. It never answers 404 (KsADK's
// contract): without feedback in force, Deleted is false and nothing is written.
func (s *Surface) deleteFeedback(ctx context.Context, c *gin.Context, req *feedbackRef) (any, *actionError) {
	key, e := s.feedbackKey(c, req)
	if e != nil {
		return nil, e
	}
	deleted := func(v bool) any {
		return struct {
			Deleted bool `json:"Deleted"`
		}{v}
	}
	run, err := s.response(ctx, key, req.ResponseID)
	if err != nil {
		return nil, s.fromHost("DeleteResponseFeedback", err)
	}
	if run == nil {
		return deleted(false), nil
	}
	cur, err := s.latest(ctx, key, run.InvocationID)
	if err != nil {
		return nil, s.fromHost("DeleteResponseFeedback", err)
	}
	if cur == nil {
		return deleted(false), nil
	}
	_, err = s.rt.AppendEvents(ctx, key, session.NewEvent{InvocationID: run.InvocationID, Type: session.TypeFeedback,
		Author: key.User, Data: session.MustJSON(feedbackRecord{ResponseID: cur.rec.ResponseID, Deleted: true})})
	if errors.Is(err, host.ErrNotFound) {
		return deleted(false), nil // the session went away meanwhile
	}
	if err != nil {
		return nil, s.fromHost("DeleteResponseFeedback", err)
	}
	return deleted(true), nil
}

// canonicalResponse is the id feedback records name a run's response by.
func canonicalResponse(run *host.Run) string {
	if run.ResponseID != "" {
		return run.ResponseID
	}
	return run.InvocationID
}

// assistantEvent returns the event id of the run's assistant message that want names,
// or of its last one when want is empty; "" if there is none.
func assistantEvent(run *host.Run, sessionID, want string) string {
	wantSeq := int64(-1)
	if want != "" {
		wantSeq = seqOfEventID(sessionID, want)
	}
	found := ""
	for _, ev := range journaled(run) {
		e := ev.Stored
		if ev.Kind != host.KindStored || e == nil || e.Type != session.TypeAssistantMessage {
			continue
		}
		if wantSeq < 0 || e.Seq == wantSeq {
			found = eventID(sessionID, e.Seq)
		}
	}
	return found
}

// journaled returns the events of a run's journal so far, without waiting.
func journaled(run *host.Run) []host.Event {
	ready, cancel := context.WithCancel(context.Background())
	cancel()
	sub := run.Subscribe(0)
	var out []host.Event
	for {
		ev, err := sub.Next(ready)
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}
