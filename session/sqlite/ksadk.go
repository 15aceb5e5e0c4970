package sqlite

// KsADK, the Python runtime agentengine replaces, keeps its local sessions in the same
// file (.agentengine/ui/sessions.sqlite) in its own tables: ksadk_sessions, ksadk_events
// and ksadk_states. Migration ksadkImportVersion moves its sessions and their
// transcripts into agentengine's tables and drops KsADK's, inside the migration's one
// transaction: the file is either all KsADK (untouched) or all agentengine. Before that,
// Open copies the file aside (ksadkBackupSuffix) so KsADK's raw rows are never lost.
// This file reads KsADK's rows and writes agentengine's; ksadkimport converts between them.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/agentengine/agentengine/session/ksadkimport"
)

// ksadkImportVersion is the schema version whose migration imports KsADK's tables.
const ksadkImportVersion = 3

// ksadkBackupSuffix names the copy of a KsADK session file made before importing it.
const ksadkBackupSuffix = ".ksadk-backup"

// ksadkDropSQL is migration ksadkImportVersion's SQL; preMigration copies the rows first.
const ksadkDropSQL = `
DROP TABLE IF EXISTS ksadk_states;
DROP TABLE IF EXISTS ksadk_events;
DROP TABLE IF EXISTS ksadk_sessions;
`

// preMigration returns the Go step that runs, in the migration transaction, before the
// SQL of the migration to version to (nil if there is none).
func preMigration(to int) func(context.Context, *sql.Tx) error {
	if to == ksadkImportVersion {
		return importKsADK
	}
	return nil
}

// unreadableHint is the way out offered when a session file cannot be used.
func unreadableHint(abs string) string {
	return fmt.Sprintf("agentengine did not change it. Move it aside (mv %q %q) to start with an empty session store, or choose another file with --session-path or KSADK_STM_PATH", abs, abs+".unreadable")
}

// prepareFile runs before the file is opened for writing: it checks that an existing
// file is a database agentengine can read, and copies a KsADK file that is about to be
// imported to abs+ksadkBackupSuffix (kept if it already exists: it then holds the file
// as first found, since a failed import changes nothing).
func prepareFile(ctx context.Context, abs string) error {
	if fi, err := os.Stat(abs); err != nil || fi.Size() == 0 {
		return nil // a new file: nothing to check
	}
	// No journal_mode parameter: the file stays in whatever mode its writer chose.
	db, err := sql.Open("sqlite3", dsn(abs, url.Values{"_busy_timeout": {"5000"}}))
	if err != nil {
		return fmt.Errorf("session database %s: %w", abs, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("session database %s cannot be opened (%v); %s", abs, err, unreadableHint(abs))
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("session database %s cannot be read (%v); %s", abs, err, unreadableHint(abs))
	}
	defer rollback(tx)
	// Reading the schema takes a shared lock that keeps writers out until the copy is
	// done (and rolls back a hot journal left by a crashed writer first).
	tables, err := tableNames(ctx, tx)
	if err != nil {
		return fmt.Errorf("session database %s cannot be read: %v; %s", abs, err, unreadableHint(abs))
	}
	if !tables["ksadk_sessions"] {
		return nil
	}
	if tables["schema_version"] {
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err == nil && v >= ksadkImportVersion {
			return nil // imported before; KsADK has written the file again since (see MIGRATING)
		}
	}
	backup := abs + ksadkBackupSuffix
	if _, err := os.Stat(backup); err == nil {
		return nil
	}
	var mode string
	if err := tx.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("session database %s cannot be read: %v; %s", abs, err, unreadableHint(abs))
	}
	if strings.EqualFold(mode, "wal") {
		// The file alone may lack committed pages still in its WAL: let SQLite write a
		// consistent copy instead.
		rollback(tx)
		if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, backup); err != nil {
			return fmt.Errorf("copy KsADK session database %s to %s before importing it: %w", abs, backup, err)
		}
		return nil
	}
	if err := copyFile(abs, backup); err != nil {
		return fmt.Errorf("copy KsADK session database %s to %s before importing it: %w", abs, backup, err)
	}
	return nil
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func tableNames(ctx context.Context, q queryer) (map[string]bool, error) {
	return nameSet(ctx, q, `SELECT name FROM sqlite_master WHERE type = 'table'`)
}

func columnNames(ctx context.Context, q queryer, table string) (map[string]bool, error) {
	return nameSet(ctx, q, `SELECT name FROM pragma_table_info(?)`, table)
}

// nameSet is the set of names a one-column query returns.
func nameSet(ctx context.Context, q queryer, query string, args ...any) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

// selectCols selects the wanted columns, NULL for those an older KsADK did not have
// (it added columns over time with ALTER TABLE).
func selectCols(have map[string]bool, want []string) string {
	parts := make([]string, len(want))
	for i, c := range want {
		if have[c] {
			parts[i] = c
		} else {
			parts[i] = "NULL"
		}
	}
	return strings.Join(parts, ", ")
}

// eventOrder orders a session's events by the columns the file has: seq_id (not unique
// in KsADK's schema), then time, then insertion.
func eventOrder(have map[string]bool) string {
	var by []string
	for _, c := range []string{"seq_id", "timestamp"} {
		if have[c] {
			by = append(by, c)
		}
	}
	return strings.Join(append(by, "rowid"), ", ")
}

