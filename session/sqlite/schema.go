package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the schema version this build writes: the number of migrations.
const SchemaVersion = 5

// migrations are forward-only: migration i moves a database from version i to i+1.
// Never edit a released entry; append a new one.
func migrations() []string {
	return []string{
		// 1: initial schema. Sessions get an integer surrogate key so that the opaque
		// (app, user, id) strings are only ever compared as separate columns.
		`
CREATE TABLE sessions (
	pk                   INTEGER PRIMARY KEY,
	app_id               TEXT NOT NULL,
	user_id              TEXT NOT NULL,
	id                   TEXT NOT NULL,
	title                TEXT NOT NULL DEFAULT '',
	renamed              INTEGER NOT NULL DEFAULT 0,
	first_prompt         TEXT NOT NULL DEFAULT '',
	last_prompt          TEXT NOT NULL DEFAULT '',
	last_seq             INTEGER NOT NULL DEFAULT 0,
	checkpoint_seq       INTEGER NOT NULL DEFAULT 0,
	active_invocation_id TEXT NOT NULL DEFAULT '',
	active_run_status    TEXT NOT NULL DEFAULT '',
	state                TEXT NOT NULL DEFAULT '{}',
	created_at           INTEGER NOT NULL,
	updated_at           INTEGER NOT NULL,
	UNIQUE (app_id, user_id, id)
);
CREATE INDEX sessions_by_update ON sessions (app_id, user_id, updated_at DESC, pk DESC);

CREATE TABLE events (
	id            INTEGER PRIMARY KEY,
	session_pk    INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,
	invocation_id TEXT NOT NULL DEFAULT '',
	item_id       TEXT,
	type          TEXT NOT NULL,
	author        TEXT NOT NULL DEFAULT '',
	data          TEXT NOT NULL,
	state_delta   TEXT,
	time          INTEGER NOT NULL,
	UNIQUE (session_pk, seq)
);
CREATE INDEX events_by_item ON events (item_id) WHERE item_id IS NOT NULL;
CREATE INDEX events_by_invocation ON events (session_pk, invocation_id, seq);

CREATE TABLE runs (
	pk            INTEGER PRIMARY KEY,
	session_pk    INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	invocation_id TEXT NOT NULL,
	response_id   TEXT UNIQUE,
	app_id        TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	session_id    TEXT NOT NULL,
	status        TEXT NOT NULL,
	deleted       INTEGER NOT NULL DEFAULT 0,
	meta          TEXT,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	UNIQUE (session_pk, invocation_id)
);
-- At most one in-progress run per session, enforced by the database itself.
CREATE UNIQUE INDEX runs_in_progress ON runs (session_pk) WHERE status = 'in_progress';

CREATE TABLE app_state (
	app_id TEXT PRIMARY KEY,
	state  TEXT NOT NULL
);
CREATE TABLE user_state (
	app_id  TEXT NOT NULL,
	user_id TEXT NOT NULL,
	state   TEXT NOT NULL,
	PRIMARY KEY (app_id, user_id)
);
`,
		// 2: runner checkpoints (LangGraph thread states the host keeps for its runners):
		// the latest of each thread and namespace of a session, and its pending writes.
		`
CREATE TABLE checkpoints (
	session_pk    INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	thread_id     TEXT NOT NULL,
	namespace     TEXT NOT NULL,
	checkpoint_id TEXT NOT NULL,
	parent_id     TEXT NOT NULL DEFAULT '',
	data          BLOB NOT NULL,
	PRIMARY KEY (session_pk, thread_id, namespace)
) WITHOUT ROWID;

CREATE TABLE checkpoint_writes (
	session_pk    INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	thread_id     TEXT NOT NULL,
	namespace     TEXT NOT NULL,
	checkpoint_id TEXT NOT NULL,
	task_id       TEXT NOT NULL,
	idx           INTEGER NOT NULL,
	channel       TEXT NOT NULL,
	task_path     TEXT NOT NULL DEFAULT '',
	data          BLOB NOT NULL,
	PRIMARY KEY (session_pk, thread_id, namespace, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
`,
		// 3: KsADK's tables, if the file has them, are imported first (ksadk.go), then dropped.
		ksadkDropSQL,
		// 4: events keyed by (session, seq) WITHOUT ROWID, so an append writes one b-tree
		// instead of the table plus its unique index; the by-invocation index goes (a
		// run's events are read within one session's key range).
		`
CREATE TABLE events_v4 (
	session_pk    INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,
	invocation_id TEXT NOT NULL DEFAULT '',
	item_id       TEXT,
	type          TEXT NOT NULL,
	author        TEXT NOT NULL DEFAULT '',
	data          TEXT NOT NULL,
	state_delta   TEXT,
	time          INTEGER NOT NULL,
	PRIMARY KEY (session_pk, seq)
) WITHOUT ROWID;
INSERT INTO events_v4 (session_pk, seq, invocation_id, item_id, type, author, data, state_delta, time)
	SELECT session_pk, seq, invocation_id, item_id, type, author, data, state_delta, time FROM events ORDER BY session_pk, seq;
DROP TABLE events;
ALTER TABLE events_v4 RENAME TO events;
CREATE INDEX events_by_item ON events (item_id) WHERE item_id IS NOT NULL;
`,
		// 5: the frameworks' versioned documents (ADK artifacts, eval sets and results),
		// scoped to an app, a user or a session (session_id '' and user_id '' for the wider
		// scopes); a session's go with it.
		`
CREATE TABLE docs (
	app_id     TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	session_id TEXT NOT NULL,
	kind       TEXT NOT NULL,
	name       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	mime_type  TEXT NOT NULL DEFAULT '',
	data       BLOB NOT NULL,
	meta       TEXT,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (app_id, user_id, session_id, kind, name, version)
) WITHOUT ROWID;
CREATE TRIGGER docs_of_deleted_session AFTER DELETE ON sessions BEGIN
	DELETE FROM docs WHERE app_id = OLD.app_id AND user_id = OLD.user_id AND session_id = OLD.id;
END;
`,
	}
}

// migrate brings the database to SchemaVersion in one write transaction, so concurrent
// openers of a new file cannot both run a migration.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer rollback(tx)
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: version table: %w", err)
	}
	var version int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case err == sql.ErrNoRows:
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fmt.Errorf("migrate: init version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("migrate: read version: %w", err)
	}
	all := migrations()
	if version > len(all) {
		return fmt.Errorf("session database schema version %d is newer than this build supports (%d); upgrade agentengine", version, len(all))
	}
	for v := version; v < len(all); v++ {
		if pre := preMigration(v + 1); pre != nil {
			if err := pre(ctx, tx); err != nil {
				return fmt.Errorf("migrate to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, all[v]); err != nil {
			return fmt.Errorf("migrate to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(all)); err != nil {
		return fmt.Errorf("migrate: set version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
