package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentengine/agentengine/session"
)

// write runs one write transaction on the session of key, holding the session row's
// lock (which orders every write of the session, on every replica). A statement that
// fails aborts the transaction, so the COMMIT after it rolls back: all or nothing.
//
// A turn is several writes, so round trips are most of a write's latency. When this
// store knows the session row (it wrote or created it last), the write is one round
// trip: a guard that locks the row only if it is still what this store knows, then the
// statements fn queues from the known row, sent as one pipeline, which Postgres runs as
// one implicit transaction (up to the pipeline's single Sync; a failed statement skips
// the rest and rolls it back). A row changed meanwhile (by another replica, a rename, a
// delete) fails the guard, and the write is retried the long way: BEGIN with the row read
// under its lock, then the statements with COMMIT.
func (s *Store) write(ctx context.Context, key session.Key, fn func(r *row, b *pgx.Batch) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.settle(ctx, key); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("session database: %w", err)
	}
	// A connection left inside a transaction (an error below) is destroyed by Release.
	defer conn.Release()
	if known, ok := s.rows.get(key); ok {
		r := known
		done, err := s.writeKnown(ctx, conn, &r, fn)
		if done {
			if err != nil {
				s.rows.drop(key)
				return err
			}
			s.rows.put(key, r)
			return nil
		}
		s.rows.drop(key) // stale: the long way
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SELECT `+sessionCols+` FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3 FOR UPDATE`,
		esc(key.App), esc(key.User), esc(key.ID))
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	var r row
	if err == nil {
		r, err = scanSession(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		rollback(conn)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
		}
		return fmt.Errorf("write session %q: %w", key.ID, err)
	}
	b = &pgx.Batch{}
	if err := fn(&r, b); err != nil {
		rollback(conn)
		return err
	}
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn)
		return err
	}
	s.rows.put(key, r)
	return nil
}

// writeKnown is write's one-round-trip path from the known row r. done is false when
// the guard found the row changed (nothing was written); otherwise err is the write's.
func (s *Store) writeKnown(ctx context.Context, conn *pgxpool.Conn, r *row, fn func(r *row, b *pgx.Batch) error) (done bool, err error) {
	b := &pgx.Batch{}
	// Every write of the row sets a later updated_at, and a rename changes title or
	// renamed: together they tell whether the row is still r. No row divides by zero.
	b.Queue(`SELECT 1 / count(*)::int FROM (SELECT 1 FROM sessions
		WHERE pk = $1 AND updated_at = $2 AND title = $3 AND renamed = $4 FOR UPDATE) AS known`,
		r.pk, ns(r.sess.UpdatedAt), esc(r.sess.Title), r.renamed)
	if err := fn(r, b); err != nil {
		return true, err // nothing sent
	}
	br := conn.SendBatch(ctx, b)
	if _, gerr := br.Exec(); gerr != nil {
		_ = br.Close()
		rollback(conn)
		var pe *pgconn.PgError
		if errors.As(gerr, &pe) && pe.Code == "22012" {
			return false, nil
		}
		return true, fmt.Errorf("write session %q: %w", r.sess.ID, gerr)
	}
	// Close reads the statements' results in order, running the callbacks of those that
	// return rows (pgx.QueuedQuery.QueryRow), and returns the first error.
	if err = br.Close(); err != nil {
		rollback(conn)
		return true, err
	}
	return true, nil
}

// writeNew creates the session of key (created at created) and runs fn's statements
// on it in one round trip: the row's key is drawn ahead from the sessions' sequence, so
// the statements need nothing back from the insert, and the pipeline is one implicit
// transaction. exists is true, with nothing written, when the key is taken.
func (s *Store) writeNew(ctx context.Context, key session.Key, created time.Time, fn func(r *row, b *pgx.Batch) error) (exists bool, err error) {
	r, err := s.newRow(ctx, key, created)
	if err != nil {
		return false, err
	}
	b := newPipeline()
	if err := fn(&r, b); err != nil {
		return false, err
	}
	return s.sendNew(ctx, key, &r, b)
}

// newRow draws the key of a session to create at created (see writeNew) and returns its
// row as inserted, before any write in it.
func (s *Store) newRow(ctx context.Context, key session.Key, created time.Time) (row, error) {
	if err := ctx.Err(); err != nil {
		return row{}, err
	}
	pk, err := s.pks.next(ctx, s.pool)
	if err != nil {
		return row{}, fmt.Errorf("session database: %w", err)
	}
	at := fromNS(ns(created)) // as the column keeps it
	return row{pk: pk, sess: session.Session{Key: key, CreatedAt: at, UpdatedAt: at}, fresh: true}, nil
}

// newPipeline starts the pipeline that creates a session: the row's insert first (the
// run and events refer to it), made by sendNew.
func newPipeline() *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("")
	return b
}

// sendNew sends the pipeline newPipeline started, with the statements queued on it
// since and the row's insert as they leave the row.
func (s *Store) sendNew(ctx context.Context, key session.Key, r *row, b *pgx.Batch) (exists bool, err error) {
	// Inserted as fn's statements left it: one statement instead of an insert and an
	// update of the row just inserted.
	m := &r.sess
	state := r.state
	if state == "" {
		state = "{}"
	}
	b.QueuedQueries[0].SQL = `INSERT INTO sessions (pk, app_id, user_id, id, title, first_prompt, last_prompt, last_seq,
		checkpoint_seq, active_invocation_id, active_run_status, state, created_at, updated_at) OVERRIDING SYSTEM VALUE
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14)`
	b.QueuedQueries[0].Arguments = []any{r.pk, esc(key.App), esc(key.User), esc(key.ID), esc(m.Title), esc(m.FirstPrompt),
		esc(m.LastPrompt), m.LastSeq, m.CheckpointSeq, esc(m.ActiveInvocationID), m.ActiveRunStatus, state, ns(m.CreatedAt), ns(m.UpdatedAt)}
	r.fresh, r.state = false, ""
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("session database: %w", err)
	}
	defer conn.Release()
	if err = conn.SendBatch(ctx, b).Close(); err != nil { // results in order, callbacks run
		rollback(conn)
		if code, constraint := pgCode(err); code == "23505" && constraint == sessionsKeyConstraint {
			return true, nil
		}
		return false, err
	}
	s.rows.put(key, *r)
	return false, nil
}

// sessionsKeyConstraint is the name Postgres gives the sessions' UNIQUE (app_id,
// user_id, id).
const sessionsKeyConstraint = "sessions_app_id_user_id_id_key"

// pkBlockSize is how many session keys a store draws from the sequence at a time.
const pkBlockSize = 32

// pkBlock hands out session keys drawn ahead from the sessions' identity sequence, so
// creating a session inside another write needs no round trip of its own. Keys drawn
// and not used leave gaps, which nothing relies on.
type pkBlock struct {
	mu   sync.Mutex
	free []int64
}

func (p *pkBlock) next(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		rows, err := pool.Query(ctx, `SELECT nextval(pg_get_serial_sequence('sessions', 'pk')) FROM generate_series(1, $1)`, pkBlockSize)
		if err != nil {
			return 0, err
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return 0, err
		}
		p.free = keys
	}
	pk := p.free[0]
	p.free = p.free[1:]
	return pk, nil
}

// rowCacheSize bounds the rows a store remembers (a row is a few hundred bytes).
const rowCacheSize = 4096

// rowCache remembers the session rows this store wrote last, for one-round-trip writes.
type rowCache struct {
	mu sync.Mutex
	m  map[session.Key]row
}

func (c *rowCache) get(k session.Key) (row, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

func (c *rowCache) put(k session.Key, r row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[session.Key]row)
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= rowCacheSize {
		for old := range c.m { // forget an arbitrary row
			delete(c.m, old)
			break
		}
	}
	c.m[k] = r
}

func (c *rowCache) drop(k session.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// rollback ends a failed transaction so the connection can be reused; when that fails
// too, the pool drops the connection.
func rollback(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' || conn.Conn().IsClosed() {
		return
	}
	_, _ = conn.Exec(context.Background(), `ROLLBACK`)
}

// pgCode returns a server error's SQLSTATE and constraint ("" when err is not one).
func pgCode(err error) (code, constraint string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.ConstraintName
	}
	return "", ""
}
