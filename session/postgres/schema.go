package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the schema version this build writes: the number of migrations.
const SchemaVersion = 3

// migrations are forward-only: migration i moves a database from version i to i+1.
// Never edit a released entry; append a new one.
var migrations = []string{
	// 1: initial schema. Times are Unix nanoseconds (bigint) so that they round-trip
	// exactly, as in the local backend; payloads are text so that they round-trip byte
	// for byte; state tiers are jsonb so that deltas merge in one statement.
	`
CREATE TABLE sessions (
	pk                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	app_id               text NOT NULL,
	user_id              text NOT NULL,
	id                   text NOT NULL,
	title                text NOT NULL DEFAULT '',
	renamed              boolean NOT NULL DEFAULT false,
	first_prompt         text NOT NULL DEFAULT '',
	last_prompt          text NOT NULL DEFAULT '',
	last_seq             bigint NOT NULL DEFAULT 0,
	checkpoint_seq       bigint NOT NULL DEFAULT 0,
	active_invocation_id text NOT NULL DEFAULT '',
	active_run_status    text NOT NULL DEFAULT '',
	state                jsonb NOT NULL DEFAULT '{}',
	created_at           bigint NOT NULL,
	updated_at           bigint NOT NULL,
	UNIQUE (app_id, user_id, id)
);
CREATE INDEX sessions_by_update ON sessions (app_id, user_id, updated_at DESC, pk DESC);

-- (session_pk, seq) is the primary key: seqs are unique per session, and a turn's
-- reads (after the checkpoint seq, or one invocation's) are index range scans.
CREATE TABLE events (
	session_pk    bigint NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	seq           bigint NOT NULL,
	id            bigint GENERATED ALWAYS AS IDENTITY,
	invocation_id text NOT NULL DEFAULT '',
	item_id       text,
	type          text NOT NULL,
	author        text NOT NULL DEFAULT '',
	data          text NOT NULL,
	state_delta   text,
	time          bigint NOT NULL,
	PRIMARY KEY (session_pk, seq)
);
CREATE INDEX events_by_item ON events (item_id) WHERE item_id IS NOT NULL;
CREATE INDEX events_by_invocation ON events (session_pk, invocation_id, seq);

CREATE TABLE runs (
	pk            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	session_pk    bigint NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	invocation_id text NOT NULL,
	response_id   text UNIQUE,
	app_id        text NOT NULL,
	user_id       text NOT NULL,
	session_id    text NOT NULL,
	status        text NOT NULL,
	deleted       boolean NOT NULL DEFAULT false,
	meta          text,
	-- owner is the replica that executes the run while it is in progress.
	owner         text NOT NULL DEFAULT '',
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL,
	UNIQUE (session_pk, invocation_id)
);
-- At most one in-progress run per session, enforced by the database for every replica.
CREATE UNIQUE INDEX runs_in_progress ON runs (session_pk) WHERE status = 'in_progress';
CREATE INDEX runs_in_progress_by_owner ON runs (owner) WHERE status = 'in_progress';

CREATE TABLE app_state (
	app_id text PRIMARY KEY,
	state  jsonb NOT NULL
);
CREATE TABLE user_state (
	app_id  text NOT NULL,
	user_id text NOT NULL,
	state   jsonb NOT NULL,
	PRIMARY KEY (app_id, user_id)
);

CREATE TABLE checkpoints (
	session_pk    bigint NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	thread_id     text NOT NULL,
	namespace     text NOT NULL,
	checkpoint_id text NOT NULL,
	parent_id     text NOT NULL DEFAULT '',
	data          bytea NOT NULL,
	PRIMARY KEY (session_pk, thread_id, namespace)
);
CREATE TABLE checkpoint_writes (
	session_pk    bigint NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	thread_id     text NOT NULL,
	namespace     text NOT NULL,
	checkpoint_id text NOT NULL,
	task_id       text NOT NULL,
	idx           bigint NOT NULL,
	channel       text NOT NULL,
	task_path     text NOT NULL DEFAULT '',
	data          bytea NOT NULL,
	PRIMARY KEY (session_pk, thread_id, namespace, checkpoint_id, task_id, idx)
);

-- One row per live replica; heartbeat_at is renewed while it runs (its lease).
CREATE TABLE replicas (
	id           text PRIMARY KEY,
	started_at   timestamptz NOT NULL DEFAULT now(),
	heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- Relay messages too large for a NOTIFY payload: the notification carries the id.
CREATE TABLE relay_spill (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	payload    bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
`,
	// 2: the session list's index is keyed by ARRAY[app_id, user_id], which a lookup of
	// one session (app_id, user_id, id) cannot use. Keyed by (app_id, user_id) it tied
	// with the unique key's index while the table had no statistics yet (before the
	// first ANALYZE) and the planner could pick it, scanning every session of the user
	// per lookup: a turn cost O(sessions of the user).
	`
DROP INDEX sessions_by_update;
CREATE INDEX sessions_by_user_update ON sessions ((ARRAY[app_id, user_id]), updated_at DESC, pk DESC);
`,
	// 3: the frameworks' versioned documents (ADK artifacts, eval sets and results),
	// scoped to an app, a user or a session (session_id '' and user_id '' for the wider
	// scopes); a session's go with it.
	`
CREATE TABLE docs (
	app_id     text NOT NULL,
	user_id    text NOT NULL,
	session_id text NOT NULL,
	kind       text NOT NULL,
	name       text NOT NULL,
	version    bigint NOT NULL,
	mime_type  text NOT NULL DEFAULT '',
	data       bytea NOT NULL,
	meta       text,
	created_at bigint NOT NULL,
	PRIMARY KEY (app_id, user_id, session_id, kind, name, version)
);
CREATE FUNCTION docs_of_deleted_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM docs WHERE app_id = OLD.app_id AND user_id = OLD.user_id AND session_id = OLD.id;
	RETURN OLD;
END
$$;
CREATE TRIGGER docs_of_deleted_session AFTER DELETE ON sessions
	FOR EACH ROW EXECUTE FUNCTION docs_of_deleted_session();
`,
}

