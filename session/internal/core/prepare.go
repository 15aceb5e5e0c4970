package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentengine/agentengine/internal/jsonfield"
	"github.com/agentengine/agentengine/session"
)

// Pending is a validated event ready to be stored; Assign gives it its seq.
type Pending struct {
	Event session.Event
	// Tier deltas routed by session.SplitStateDelta; nil when the event leaves a tier alone.
	App, User, Sess map[string]any
	// Checkpoints are saved with the event (a copy of NewEvent.Checkpoints); nil if none.
	Checkpoints *session.CheckpointSave

	prompt     string
	hasPrompt  bool
	checkpoint *session.ContextCheckpointData
	runStatus  string
}

// ValidResponseLookup rejects a response lookup without its user or response id.
func ValidResponseLookup(user, responseID string) error {
	if user == "" || responseID == "" {
		return fmt.Errorf("%w: response lookup needs user and response id", session.ErrInvalid)
	}
	return nil
}

// ValidOwner rejects an empty app or user.
func ValidOwner(app, user string) error {
	if app == "" || user == "" {
		return fmt.Errorf("%w: state of a new session needs app and user", session.ErrInvalid)
	}
	return nil
}

// ValidKey rejects keys with an empty component.
func ValidKey(k session.Key) error {
	if k.App == "" || k.User == "" || k.ID == "" {
		return fmt.Errorf("%w: session key needs app, user and id", session.ErrInvalid)
	}
	return nil
}

// Prepare validates and copies events before any backend touches its data, so a bad
// event in a batch fails the whole append with nothing stored. Zero times stay zero
// until Assign, so that a backend stamps them inside its write critical section. A
// non-empty invocationID (StartRun/FinishRun) is filled into events that carry none;
// an event naming a different invocation is rejected.
func Prepare(evs []session.NewEvent, invocationID string) ([]Pending, error) {
	out := make([]Pending, len(evs))
	// One allocation holds the copies of every event's data and delta: a batch is
	// stored and dropped together, and the caller may reuse its own slices.
	n := 0
	for _, ne := range evs {
		n += max(len(ne.Data), len(emptyObject)) + len(ne.StateDelta)
	}
	buf := make([]byte, 0, n)
	for i, ne := range evs {
		p, err := prepareOne(ne, invocationID, &buf)
		if err != nil {
			return nil, fmt.Errorf("event %d (%q): %w", i, ne.Type, err)
		}
		out[i] = p
	}
	return out, nil
}

// Size is the bytes the pending events carry, for bounding write batches.
func Size(ps []Pending) int {
	n := 0
	for i := range ps {
		n += len(ps[i].Event.Data) + len(ps[i].Event.StateDelta) + len(ps[i].Event.InvocationID) +
			len(ps[i].Event.ItemID) + len(ps[i].Event.Type) + len(ps[i].Event.Author)
		n += CheckpointSize(ps[i].Checkpoints)
	}
	return n
}

// Plain tells whether events change no state (of any tier) and save no runner
// checkpoints: besides the events themselves, their session's summary row is all they
// change.
func Plain(ps []Pending) bool {
	for _, p := range ps {
		if p.App != nil || p.User != nil || p.Sess != nil || p.Checkpoints != nil {
			return false
		}
	}
	return true
}

// carve appends b to *buf and returns the copy, capped so that appending to it can
// never reach a neighbour.
func carve[T ~string | ~[]byte](buf *[]byte, b T) []byte {
	start := len(*buf)
	*buf = append(*buf, b...)
	return (*buf)[start:len(*buf):len(*buf)]
}

// emptyObject is the data of an event stored without any.
const emptyObject = "{}"

func prepareOne(ne session.NewEvent, invocationID string, buf *[]byte) (Pending, error) {
	var p Pending
	if ne.Type == "" {
		return p, fmt.Errorf("%w: event type is empty", session.ErrInvalid)
	}
	inv := ne.InvocationID
	if invocationID != "" {
		if inv == "" {
			inv = invocationID
		} else if inv != invocationID {
			return p, fmt.Errorf("%w: event invocation %q is not the run's %q", session.ErrInvalid, inv, invocationID)
		}
	}
	var data []byte
	if len(ne.Data) > 0 {
		// The control types are fully decoded below, and decoding validates the whole
		// input first: scanning it here too would only double the work.
		if !isControl(ne.Type) && !json.Valid(ne.Data) {
			return p, fmt.Errorf("%w: event data is not valid JSON", session.ErrInvalid)
		}
		data = ne.Data
	}
	var t time.Time
	if !ne.Time.IsZero() {
		if !InRange(ne.Time) {
			return p, fmt.Errorf("%w: event time %s out of range", session.ErrInvalid, ne.Time)
		}
		t = Norm(ne.Time)
	}
	delta, aliased, err := prepareDelta(ne.StateDelta, &p)
	if err != nil {
		return p, err
	}
	if err := p.parseControl(ne.Type, data); err != nil {
		return p, err
	}
	if !ne.Checkpoints.Empty() {
		cs, err := PrepareCheckpoints(ne.Checkpoints)
		if err != nil {
			return p, err
		}
		p.Checkpoints = cs
	}
	if data == nil {
		data = carve(buf, emptyObject)
	} else {
		data = carve(buf, data)
	}
	if aliased {
		delta = carve(buf, delta)
	}
	p.Event = session.Event{
		InvocationID: inv,
		ItemID:       ne.ItemID,
		Type:         ne.Type,
		Author:       ne.Author,
		Data:         data,
		StateDelta:   delta,
		Time:         t,
	}
	return p, nil
}

