package sqlite

// KsADK, the Python runtime agentengine replaces, keeps its local sessions in the same
// file (.agentengine/ui/sessions.sqlite) in its own tables: ksadk_sessions, ksadk_events
// and ksadk_states. Migration ksadkImportVersion moves its sessions and their
// transcripts into agentengine's tables and drops KsADK's, inside the migration's one
// transaction: the file is either all KsADK (untouched) or all agentengine. Before that,
// Open copies the file aside (ksadkBackupSuffix) so KsADK's raw rows are never lost.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strings"

	"github.com/agentengine/agentengine/session"
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

type ksadkSession struct {
	id, agent, user, title, titleSource, firstPrompt, lastPrompt string
	state                                                        string
	created, updated                                             float64
}

type ksadkEvent struct {
	author, typ, content, stateDelta, invocation, metadata string
	seq                                                    int64
	ts                                                     float64
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
	var sessions []ksadkSession
	for rows.Next() {
		var s ksadkSession
		var agent, user, title, src, first, last, state sql.NullString
		var created, updated sql.NullFloat64
		if err := rows.Scan(&s.id, &agent, &user, &title, &src, &first, &last, &state, &created, &updated); err != nil {
			rows.Close()
			return fail("read ksadk_sessions: %v", err)
		}
		s.agent, s.user, s.title, s.titleSource = agent.String, user.String, title.String, src.String
		s.firstPrompt, s.lastPrompt, s.state = first.String, last.String, state.String
		s.created, s.updated = created.Float64, updated.Float64
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
			return fail("session %q: %v", s.id, err)
		}
	}
	return nil
}

