// Package sqlite is the local session backend: one SQLite file in WAL mode. All writes
// go through a single connection owned by one writer goroutine, so seq allocation and
// the in-progress-run check are serialized in-process without SQLITE_BUSY, and
// concurrent writes share transactions (group commit, see writer.go); reads use a
// bounded pool of read-only connections that never block the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Store is a SQLite-backed session.Store.
type Store struct {
	w     *sql.DB   // exactly one connection: the only write path
	wconn *sql.Conn // that connection, held by the writer for the Store's lifetime
	r     *sql.DB   // read-only pool
	clock core.Clock
	st    statements
	wst   wstatements
	wr    *writer

	closeOnce sync.Once
	closeErr  error
}

var _ session.Store = (*Store)(nil)

type config struct {
	readConns   int
	busyTimeout time.Duration
}

// Option configures Open.
type Option func(*config)

// WithReadConns bounds the read connection pool (default 4).
func WithReadConns(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.readConns = n
		}
	}
}

// WithBusyTimeout sets how long a connection waits for another process's (or another
// Store's) lock on the file before failing (default 5s).
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.busyTimeout = d
		}
	}
}

// Open opens (creating if needed) the session database at path and migrates it.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: sqlite session store needs a path", session.ErrInvalid)
	}
	cfg := config{readConns: 4, busyTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("session database %s: %w", path, err)
	}
	// The file holds prompts and tool output: private to the user from the start.
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("session database directory: %w", err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}

	if err := prepareFile(ctx, abs); err != nil {
		return nil, err
	}

	busy := strconv.FormatInt(cfg.busyTimeout.Milliseconds(), 10)
	// BEGIN IMMEDIATE takes the file's write lock up front, so a transaction never has
	// to upgrade a read lock (which fails with SQLITE_BUSY without waiting) when another
	// process or Store writes the same file.
	w, err := sql.Open("sqlite3", dsn(abs, url.Values{
		"_journal_mode": {"WAL"}, "_synchronous": {"NORMAL"}, "_busy_timeout": {busy},
		"_foreign_keys": {"1"}, "_txlock": {"immediate"},
	}))
	if err != nil {
		return nil, fmt.Errorf("open session database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}
	s.r, err = sql.Open("sqlite3", dsn(abs, url.Values{
		"_busy_timeout": {busy}, "_query_only": {"1"}, "_stmt_cache_size": {"32"},
	}))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open session database: %w", err)
	}
	s.r.SetMaxOpenConns(cfg.readConns)
	s.r.SetMaxIdleConns(cfg.readConns)
	if err := s.st.prepare(ctx, s.r); err != nil {
		s.Close()
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}
	if s.wconn, err = w.Conn(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}
	if err := s.wst.prepare(ctx, s.wconn); err != nil {
		s.Close()
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}
	if _, err := s.wconn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = `+strconv.Itoa(walAutoCheckpoint)); err != nil {
		s.Close()
		return nil, fmt.Errorf("session database %s: %w", abs, err)
	}
	s.wr = newWriter(&s.wst, &s.clock)
	return s, nil
}

// walAutoCheckpoint is the WAL size, in pages (about 16 MB), at which a commit copies
// the WAL into the database file. SQLite's default of 1000 pages made checkpoints about
// a third of a turn's cost under load: each one copies every page rewritten since the
// last (index leaves and session rows are rewritten by nearly every commit) and syncs
// both files. Fewer, larger checkpoints copy such a page once for many commits.
const walAutoCheckpoint = 4000

// dsn builds a file: URI so that any path (spaces, '?', '#', '%') reaches SQLite intact.
func dsn(abs string, params url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String() + "?" + params.Encode()
}

// Close closes the database; it is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.wr != nil {
			s.wr.close() // waits for a running batch
		}
		var errs []error
		s.wst.close()
		s.st.close()
		if s.wconn != nil {
			errs = append(errs, s.wconn.Close())
		}
		if s.r != nil {
			errs = append(errs, s.r.Close())
		}
		errs = append(errs, s.w.Close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

func rollback(tx *sql.Tx) {
	// Rollback after Commit is a no-op error (ErrTxDone); a failed rollback leaves
	// nothing to do either: SQLite discards the transaction with the connection state.
	_ = tx.Rollback()
}

// write runs fn in a write transaction of the writer (shared with other requests),
// with a time stamped in commit order. fn runs in the writer goroutine and must use t
// for everything it reads or writes; size is roughly the bytes it stores.
func (s *Store) write(ctx context.Context, size int, fn func(t *wtx, now time.Time) error) error {
	return s.wr.do(ctx, size, fn)
}

// read runs fn in one read transaction, so multi-statement reads see one snapshot.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer rollback(tx)
	return fn(tx)
}

func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)
}

func ns(t time.Time) int64 { return t.UnixNano() }

func fromNS(n int64) time.Time { return time.Unix(0, n).UTC() }

// nullable stores "" as NULL (item and response ids: NULLs stay out of the unique and
// partial indexes).
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullableJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
