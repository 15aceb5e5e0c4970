package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Append stores events, their state deltas and the session summary in one transaction.
func (s *Store) Append(ctx context.Context, key session.Key, events ...session.NewEvent) ([]session.Event, error) {
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: no events to append", session.ErrInvalid)
	}
	// Validation and copying happen in the caller's goroutine, not the writer's.
	ps, err := core.Prepare(events, "")
	if err != nil {
		return nil, err
	}
	var out []session.Event
	err = s.write(ctx, keySize(key)+core.Size(ps), func(t *wtx, now time.Time) error {
		c, err := t.session(key)
		if err != nil {
			return err
		}
		out, err = t.appendEvents(c, ps, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendEvents inserts prepared events after the session's last seq, applies their
// state deltas to the three tiers and updates the cached summary row (written by
// flush).
func (t *wtx) appendEvents(c *crow, ps []core.Pending, now time.Time) ([]session.Event, error) {
	evs, err := core.Assign(ps, c.sess.ID, c.sess.LastSeq, now)
	if err != nil {
		return nil, err
	}
	if err := t.insertEvents(c, evs); err != nil {
		return nil, err
	}
	if err := t.applyDeltas(c, ps); err != nil {
		return nil, err
	}
	for i := range ps {
		if err := t.saveCheckpoints(c, ps[i].Checkpoints); err != nil {
			return nil, err
		}
	}
	core.Summarize(&c.sess, c.renamed, ps, evs, now)
	c.dirty = true
	return evs, nil
}

// insertEvents inserts events of c's session, up to maxEventsPerInsert a statement.
func (t *wtx) insertEvents(c *crow, evs []session.Event) error {
	args := make([]any, 0, 9*min(len(evs), maxEventsPerInsert))
	for rest := evs; len(rest) > 0; {
		chunk := rest[:min(len(rest), maxEventsPerInsert)]
		rest = rest[len(chunk):]
		args = args[:0]
		for _, e := range chunk {
			args = append(args, c.pk, e.Seq, e.InvocationID, nullable(e.ItemID), e.Type, e.Author,
				string(e.Data), nullableJSON(e.StateDelta), ns(e.Time))
		}
		if _, err := t.w.st.insertEvents[len(chunk)-1].Exec(args...); err != nil {
			return fmt.Errorf("insert events %d..%d of session %q: %w", chunk[0].Seq, chunk[len(chunk)-1].Seq, c.sess.ID, err)
		}
	}
	return nil
}

// Events returns the session's events matching q in ascending seq order. It is one
// statement (one snapshot, no transaction round trips): the session is resolved in a
// subquery, and only an empty result pays a second query to tell "no events" from "no
// session".
func (s *Store) Events(ctx context.Context, key session.Key, q session.EventQuery) ([]session.Event, error) {
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	if err := core.CheckEventQuery(q); err != nil {
		return nil, err
	}
	if err := s.wr.settle(ctx, &key); err != nil {
		return nil, err
	}
	var (
		rows *sql.Rows
		err  error
	)
	if q.BeforeSeq == 0 && q.InvocationID == "" && len(q.Types) == 0 && q.Limit == 0 {
		// The history read (everything after a seq): prepared once.
		rows, err = s.st.rEventsAfter.QueryContext(ctx, key.App, key.User, key.ID, q.AfterSeq)
	} else {
		query, args := eventsQuery(key, q)
		rows, err = s.r.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("read events of %q: %w", key.ID, err)
	}
	defer rows.Close()
	out := []session.Event{}
	for rows.Next() {
		e, err := scanEvent(rows, key.ID)
		if err != nil {
			return nil, fmt.Errorf("read events of %q: %w", key.ID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events of %q: %w", key.ID, err)
	}
	if len(out) == 0 {
		if _, err := lookup(ctx, s.st.rSession, key); err != nil {
			return nil, err
		}
	}
	if q.Tail && q.Limit > 0 {
		slices.Reverse(out)
	}
	return out, nil
}

// eventsQuery builds the query for q. Its shape depends only on which filters are set
// (types travel as one JSON array), so the driver's statement cache reuses each shape.
func eventsQuery(key session.Key, q session.EventQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(eventsFrom)
	args := []any{key.App, key.User, key.ID, q.AfterSeq}
	if q.BeforeSeq > 0 {
		b.WriteString(` AND seq < ?`)
		args = append(args, q.BeforeSeq)
	}
	if q.InvocationID != "" {
		b.WriteString(` AND invocation_id = ?`)
		args = append(args, q.InvocationID)
	}
	if len(q.Types) > 0 {
		types, _ := json.Marshal(q.Types) // []string always encodes
		b.WriteString(` AND type IN (SELECT value FROM json_each(?))`)
		args = append(args, string(types))
	}
	if q.Tail && q.Limit > 0 {
		// Newest first, reversed by the caller.
		b.WriteString(` ORDER BY seq DESC`)
	} else {
		b.WriteString(` ORDER BY seq`)
	}
	if q.Limit > 0 {
		b.WriteString(` LIMIT ?`)
		args = append(args, q.Limit)
	}
	return b.String(), args
}

func scanEvent(sc scanner, sessionID string) (session.Event, error) {
	var (
		e     = session.Event{SessionID: sessionID}
		item  sql.NullString
		data  string
		delta sql.NullString
		t     int64
	)
	if err := sc.Scan(&e.Seq, &e.InvocationID, &item, &e.Type, &e.Author, &data, &delta, &t); err != nil {
		return e, err
	}
	e.ItemID = item.String
	e.Data = json.RawMessage(data)
	if delta.Valid {
		e.StateDelta = json.RawMessage(delta.String)
	}
	e.Time = fromNS(t)
	return e, nil
}

// FindItem returns the most recently stored event with this item id among the user's
// sessions of app.
func (s *Store) FindItem(ctx context.Context, app, user, itemID string) (session.Event, error) {
	if app == "" || user == "" || itemID == "" {
		return session.Event{}, fmt.Errorf("%w: finding an item needs app, user and item id", session.ErrInvalid)
	}
	if err := s.wr.settle(ctx, nil); err != nil {
		return session.Event{}, err
	}
	var sid string
	row := s.r.QueryRowContext(ctx, `SELECT s.id, e.seq, e.invocation_id, e.item_id, e.type, e.author,
			e.data, e.state_delta, e.time
		FROM events e JOIN sessions s ON s.pk = e.session_pk
		WHERE e.item_id = ? AND s.app_id = ? AND s.user_id = ?
		ORDER BY e.time DESC, e.session_pk DESC, e.seq DESC LIMIT 1`, itemID, app, user)
	e, err := scanEvent(idScanner{row, &sid}, "")
	if errors.Is(err, sql.ErrNoRows) {
		return session.Event{}, fmt.Errorf("item %q: %w", itemID, session.ErrNotFound)
	}
	if err != nil {
		return session.Event{}, fmt.Errorf("find item %q: %w", itemID, err)
	}
	e.SessionID = sid
	return e, nil
}

// idScanner scans a leading session id column, then hands the rest to scanEvent.
type idScanner struct {
	sc  scanner
	sid *string
}

func (s idScanner) Scan(dest ...any) error {
	return s.sc.Scan(append([]any{s.sid}, dest...)...)
}