// importKsADK copies KsADK's sessions into agentengine's tables. It is a no-op on a file
// without KsADK's tables. A session whose (agent, user, id) agentengine already has is
// left out: agentengine's conversation wins, KsADK's stays in the backup.
func importKsADK(ctx context.Context, tx *sql.Tx) error {
	tables, err := tableNames(ctx, tx)
	if err != nil {
		return fmt.Errorf("import KsADK sessions: %w", err)
	}
	if !tables["ksadk_sessions"] {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("import KsADK sessions: "+format+"; the file is unchanged (move it aside to start with an empty session store; KsADK's copy is kept beside it as sessions.sqlite"+ksadkBackupSuffix+")", args...)
	}
	scols, err := columnNames(ctx, tx, "ksadk_sessions")
	if err != nil {
		return fail("%v", err)
	}
	if !scols["id"] {
		return fail("table ksadk_sessions has no id column")
	}
	//nolint:gosec // G202: the column names come from the fixed lists here (selectCols), never from the file
	rows, err := tx.QueryContext(ctx, `SELECT `+selectCols(scols, []string{"id", "agent_id", "user_id", "title", "title_source",
		"first_prompt", "last_prompt", "state_json", "created_at", "updated_at"})+` FROM ksadk_sessions ORDER BY rowid`)
	if err != nil {
		return fail("%v", err)
	}
	var sessions []ksadkimport.Session
	for rows.Next() {
		var s ksadkimport.Session
		var agent, user, title, src, first, last, state sql.NullString
		var created, updated sql.NullFloat64
		if err := rows.Scan(&s.ID, &agent, &user, &title, &src, &first, &last, &state, &created, &updated); err != nil {
			rows.Close()
			return fail("read ksadk_sessions: %v", err)
		}
		s.Agent, s.User, s.Title, s.TitleSource = agent.String, user.String, title.String, src.String
		s.FirstPrompt, s.LastPrompt, s.State = first.String, last.String, state.String
		s.Created, s.Updated = created.Float64, updated.Float64
		sessions = append(sessions, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail("read ksadk_sessions: %v", err)
	}

	var ecols map[string]bool
	if tables["ksadk_events"] {
		if ecols, err = columnNames(ctx, tx, "ksadk_events"); err != nil {
			return fail("%v", err)
		}
		if !ecols["session_id"] || !ecols["event_type"] {
			return fail("table ksadk_events lacks session_id or event_type")
		}
	}
	for _, s := range sessions {
		if err := importKsADKSession(ctx, tx, s, ecols); err != nil {
			return fail("session %q: %v", s.ID, err)
		}
	}
	return nil
}

func importKsADKSession(ctx context.Context, tx *sql.Tx, s ksadkimport.Session, ecols map[string]bool) error {
	user := s.User
	if user == "" {
		user = ksadkimport.DefaultUser
	}
	var exists int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?`, s.Agent, user, s.ID).Scan(&exists)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var evs []ksadkimport.SourceEvent
	if ecols != nil {
		//nolint:gosec // G202: the column names come from the fixed lists here (selectCols)
		rows, err := tx.QueryContext(ctx, `SELECT `+selectCols(ecols, []string{"author", "event_type", "content_json",
			"invocation_id", "metadata_json", "seq_id", "timestamp"})+`
			FROM ksadk_events WHERE session_id = ? ORDER BY `+eventOrder(ecols), s.ID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e ksadkimport.SourceEvent
			var author, typ, content, inv, meta sql.NullString
			var seq sql.NullInt64
			var ts sql.NullFloat64
			if err := rows.Scan(&author, &typ, &content, &inv, &meta, &seq, &ts); err != nil {
				rows.Close()
				return err
			}
			e.Author, e.Type, e.Content, e.Invocation, e.Metadata = author.String, typ.String, content.String, inv.String, meta.String
			e.Seq, e.Time = seq.Int64, ts.Float64
			evs = append(evs, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}

	conv := ksadkimport.Convert(evs, s.Created)
	state := ksadkimport.State(s.State)
	renamed := 0
	if ksadkimport.Renamed(s.TitleSource) {
		renamed = 1
	}
	created, updated := ksadkimport.Time(s.Created), ksadkimport.Time(s.Updated)
	if updated < created {
		updated = created
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sessions (app_id, user_id, id, title, renamed, first_prompt, last_prompt,
		last_seq, checkpoint_seq, active_invocation_id, active_run_status, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.Agent, user, s.ID, s.Title, renamed, s.FirstPrompt, s.LastPrompt, int64(len(conv.Events)), conv.CheckpointSeq,
		conv.LastInvocation, conv.RunStatus[conv.LastInvocation], state, created, updated)
	if err != nil {
		return err
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, e := range conv.Events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (session_pk, seq, invocation_id, type, author, data, time)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, pk, i+1, e.Invocation, e.Type, e.Author, string(e.Data), e.Time); err != nil {
			return err
		}
	}
	for _, inv := range conv.Invocations {
		t := conv.RunTimes[inv]
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (session_pk, invocation_id, app_id, user_id, session_id, status,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			pk, inv, s.Agent, user, s.ID, conv.RunStatus[inv], t[0], t[1]); err != nil {
			return err
		}
	}
	return nil
}
