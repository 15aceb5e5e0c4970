package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
	ps, err := core.Prepare(events, "")
	if err != nil {
		return nil, err
	}
	var out []session.Event
	err = s.write(ctx, key, func(r *row, b *pgx.Batch) error {
		out, err = s.appendEvents(b, r, ps)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("append to session %q: %w", key.ID, err)
	}
	return out, nil
}

// now is the time of a write to the session of r: after every earlier write to it, even
// one by a replica whose clock runs ahead.
func (s *Store) now(r *row) time.Time {
	now := s.clock.Now()
	if !now.After(r.sess.UpdatedAt) {
		now = r.sess.UpdatedAt.Add(time.Nanosecond)
	}
	return now
}

// appendEvents queues on b the statements that store prepared events after the session's
// last seq (the caller holds its row lock), apply their state deltas and checkpoints and
// update the summary row; r is updated to what they write (the caller drops r when this
// fails).
func (s *Store) appendEvents(b *pgx.Batch, r *row, ps []core.Pending) ([]session.Event, error) {
	evs, err := s.place(r, ps)
	if err != nil {
		return nil, err
	}
	var app, user, sess deltaFold
	for i := range ps {
		app.add(ps[i].App)
		user.add(ps[i].User)
		sess.add(ps[i].Sess)
	}
	var rows eventRows
	rows.add(evs)
	rows.queue(b, r.pk)
	k := r.sess.Key
	if app.used {
		set, del, err := app.args()
		if err != nil {
			return nil, fmt.Errorf("app state: %w", err)
		}
		b.Queue(`INSERT INTO app_state (app_id, state) VALUES ($1, $2::jsonb)
			ON CONFLICT (app_id) DO UPDATE SET state = (app_state.state - $3::text[]) || $2::jsonb`, esc(k.App), set, del)
	}
	if user.used {
		set, del, err := user.args()
		if err != nil {
			return nil, fmt.Errorf("user state: %w", err)
		}
		b.Queue(`INSERT INTO user_state (app_id, user_id, state) VALUES ($1, $2, $3::jsonb)
			ON CONFLICT (app_id, user_id) DO UPDATE SET state = (user_state.state - $4::text[]) || $3::jsonb`,
			esc(k.App), esc(k.User), set, del)
	}
	for i := range ps {
		queueCheckpoints(b, r.pk, ps[i].Checkpoints)
	}
	if r.fresh {
		// The row's insert, queued first, is given what the update would have set.
		r.fresh = false
		if sess.used {
			set, _, err := sess.args()
			if err != nil {
				return nil, fmt.Errorf("session state: %w", err)
			}
			r.state = set
		}
		return evs, nil
	}
	m := &r.sess
	sql := `UPDATE sessions SET title = $1, first_prompt = $2, last_prompt = $3, last_seq = $4, checkpoint_seq = $5,
		active_invocation_id = $6, active_run_status = $7, updated_at = $8`
	args := []any{esc(m.Title), esc(m.FirstPrompt), esc(m.LastPrompt), m.LastSeq, m.CheckpointSeq,
		esc(m.ActiveInvocationID), m.ActiveRunStatus, ns(m.UpdatedAt)}
	if sess.used {
		set, del, err := sess.args()
		if err != nil {
			return nil, fmt.Errorf("session state: %w", err)
		}
		sql += `, state = (state - $10::text[]) || $11::jsonb`
		args = append(args, r.pk, del, set)
	} else {
		args = append(args, r.pk)
	}
	b.Queue(sql+` WHERE pk = $9`, args...)
	return evs, nil
}

// place gives prepared events their seqs after the session's last and their time (a
// write's, after every earlier one of the session), and updates r's summary to them.
func (s *Store) place(r *row, ps []core.Pending) ([]session.Event, error) {
	now := s.now(r)
	evs, err := core.Assign(ps, r.sess.ID, r.sess.LastSeq, now)
	if err != nil {
		return nil, err
	}
	core.Summarize(&r.sess, r.renamed, ps, evs, now)
	return evs, nil
}

// eventRows are events as the columns of the statement that inserts them, one statement
// for any number of events.
type eventRows struct {
	seq, times             []int64
	inv, typ, author, data []string
	item, delta            []*string
}

func (e *eventRows) add(evs []session.Event) {
	if e.seq == nil { // empty arrays, not NULLs, for no events
		n := len(evs)
		e.seq, e.times = make([]int64, 0, n), make([]int64, 0, n)
		e.inv, e.typ, e.author, e.data = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		e.item, e.delta = make([]*string, 0, n), make([]*string, 0, n)
	}
	for _, ev := range evs {
		e.seq, e.times = append(e.seq, ev.Seq), append(e.times, ns(ev.Time))
		e.inv, e.typ = append(e.inv, esc(ev.InvocationID)), append(e.typ, esc(ev.Type))
		e.author, e.data = append(e.author, esc(ev.Author)), append(e.data, string(ev.Data))
		e.item, e.delta = append(e.item, nullable(esc(ev.ItemID))), append(e.delta, nullableJSON(ev.StateDelta))
	}
}

// queue queues the insert of the events into the session row pk.
func (e *eventRows) queue(b *pgx.Batch, pk int64) {
	b.Queue(`INSERT INTO events (session_pk, seq, invocation_id, item_id, type, author, data, state_delta, time)
		SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[])`,
		pk, e.seq, e.inv, e.item, e.typ, e.author, e.data, e.delta, e.times)
}

