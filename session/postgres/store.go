// Package postgres is the shared session backend: PostgreSQL through pgx, for teams that
// run several agentengine replicas on one database. Every write is one transaction that
// locks the session row first, so seqs are assigned gap-free in commit order whichever
// replica writes; the one-in-progress-run rule is a unique index, so it holds across
// replicas. The store also carries what replicas need of each other (cluster.go): leases,
// run ownership and a LISTEN/NOTIFY relay.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Defaults of the pool and statements.
const (
	DefaultMaxConns         = 16
	DefaultStatementTimeout = 30 * time.Second
	DefaultConnectTimeout   = 10 * time.Second
	DefaultLeaseTTL         = 5 * time.Second
)

// Store is a PostgreSQL-backed session.Store.
type Store struct {
	pool  *pgxpool.Pool
	clock core.Clock
	cfg   config

	cl   *cluster // leases and the relay; nil until started (see cluster.go)
	rows rowCache // session rows this store wrote last (see write)
	pks  pkBlock  // session keys drawn ahead (see writeNew)

	deferred deferredStarts // starts of unobserved runs not sent yet (see deferred.go)

	closeOnce sync.Once
	closeErr  error
}

var _ session.Store = (*Store)(nil)

type config struct {
	maxConns         int32
	statementTimeout time.Duration
	connectTimeout   time.Duration
	leaseTTL         time.Duration
	migrate          bool
	replicaID        string
	cluster          bool
	deferWindow      time.Duration // how long an unobserved start waits for its end
}

func defaultConfig() config {
	return config{maxConns: DefaultMaxConns, statementTimeout: DefaultStatementTimeout,
		connectTimeout: DefaultConnectTimeout, leaseTTL: DefaultLeaseTTL, migrate: true, cluster: true,
		deferWindow: deferWindow}
}

// Option configures Open.
type Option func(*config)

// WithMaxConns bounds the connection pool (default DefaultMaxConns). A pool_max_conns
// parameter in the DSN wins.
func WithMaxConns(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxConns = int32(n)
		}
	}
}

// WithStatementTimeout bounds every statement (default DefaultStatementTimeout; 0 keeps
// the default). A statement_timeout parameter in the DSN wins.
func WithStatementTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.statementTimeout = d
		}
	}
}

// WithConnectTimeout bounds connecting (default DefaultConnectTimeout).
func WithConnectTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.connectTimeout = d
		}
	}
}

// WithoutMigrate makes Open fail on a schema that is not current instead of migrating
// it (for deployments that run `agentengine migrate` as a separate step).
func WithoutMigrate() Option { return func(c *config) { c.migrate = false } }

// WithLeaseTTL sets how long a replica's lease lasts without a heartbeat before a
// survivor interrupts its runs (default DefaultLeaseTTL; heartbeats every third of it).
func WithLeaseTTL(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.leaseTTL = d
		}
	}
}

// WithReplicaID names this replica (default: a random id). Ids must be unique among the
// replicas sharing the database.
func WithReplicaID(id string) Option { return func(c *config) { c.replicaID = id } }

// WithoutCluster opens the store for tools (migrate, sessions listing): no lease, no
// relay, and runs it starts are owned by nobody.
func WithoutCluster() Option { return func(c *config) { c.cluster = false } }

// Open connects to the database at dsn, migrates it and, unless WithoutCluster, joins
// the cluster of replicas (a lease renewed in the background, the relay's listener).
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	pc, err := poolConfig(dsn, cfg)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(cctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	s := &Store{pool: pool, cfg: cfg}
	conn, err := pool.Acquire(cctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", describe(pc.ConnConfig), err)
	}
	if cfg.migrate {
		_, err = Migrate(ctx, conn.Conn())
	} else {
		err = checkVersion(ctx, conn.Conn())
	}
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, err
	}
	if cfg.cluster {
		if err := s.startCluster(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// Clustered reports whether the store joined the cluster of replicas (it was opened
// without WithoutCluster): then it coordinates the replicas' runtimes (host.Config.Cluster).
func (s *Store) Clustered() bool { return s.cl != nil }

// poolConfig parses dsn and applies the options the DSN leaves unset.
func poolConfig(dsn string, cfg config) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN with its password: say what is wrong only.
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			return nil, fmt.Errorf("invalid DSN: %w", pe.Unwrap())
		}
		return nil, errors.New("invalid DSN")
	}
	if !hasParam(dsn, "pool_max_conns") {
		pc.MaxConns = cfg.maxConns
	}
	rp := pc.ConnConfig.RuntimeParams
	if _, ok := rp["statement_timeout"]; !ok {
		rp["statement_timeout"] = strconv.FormatInt(cfg.statementTimeout.Milliseconds(), 10)
	}
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = "agentengine"
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = cfg.connectTimeout
	}
	return pc, nil
}

// hasParam reports whether dsn sets a parameter (pgxpool consumes its own parameters
// while parsing, so the text is what tells).
func hasParam(dsn, name string) bool { return strings.Contains(dsn, name) }

// describe names the server without credentials, for errors.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres at %s:%d database %q user %q", c.Host, c.Port, c.Database, c.User)
}

func checkVersion(ctx context.Context, conn *pgx.Conn) error {
	var v int
	err := conn.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if err != nil {
		return fmt.Errorf("session database has no agentengine schema (run agentengine migrate): %w", err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("session database schema version is %d, this build needs %d: run agentengine migrate", v, SchemaVersion)
	}
	return nil
}

// Close leaves the cluster (its runs are left to the survivors' recovery) and closes
// the pool; it is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.statementTimeout)
		err := s.settleAll(ctx)
		cancel()
		if err != nil {
			s.closeErr = err
		}
		if s.cl != nil {
			s.closeErr = errors.Join(s.closeErr, s.cl.close())
		}
		s.pool.Close()
	})
	return s.closeErr
}

// tx runs fn in one read-committed transaction.
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, fn)
}

func ns(t time.Time) int64 { return t.UnixNano() }

func fromNS(n int64) time.Time { return time.Unix(0, n).UTC() }

// nullable stores "" as NULL (item and response ids: NULLs stay out of the indexes).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullableJSON(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}