// migrationLock is the advisory lock key that serializes migrations of replicas
// starting at once ("agentengine" in ASCII, truncated).
const migrationLock int64 = 0x6167656e74656e67

// Migrate brings the schema (the connection's search_path) to SchemaVersion and returns
// the version it found. Concurrent callers wait for each other.
func Migrate(ctx context.Context, conn *pgx.Conn) (from int, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return 0, fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`); err != nil {
		return 0, fmt.Errorf("migrate: version table: %w", err)
	}
	err = tx.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&from)
	switch {
	case err == pgx.ErrNoRows:
		if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return 0, fmt.Errorf("migrate: init version: %w", err)
		}
	case err != nil:
		return 0, fmt.Errorf("migrate: read version: %w", err)
	}
	if from > len(migrations) {
		return from, fmt.Errorf("session database schema version %d is newer than this build supports (%d); upgrade agentengine", from, len(migrations))
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return from, fmt.Errorf("migrate to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE schema_version SET version = $1`, len(migrations)); err != nil {
		return from, fmt.Errorf("migrate: set version: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return from, fmt.Errorf("migrate: commit: %w", err)
	}
	return from, nil
}

// MigrateDSN connects to dsn and migrates its schema; it returns the version found and
// the version now in place.
func MigrateDSN(ctx context.Context, dsn string, opts ...Option) (from, to int, err error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	pc, err := poolConfig(dsn, cfg)
	if err != nil {
		return 0, 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, pc.ConnConfig)
	if err != nil {
		return 0, 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	from, err = Migrate(ctx, conn)
	if err != nil {
		return from, from, err
	}
	return from, SchemaVersion, nil
}