// deltaFold folds a tier's deltas, in order, into the keys to set and the keys to
// delete, so the tier is written with one statement.
type deltaFold struct {
	used bool
	set  map[string]any
	del  map[string]bool
}

func (f *deltaFold) add(d map[string]any) {
	if d == nil {
		return
	}
	if !f.used {
		f.used, f.set, f.del = true, map[string]any{}, map[string]bool{}
	}
	for k, v := range d {
		if v == nil {
			delete(f.set, k)
			f.del[k] = true
		} else {
			f.set[k] = v
			delete(f.del, k)
		}
	}
}

func (f *deltaFold) args() (set string, del []string, err error) {
	b, err := json.Marshal(f.set)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", session.ErrInvalid, err)
	}
	del = make([]string, 0, len(f.del))
	for k := range f.del {
		del = append(del, k)
	}
	return string(b), del, nil
}

const eventCols = `seq, invocation_id, item_id, type, author, data, state_delta, time`

// Events returns the session's events matching q in ascending seq order, in one
// statement; only an empty result pays a second query to tell "no events" from "no
// session".
func (s *Store) Events(ctx context.Context, key session.Key, q session.EventQuery) ([]session.Event, error) {
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	if err := s.settle(ctx, key); err != nil {
		return nil, err
	}
	if err := core.CheckEventQuery(q); err != nil {
		return nil, err
	}
	query, args := eventsQuery(key, q)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read events of %q: %w", key.ID, err)
	}
	out := []session.Event{}
	for rows.Next() {
		e, err := scanEvent(rows, key.ID)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("read events of %q: %w", key.ID, err)
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events of %q: %w", key.ID, err)
	}
	if len(out) == 0 {
		if _, err := lookup(ctx, s.pool, key, false); err != nil {
			return nil, err
		}
	}
	if q.Tail && q.Limit > 0 {
		slices.Reverse(out)
	}
	return out, nil
}

// eventsQuery builds the query for q: a range scan of the (session_pk, seq) key, or of
// (session_pk, invocation_id, seq) for one invocation.
func eventsQuery(key session.Key, q session.EventQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT ` + eventCols + ` FROM events
		WHERE session_pk = (SELECT pk FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3) AND seq > $4`)
	args := []any{esc(key.App), esc(key.User), esc(key.ID), q.AfterSeq}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.BeforeSeq > 0 {
		b.WriteString(` AND seq < ` + arg(q.BeforeSeq))
	}
	if q.InvocationID != "" {
		b.WriteString(` AND invocation_id = ` + arg(esc(q.InvocationID)))
	}
	if len(q.Types) > 0 {
		b.WriteString(` AND type = ANY(` + arg(escAll(q.Types)) + `::text[])`)
	}
	if q.Tail && q.Limit > 0 {
		b.WriteString(` ORDER BY seq DESC`) // newest first, reversed by the caller
	} else {
		b.WriteString(` ORDER BY seq`)
	}
	if q.Limit > 0 {
		b.WriteString(` LIMIT ` + arg(q.Limit))
	}
	return b.String(), args
}

func scanEvent(sc pgx.Row, sessionID string) (session.Event, error) {
	var (
		e           = session.Event{SessionID: sessionID}
		item, delta *string
		data        string
		t           int64
	)
	if err := sc.Scan(&e.Seq, &e.InvocationID, &item, &e.Type, &e.Author, &data, &delta, &t); err != nil {
		return e, err
	}
	if item != nil {
		e.ItemID = unesc(*item)
	}
	e.InvocationID, e.Type, e.Author = unesc(e.InvocationID), unesc(e.Type), unesc(e.Author)
	e.Data = json.RawMessage(data)
	if delta != nil {
		e.StateDelta = json.RawMessage(*delta)
	}
	e.Time = fromNS(t)
	return e, nil
}

// FindItem returns the most recently stored event with this item id among the user's
// sessions of app.
func (s *Store) FindItem(ctx context.Context, app, user, itemID string) (session.Event, error) {
	if err := s.settleAll(ctx); err != nil {
		return session.Event{}, err
	}
	if app == "" || user == "" || itemID == "" {
		return session.Event{}, fmt.Errorf("%w: finding an item needs app, user and item id", session.ErrInvalid)
	}
	var sid string
	row := s.pool.QueryRow(ctx, `SELECT s.id, e.seq, e.invocation_id, e.item_id, e.type, e.author,
			e.data, e.state_delta, e.time
		FROM events e JOIN sessions s ON s.pk = e.session_pk
		WHERE e.item_id = $1 AND s.app_id = $2 AND s.user_id = $3
		ORDER BY e.id DESC LIMIT 1`, esc(itemID), esc(app), esc(user))
	e, err := scanEvent(idScanner{row, &sid}, "")
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Event{}, fmt.Errorf("item %q: %w", itemID, session.ErrNotFound)
	}
	if err != nil {
		return session.Event{}, fmt.Errorf("find item %q: %w", itemID, err)
	}
	e.SessionID = unesc(sid)
	return e, nil
}

// idScanner scans a leading session id column, then hands the rest to scanEvent.
type idScanner struct {
	sc  pgx.Row
	sid *string
}

func (s idScanner) Scan(dest ...any) error {
	return s.sc.Scan(append([]any{s.sid}, dest...)...)
}
