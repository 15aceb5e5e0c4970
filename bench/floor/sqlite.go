package floor

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	_ "github.com/mattn/go-sqlite3" // the same driver as session/sqlite
)

// SQLite is the floor's event table: one writer connection in WAL mode with
// synchronous=NORMAL and BEGIN IMMEDIATE, like the local session store.
type SQLite struct {
	db  *sql.DB
	ins *sql.Stmt
}

// OpenSQLite creates (or opens) the floor database at path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"NORMAL"}, "_busy_timeout": {"5000"}, "_txlock": {"immediate"}}
	db, err := sql.Open("sqlite3", u.String()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS events (
		id INTEGER PRIMARY KEY,
		session_id TEXT NOT NULL,
		seq INTEGER NOT NULL,
		type TEXT NOT NULL,
		data TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		UNIQUE (session_id, seq))`); err != nil {
		db.Close()
		return nil, fmt.Errorf("floor database %s: %w", abs, err)
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO events (session_id, seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("floor database %s: %w", abs, err)
	}
	return &SQLite{db: db, ins: ins}, nil
}

// Write5 stores one turn as five rows in one transaction: the user message, the
// in-progress status, the reasoning, the assistant message and the terminal status.
func (s *SQLite) Write5(ctx context.Context, session, input, text string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	st := tx.StmtContext(ctx, s.ins)
	now := time.Now().UnixMicro()
	rows := turnRows(input, text)
	for i, r := range rows {
		if _, err := st.ExecContext(ctx, session, i+1, r[0], r[1], now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// turnRows are the (type, data) of the five events a floor turn stores, as an echo-go
// turn does: the user message, the in-progress status, the reasoning, the assistant
// message and the terminal status.
func turnRows(input, text string) [5][2]string {
	return [5][2]string{
		{"user_message", string(appendJSONString([]byte(`{"text":`), input)) + "}"},
		{"run_status", `{"status":"in_progress"}`},
		{"reasoning", string(appendJSONString([]byte(`{"text":`), "Thinking about: "+input)) + "}"},
		{"assistant_message", string(appendJSONString([]byte(`{"text":`), text)) + "}"},
		{"run_status", `{"status":"completed"}`},
	}
}

// Close closes the database.
func (s *SQLite) Close() error {
	s.ins.Close()
	return s.db.Close()
}
