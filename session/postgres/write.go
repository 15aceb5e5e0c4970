package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentengine/agentengine/session"
)

// write runs one write transaction on the session of key in two round trips: BEGIN with
// the session row's lock (which orders every write of the session, on every replica),
// then the statements fn queues, with COMMIT. A statement that fails aborts the
// transaction, so the COMMIT after it rolls back: all or nothing. A turn is several
// writes, so the round trips saved by pipelining are most of a write's latency.
func (s *Store) write(ctx context.Context, key session.Key, fn func(r *row, b *pgx.Batch) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("session database: %w", err)
	}
	// A connection left inside a transaction (an error below) is destroyed by Release.
	defer conn.Release()
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
	return nil
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