// inProgressData is the run_status data of a run's start, as the runtime writes it.
const inProgressData = `{"status":"in_progress"}`

// isControl reports whether parseControl decodes the type's data.
func isControl(typ string) bool {
	switch typ {
	case session.TypeUserMessage, session.TypeRunStatus, session.TypeContextCheckpoint:
		return true
	}
	return false
}

// prepareDelta routes the delta to the tiers and returns what is stored on the event:
// the delta without temp: keys, which are never persisted anywhere. aliased says the
// result is raw itself (the caller must copy it). The routing is
// session.SplitStateDelta's; the delta is decoded once.
func prepareDelta(raw json.RawMessage, p *Pending) (delta json.RawMessage, aliased bool, err error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false, fmt.Errorf("state delta: %w", errors.Join(session.ErrInvalid, err))
	}
	if m == nil { // JSON null: no delta at all
		return nil, false, nil
	}
	temp := false
	for k, v := range m {
		switch {
		case len(k) > len(session.TierAppPrefix) && strings.HasPrefix(k, session.TierAppPrefix):
			p.App = put(p.App, k[len(session.TierAppPrefix):], v)
		case len(k) > len(session.TierUserPrefix) && strings.HasPrefix(k, session.TierUserPrefix):
			p.User = put(p.User, k[len(session.TierUserPrefix):], v)
		case strings.HasPrefix(k, session.TierTempPrefix):
			temp = true
		default:
			p.Sess = put(p.Sess, k, v)
		}
	}
	if !temp {
		return raw, true, nil
	}
	// Rare: re-encode without the temp keys, keeping every other value's text as sent.
	var keep map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keep); err != nil {
		return nil, false, fmt.Errorf("%w: state delta: %w", session.ErrInvalid, err)
	}
	for k := range keep {
		if strings.HasPrefix(k, session.TierTempPrefix) {
			delete(keep, k)
		}
	}
	if len(keep) == 0 {
		return nil, false, nil
	}
	b, err := json.Marshal(keep)
	if err != nil {
		return nil, false, fmt.Errorf("%w: state delta: %w", session.ErrInvalid, err)
	}
	return b, false, nil
}

func put(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

// fastString sets *dst to the string member key of data and reports true when data is
// valid JSON and jsonfield.StringField can read it; else data is to be decoded in full.
func fastString(data []byte, key string, dst *string) bool {
	if !json.Valid(data) {
		return false
	}
	s, ok := jsonfield.StringField(data, key)
	if ok {
		*dst = s
	}
	return ok
}

// parseControl decodes the payloads the store itself interprets (summary, checkpoint,
// run status); a malformed one would corrupt the session row, so it is rejected.
func (p *Pending) parseControl(typ string, data []byte) error {
	switch typ {
	case session.TypeUserMessage:
		// Only what the row takes: decoding the content blocks too would copy them all.
		var d struct {
			Text string `json:"text"`
		}
		if !fastString(data, "text", &d.Text) {
			if err := json.Unmarshal(data, &d); err != nil {
				return fmt.Errorf("%w: user_message data: %w", session.ErrInvalid, err)
			}
		}
		// A copy of the row's share: a slice of the text would keep all of it (megabytes,
		// maybe) alive for as long as the session row is.
		p.prompt, p.hasPrompt = strings.Clone(Truncate(d.Text, MaxPromptRunes)), strings.TrimSpace(d.Text) != ""
	case session.TypeRunStatus:
		if string(data) == inProgressData {
			p.runStatus = session.StatusInProgress // every run's start: no decoding
			return nil
		}
		var d struct {
			Status string `json:"status"`
		}
		if !fastString(data, "status", &d.Status) {
			if err := json.Unmarshal(data, &d); err != nil {
				return fmt.Errorf("%w: run_status data: %w", session.ErrInvalid, err)
			}
		}
		if d.Status == "" {
			return fmt.Errorf("%w: run_status data has no status", session.ErrInvalid)
		}
		p.runStatus = KnownStatus(d.Status)
	case session.TypeContextCheckpoint:
		var d session.ContextCheckpointData
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("%w: context_checkpoint data: %w", session.ErrInvalid, err)
		}
		if d.FromSeq < 0 || d.UntilSeq < d.FromSeq {
			return fmt.Errorf("%w: context_checkpoint range %d..%d", session.ErrInvalid, d.FromSeq, d.UntilSeq)
		}
		p.checkpoint = &d
	}
	return nil
}

// Assign gives the pending events the seqs after lastSeq and now as their time when they
// have none, and checks what depends on the seq (a checkpoint covers only earlier events).
func Assign(ps []Pending, sessionID string, lastSeq int64, now time.Time) ([]session.Event, error) {
	out := make([]session.Event, len(ps))
	for i := range ps {
		e := ps[i].Event
		e.Seq = lastSeq + int64(i) + 1
		e.SessionID = sessionID
		if e.Time.IsZero() {
			e.Time = now
		}
		if cp := ps[i].checkpoint; cp != nil && cp.UntilSeq >= e.Seq {
			return nil, fmt.Errorf("%w: context_checkpoint at seq %d covers up to %d", session.ErrInvalid, e.Seq, cp.UntilSeq)
		}
		out[i] = e
	}
	return out, nil
}
