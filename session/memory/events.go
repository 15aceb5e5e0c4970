package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Append stores events atomically: everything is validated before anything changes.
func (s *Store) Append(ctx context.Context, key session.Key, events ...session.NewEvent) ([]session.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: no events to append", session.ErrInvalid)
	}
	// Validation and copying need no lock: done first, they do not serialize callers.
	ps, err := core.Prepare(events, "")
	if err != nil {
		return nil, err
	}
	evs, err := s.append(ctx, key, ps)
	if err != nil {
		return nil, err
	}
	return core.CopyEvents(make([]session.Event, 0, len(evs)), evs), nil
}

func (s *Store) append(ctx context.Context, key session.Key, ps []core.Pending) ([]session.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return nil, err
	}
	return s.appendLocked(rec, ps)
}

// appendLocked assigns seqs and applies prepared events; it fails only before the first
// change. It returns the stored events themselves: the caller copies them, outside the
// lock (stored bytes are never written again, so that is safe). The caller holds mu.
func (s *Store) appendLocked(rec *sessionRec, ps []core.Pending) ([]session.Event, error) {
	now := s.clock.Now()
	evs, err := core.Assign(ps, rec.row.ID, rec.row.LastSeq, now)
	if err != nil {
		return nil, err
	}
	s.commitLocked(rec, ps, evs, now)
	return evs, nil
}

func (s *Store) commitLocked(rec *sessionRec, ps []core.Pending, evs []session.Event, now time.Time) {
	key := rec.row.Key
	au := appUser{key.App, key.User}
	for i, p := range ps {
		if p.App != nil {
			s.apps[key.App] = session.ApplyDelta(s.apps[key.App], p.App)
		}
		if p.User != nil {
			s.users[au] = session.ApplyDelta(s.users[au], p.User)
		}
		if p.Sess != nil {
			rec.state = session.ApplyDelta(rec.state, p.Sess)
		}
		rec.checkpoints.Apply(p.Checkpoints)
		if id := evs[i].ItemID; id != "" {
			ref := itemRef{rec: rec, seq: evs[i].Seq}
			refs, ok := s.items[id]
			if ok {
				refs = refs.add(ref)
			} else {
				refs = itemRefs{first: ref}
			}
			// With a kept key every time: a map keeps the key it was last assigned with.
			s.items[s.kept.str(id)] = refs
		}
	}
	rec.events.reserve(evs)
	for i := range evs {
		rec.events.add(&evs[i])
	}
	row := &rec.row
	firstPrompt, title := row.FirstPrompt, row.Title
	core.Summarize(row, rec.renamed, ps, evs, now)
	// The summary's strings shared with what the session keeps already, or kept as
	// arena strings: they change rarely or never.
	if firstPrompt == "" && row.FirstPrompt != "" {
		row.FirstPrompt = s.kept.str(row.FirstPrompt)
	}
	if title == "" && row.Title != "" {
		row.Title = s.kept.str(row.Title)
	}
	if row.LastPrompt == row.FirstPrompt {
		row.LastPrompt = row.FirstPrompt
	}
	keepActive(rec)
}

// keepActive has the row's active invocation id share its run's id.
func keepActive(rec *sessionRec) {
	if r, ok := rec.runs.get(rec.row.ActiveInvocationID); ok {
		rec.row.ActiveInvocationID = r.run.InvocationID
	}
}

func (s *Store) unindexItem(rec *sessionRec, item string) {
	refs, ok := s.items[item]
	if !ok {
		return // the session stored the item more than once: already gone
	}
	if refs, ok := refs.without(rec); ok {
		s.items[s.kept.str(item)] = refs
	} else {
		delete(s.items, item)
	}
}

// Events returns the session's events matching q in ascending seq order.
func (s *Store) Events(ctx context.Context, key session.Key, q session.EventQuery) ([]session.Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return nil, err
	}
	if err := core.CheckEventQuery(q); err != nil {
		return nil, err
	}
	// Seqs are dense from 1, so the exclusive bounds are log indexes.
	n := rec.events.len()
	start, end := min(q.AfterSeq, n), n
	if q.BeforeSeq > 0 {
		end = max(start, min(q.BeforeSeq-1, n))
	}
	// Matches are unpacked first (their data still the log's), then their data copied
	// with one allocation. Forward reads walk the log from one event to the next.
	var match []session.Event
	if q.Limit == 0 && q.InvocationID == "" && len(q.Types) == 0 {
		// The history read: a contiguous window.
		match = make([]session.Event, 0, end-start)
		for i, off := start, rec.events.start(start); i < end; i++ {
			var e session.Event
			e, off = rec.events.decode(off, i+1, key.ID)
			match = append(match, e)
		}
	} else if q.Tail && q.Limit > 0 {
		for i := end - 1; i >= start && len(match) < q.Limit; i-- {
			if e := rec.events.get(i, key.ID); core.MatchEvent(&e, &q) {
				match = append(match, e)
			}
		}
		slices.Reverse(match)
	} else {
		for i, off := start, rec.events.start(start); i < end; i++ {
			if q.Limit > 0 && len(match) == q.Limit {
				break
			}
			var e session.Event
			if e, off = rec.events.decode(off, i+1, key.ID); core.MatchEvent(&e, &q) {
				match = append(match, e)
			}
		}
	}
	if match == nil {
		return []session.Event{}, nil
	}
	return core.CopyEvents(match[:0], match), nil // in place: each is copied before it is overwritten
}

// FindItem returns the most recently stored event with this item id among the user's
// sessions of app.
func (s *Store) FindItem(ctx context.Context, app, user, itemID string) (session.Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.Event{}, err
	}
	if app == "" || user == "" || itemID == "" {
		return session.Event{}, fmt.Errorf("%w: finding an item needs app, user and item id", session.ErrInvalid)
	}
	ref, ok := s.items[itemID].newest(func(ref itemRef) bool {
		return ref.rec != nil && ref.rec.row.App == app && ref.rec.row.User == user
	})
	if !ok {
		return session.Event{}, fmt.Errorf("item %q: %w", itemID, session.ErrNotFound)
	}
	return core.CopyEvent(ref.rec.events.get(ref.seq-1, ref.rec.row.ID)), nil
}