func importKsADKSession(ctx context.Context, tx *sql.Tx, s ksadkSession, ecols map[string]bool) error {
	user := s.user
	if user == "" {
		user = "user" // KsADK's and agentengine's default user
	}
	var exists int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?`, s.agent, user, s.id).Scan(&exists)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var evs []ksadkEvent
	if ecols != nil {
		//nolint:gosec // G202: the column names come from the fixed lists here (selectCols)
		rows, err := tx.QueryContext(ctx, `SELECT `+selectCols(ecols, []string{"author", "event_type", "content_json",
			"state_delta_json", "invocation_id", "metadata_json", "seq_id", "timestamp"})+`
			FROM ksadk_events WHERE session_id = ? ORDER BY `+eventOrder(ecols), s.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e ksadkEvent
			var author, typ, content, delta, inv, meta sql.NullString
			var seq sql.NullInt64
			var ts sql.NullFloat64
			if err := rows.Scan(&author, &typ, &content, &delta, &inv, &meta, &seq, &ts); err != nil {
				rows.Close()
				return err
			}
			e.author, e.typ, e.content, e.stateDelta, e.invocation, e.metadata = author.String, typ.String, content.String, delta.String, inv.String, meta.String
			e.seq, e.ts = seq.Int64, ts.Float64
			evs = append(evs, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}

	conv := convertKsADKEvents(evs, s.created)
	state := ksadkState(s.state)
	renamed := 0
	if s.titleSource == "user" || s.titleSource == "manual" || s.titleSource == "rename" {
		renamed = 1
	}
	created, updated := ksadkTime(s.created), ksadkTime(s.updated)
	if updated < created {
		updated = created
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sessions (app_id, user_id, id, title, renamed, first_prompt, last_prompt,
		last_seq, checkpoint_seq, active_invocation_id, active_run_status, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.agent, user, s.id, s.title, renamed, s.firstPrompt, s.lastPrompt, int64(len(conv.events)), conv.checkpointSeq,
		conv.lastInvocation, conv.runStatus[conv.lastInvocation], state, created, updated)
	if err != nil {
		return err
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, e := range conv.events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (session_pk, seq, invocation_id, type, author, data, time)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, pk, i+1, e.invocation, e.typ, e.author, string(e.data), e.time); err != nil {
			return err
		}
	}
	for _, inv := range conv.invocations {
		t := conv.runTimes[inv]
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (session_pk, invocation_id, app_id, user_id, session_id, status,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			pk, inv, s.agent, user, s.id, conv.runStatus[inv], t[0], t[1]); err != nil {
			return err
		}
	}
	return nil
}

// ksadkState is KsADK's session state without its own bookkeeping (active_run) and
// without keys agentengine never persists.
func ksadkState(js string) string {
	var m map[string]any
	if json.Unmarshal([]byte(js), &m) != nil || m == nil {
		return "{}"
	}
	delete(m, "active_run")
	for k := range m {
		if strings.HasPrefix(k, session.TierTempPrefix) {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func ksadkTime(sec float64) int64 {
	if sec <= 0 || math.IsNaN(sec) || math.IsInf(sec, 0) {
		return 0
	}
	return int64(sec * 1e9)
}

type convertedEvent struct {
	invocation, typ, author string
	data                    json.RawMessage
	time                    int64
}

type converted struct {
	events         []convertedEvent
	checkpointSeq  int64
	invocations    []string            // in first-seen order
	runStatus      map[string]string   // invocation -> agentengine terminal status
	runTimes       map[string][2]int64 // invocation -> first, last event time
	lastInvocation string
}

// convertKsADKEvents keeps the transcript (user and assistant messages, reasoning,
// tools, run status, compaction) in agentengine's event shapes and drops KsADK's
// streaming detail (snapshots, per-delta runtime events), which the backup keeps.
func convertKsADKEvents(evs []ksadkEvent, sessionCreated float64) converted {
	c := converted{runStatus: map[string]string{}, runTimes: map[string][2]int64{}}
	seqMap := make([]struct{ old, new int64 }, 0, len(evs))
	lastTime := ksadkTime(sessionCreated)
	add := func(e ksadkEvent, typ string, data any) {
		t := ksadkTime(e.ts)
		if t < lastTime {
			t = lastTime // seq order is the truth; times only need to agree with it
		}
		lastTime = t
		c.events = append(c.events, convertedEvent{invocation: e.invocation, typ: typ, author: e.author, data: session.MustJSON(data), time: t})
		seqMap = append(seqMap, struct{ old, new int64 }{e.seq, int64(len(c.events))})
		if e.invocation != "" {
			rt, seen := c.runTimes[e.invocation]
			if !seen {
				c.invocations = append(c.invocations, e.invocation)
				rt[0] = t
			}
			rt[1] = t
			c.runTimes[e.invocation] = rt
			c.lastInvocation = e.invocation
		}
	}
	newSeq := func(old int64) int64 {
		var n int64
		for _, m := range seqMap {
			if m.old <= old {
				n = m.new
			}
		}
		return n
	}
	toolNames := map[string]string{} // call id -> tool name, for results
	for _, e := range evs {
		content := jsonObject(e.content)
		meta := jsonObject(e.metadata)
		switch e.typ {
		case session.TypeUserMessage:
			text := partsText(content["parts"])
			if text == "" {
				text = str(meta["agent_input"])
			}
			d := session.UserMessageData{Text: text, Instructions: str(meta["instructions"])}
			if text != "" {
				d.Content = []session.ContentBlock{{Type: "input_text", Text: text}}
			}
			add(e, session.TypeUserMessage, d)
		case session.TypeAssistantMessage:
			add(e, session.TypeAssistantMessage, session.AssistantMessageData{Text: partsText(content["parts"])})
		case "item.completed":
			// KsADK 0.8 writes the final text of a turn only as runtime events.
			re := jsonObject(content["runtime_event"])
			text := partsText(jsonObject(re["snapshot"])["parts"])
			switch str(re["item_kind"]) {
			case "message":
				if text != "" {
					add(e, session.TypeAssistantMessage, session.AssistantMessageData{Text: text})
				}
			case "reasoning":
				if text != "" {
					add(e, session.TypeReasoning, session.ReasoningData{Text: text})
				}
			case "tool_call", "tool_result":
				for _, p := range partsOf(jsonObject(re["snapshot"])["parts"]) {
					switch str(p["content_type"]) {
					case "tool_call":
						args, err := json.Marshal(p["arguments"])
						if err != nil || p["arguments"] == nil {
							args = []byte("{}")
						}
						if s, ok := p["arguments"].(string); ok {
							args = []byte(s)
						}
						callID, name := str(p["call_id"]), str(p["name"])
						toolNames[callID] = name
						add(e, session.TypeToolCall, session.ToolCallData{CallID: callID, Name: name, Arguments: string(args)})
					case "tool_result":
						callID := str(p["call_id"])
						isErr, _ := p["is_error"].(bool)
						add(e, session.TypeToolResult, session.ToolResultData{CallID: callID, Name: toolNames[callID], Output: str(p["result"]), IsError: isErr})
					}
				}
			}
		case session.TypeReasoning:
			text := str(meta["reasoning"])
			if text == "" {
				text = partsText(content["parts"])
			}
			add(e, session.TypeReasoning, session.ReasoningData{Text: text})
		case session.TypeToolCall:
			args, err := json.Marshal(meta["tool_args"])
			if err != nil || meta["tool_args"] == nil {
				args = []byte("{}")
			}
			name := str(meta["tool_name"])
			if name == "" {
				name = partsText(content["parts"])
			}
			toolNames[ksadkCallID(meta)] = name
			add(e, session.TypeToolCall, session.ToolCallData{CallID: ksadkCallID(meta), Name: name, Arguments: string(args)})
		case session.TypeToolResult:
			out := partsText(content["parts"])
			if out == "" && meta["tool_output"] != nil {
				out = str(meta["tool_output"])
			}
			add(e, session.TypeToolResult, session.ToolResultData{CallID: ksadkCallID(meta), Name: str(meta["tool_name"]), Output: out})
		case session.TypeRunStatus:
			status := ksadkStatus(str(content["status"]))
			if status == "" {
				continue // checkpointed and other non-run states
			}
			d := session.RunStatusData{Status: status}
			if status == session.StatusFailed {
				msg := str(content["detail"])
				if msg == "" {
					msg = "the run failed"
				}
				d.Error = &session.RunError{Code: "server_error", Message: msg}
			}
			add(e, session.TypeRunStatus, d)
			if e.invocation != "" {
				c.runStatus[e.invocation] = status
			}
		case session.TypeContextCheckpoint:
			until := newSeq(int64(num(meta["compacted_until_seq_id"])))
			add(e, session.TypeContextCheckpoint, session.ContextCheckpointData{Summary: partsText(content["parts"]), FromSeq: 1, UntilSeq: until})
			c.checkpointSeq = int64(len(c.events))
		case session.TypeCompactionBound:
			add(e, session.TypeCompactionBound, session.CompactionBoundaryData{CompactedUntilSeq: newSeq(int64(num(content["compacted_until_seq_id"])))})
		}
	}
	// A run KsADK left unfinished cannot continue here: it ends interrupted, as runs
	// orphaned by a restart do.
	for _, inv := range c.invocations {
		st := c.runStatus[inv]
		if session.IsTerminalStatus(st) {
			continue
		}
		last := ksadkEvent{invocation: inv, author: "agentengine"}
		add(last, session.TypeRunStatus, session.RunStatusData{Status: session.StatusInterrupted})
		c.runStatus[inv] = session.StatusInterrupted
	}
	return c
}

// ksadkStatus maps KsADK's run_status values to agentengine's; "" for states that are
// not a run's status.
func ksadkStatus(s string) string {
	switch s {
	case "in_progress", "running", "resuming", "starting":
		return session.StatusInProgress
	case "completed":
		return session.StatusCompleted
	case "failed", "error", "resume_failed":
		return session.StatusFailed
	case "cancelled", "canceled", "aborted":
		return session.StatusCancelled
	case "interrupted":
		return session.StatusInterrupted
	}
	return ""
}

func ksadkCallID(meta map[string]any) string {
	for _, k := range []string{"tool_call_id", "call_id", "run_id"} {
		if s := str(meta[k]); s != "" {
			return s
		}
	}
	return ""
}

func jsonObject(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return t
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(t), &m) == nil {
			return m
		}
	}
	return nil
}

func partsOf(v any) []map[string]any {
	parts, _ := v.([]any)
	out := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// partsText joins the text of content parts ({text} or {type:"...text", text}).
func partsText(v any) string {
	parts, _ := v.([]any)
	var texts []string
	for _, p := range parts {
		m, _ := p.(map[string]any)
		if t, ok := m["text"].(string); ok && t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "")
}

func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return ""
		}
		return string(b)
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
