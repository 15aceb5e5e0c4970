package sqlite_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/sqlite"
)

// ksadkFixture is a session file written by KsADK 0.8.5 itself (three /v1/responses
// turns of one conversation, the third running a tool; scripts/record-ksadk-fixtures.sh
// re-records it).
const ksadkFixture = "testdata/ksadk-0.8.5/sessions.sqlite"

var ksadkKey = session.Key{App: "ksadk-echo", User: "user", ID: "conv-fixture-1"}

func copyFixture(t *testing.T) (path string, original []byte) {
	t.Helper()
	data, err := os.ReadFile(ksadkFixture)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), ".agentengine", "ui", "sessions.sqlite")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func tables(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func TestKsADKFileIsImported(t *testing.T) {
	ctx := t.Context()
	path, original := copyFixture(t)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	backup, err := os.ReadFile(path + ".ksadk-backup")
	if err != nil || !bytes.Equal(backup, original) {
		t.Fatalf("the backup is not the original file (%v)", err)
	}
	for _, name := range tables(t, path) {
		if strings.HasPrefix(name, "ksadk_") {
			t.Fatalf("KsADK table %s left beside agentengine's: %v", name, tables(t, path))
		}
	}

	sess, err := st.GetSession(ctx, ksadkKey)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Title != "hello there" || sess.FirstPrompt != "hello there" || sess.LastPrompt != "use the tool on paris" || sess.ActiveRunStatus != session.StatusCompleted {
		t.Fatalf("session row: %+v", sess)
	}
	evs, err := st.Events(ctx, ksadkKey, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		got = append(got, e.Type)
	}
	want := "user_message,run_status,assistant_message,run_status,user_message,run_status,assistant_message,run_status," +
		"user_message,run_status,tool_call,tool_result,assistant_message,run_status"
	if strings.Join(got, ",") != want {
		t.Fatalf("imported events %s, want %s", strings.Join(got, ","), want)
	}
	if sess.LastSeq != int64(len(evs)) {
		t.Fatalf("last_seq %d for %d events", sess.LastSeq, len(evs))
	}
	run, err := st.GetRun(ctx, ksadkKey, evs[0].InvocationID)
	if err != nil || run.Status != session.StatusCompleted {
		t.Fatalf("run of the first turn: %+v, %v", run, err)
	}

	hist, _, err := session.LoadHistory(ctx, st, ksadkKey)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range hist {
		lines = append(lines, m.Role+": "+m.Content)
	}
	wantHist := []string{
		"user: hello there", "assistant: Echo: hello there (history: 0 messages)",
		"user: second turn", "assistant: Echo: second turn (history: 2 messages)",
		"user: use the tool on paris", `assistant: [tool_call] lookup({"query":"paris"})`,
		"user: [tool_result] lookup: paris has 5 letters", "assistant: Echo: use the tool on paris (history: 5 messages)",
	}
	if strings.Join(lines, "\n") != strings.Join(wantHist, "\n") {
		t.Fatalf("history:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantHist, "\n"))
	}

	// The conversation continues by the same id.
	if _, err := st.StartRun(ctx, session.Run{Key: ksadkKey, InvocationID: "inv-3"}, msg("next turn")); err != nil {
		t.Fatal(err)
	}
	hist, _, err = session.LoadHistory(ctx, st, ksadkKey)
	if err != nil || len(hist) != 9 || hist[8].Content != "next turn" {
		t.Fatalf("history after a new turn: %+v, %v", hist, err)
	}

	// Reopening imports nothing twice.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, total, err := st2.ListSessions(ctx, ksadkKey.App, ksadkKey.User, session.ListQuery{}); err != nil || total != 1 {
		t.Fatalf("sessions after reopening: %d, %v", total, err)
	}
}

func TestKsADKImportIsAllOrNothing(t *testing.T) {
	ctx := t.Context()
	path, _ := copyFixture(t)
	// A file the import cannot read (KsADK's events without their type column) must be
	// left exactly in KsADK's schema: no agentengine table, no version row.
	db := rawDB(t, path)
	if _, err := db.Exec(`ALTER TABLE ksadk_events RENAME COLUMN event_type TO kind`); err != nil {
		t.Fatal(err)
	}
	before := tables(t, path)
	_, err := sqlite.Open(ctx, path)
	if err == nil {
		t.Fatal("opening a KsADK file with an unreadable events table succeeded")
	}
	for _, want := range []string{path, "ksadk_events", "unchanged", "move it aside"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
	if after := tables(t, path); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("tables changed by a failed import: %v -> %v", before, after)
	}
	if _, err := os.Stat(path + ".ksadk-backup"); err != nil {
		t.Fatalf("no backup: %v", err)
	}
}

func TestUnreadableSessionFileIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	garbage := bytes.Repeat([]byte("not a database "), 512)
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(t.Context(), path)
	if err == nil {
		t.Fatal("a non-database file opened")
	}
	for _, want := range []string{path, "mv ", "--session-path"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, garbage) {
		t.Fatal("the unreadable file was changed")
	}
}

// A file an older agentengine (schema version 1) had already added its tables to,
// beside KsADK's, gets KsADK's sessions too, without losing its own.
func TestKsADKImportIntoAFileAgentengineAlsoWrote(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	own := session.Key{App: "ksadk-echo", User: "user", ID: "own"}
	if _, err := st.CreateSession(ctx, own); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, own, msg("mine")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to version 1's tables, with KsADK's rows beside them.
	db := rawDB(t, path)
	v1 := map[string]bool{"sessions": true, "events": true, "runs": true, "app_state": true, "user_state": true, "schema_version": true}
	for _, name := range tables(t, path) {
		if !v1[name] {
			if _, err := db.Exec(`DROP TABLE "` + name + `"`); err != nil {
				t.Fatal(err)
			}
		}
	}
	fixture, err := filepath.Abs(ksadkFixture)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER docs_of_deleted_session`,
		`UPDATE schema_version SET version = 1`,
		`ATTACH DATABASE '` + fixture + `' AS k`,
		`CREATE TABLE ksadk_sessions AS SELECT * FROM k.ksadk_sessions`,
		`CREATE TABLE ksadk_events AS SELECT * FROM k.ksadk_events`,
		`DETACH DATABASE k`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close()
	db.Close()

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ss, total, err := st.ListSessions(ctx, own.App, own.User, session.ListQuery{})
	if err != nil || total != 2 {
		t.Fatalf("sessions: %+v (%d), %v", ss, total, err)
	}
	if hist, _, err := session.LoadHistory(ctx, st, ksadkKey); err != nil || len(hist) != 8 {
		t.Fatalf("imported history: %+v, %v", hist, err)
	}
	if hist, _, err := session.LoadHistory(ctx, st, own); err != nil || len(hist) != 1 || hist[0].Content != "mine" {
		t.Fatalf("own history: %+v, %v", hist, err)
	}
}

// Older KsADK versions wrote the final answer as assistant_message events, tools as
// tool_call/tool_result events, and added columns over time; runs they left unfinished
// cannot go on here and end interrupted.
func TestKsADKLegacyRowsAreImported(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name   string
		schema string
		insert []string
		want   string // event types
		status string // the session's last run status
		hist   []string
	}{
		{
			name: "0.7-style events with every column",
			schema: `CREATE TABLE ksadk_sessions (id TEXT PRIMARY KEY, agent_id TEXT, user_id TEXT, title TEXT, title_source TEXT,
				summary TEXT, first_prompt TEXT, last_prompt TEXT, state_json TEXT DEFAULT '{}', created_at REAL, updated_at REAL, version INTEGER);
				CREATE TABLE ksadk_events (id TEXT PRIMARY KEY, session_id TEXT, author TEXT, event_type TEXT, content_json TEXT,
				timestamp REAL, state_delta_json TEXT, seq_id INTEGER, invocation_id TEXT, metadata_json TEXT);`,
			insert: []string{
				`INSERT INTO ksadk_sessions VALUES ('s1', 'bot', 'alice', 'Renamed', 'user', '', 'weather?', 'more', '{"active_run":{"status":"in_progress"},"city":"Paris","temp:x":1}', 100.5, 200.5, 3)`,
				`INSERT INTO ksadk_events VALUES ('e1', 's1', 'user', 'user_message', '{"role":"user","parts":[{"text":"weather?"}]}', 101, '{}', 1, 'r1', '{"agent_input":"weather?"}')`,
				`INSERT INTO ksadk_events VALUES ('e2', 's1', 'bot', 'run_status', '{"status":"in_progress"}', 101.1, '{}', 2, 'r1', '{}')`,
				`INSERT INTO ksadk_events VALUES ('e3', 's1', 'bot', 'assistant_stream_snapshot', '{"role":"model","parts":[{"text":"Let me"}]}', 101.2, '{}', 3, 'r1', '{"stream_snapshot":true}')`,
				`INSERT INTO ksadk_events VALUES ('e4', 's1', 'bot', 'tool_call', '{"role":"model","parts":[{"text":"get_weather"}]}', 101.3, '{}', 4, 'r1', '{"tool_name":"get_weather","tool_args":{"city":"Paris"},"tool_call_id":"c1"}')`,
				`INSERT INTO ksadk_events VALUES ('e5', 's1', 'bot', 'tool_result', '{"role":"user","parts":[{"text":"sunny"}]}', 101.4, '{}', 5, 'r1', '{"tool_name":"get_weather","tool_call_id":"c1"}')`,
				`INSERT INTO ksadk_events VALUES ('e6', 's1', 'bot', 'assistant_message', '{"role":"model","parts":[{"text":"It is sunny."}]}', 101.5, '{}', 6, 'r1', '{"response_id":"resp_1"}')`,
				`INSERT INTO ksadk_events VALUES ('e7', 's1', 'bot', 'run_status', '{"status":"completed"}', 101.6, '{}', 7, 'r1', '{}')`,
				`INSERT INTO ksadk_events VALUES ('e8', 's1', 'user', 'user_message', '{"role":"user","parts":[{"text":"more"}]}', 102, '{}', 8, 'r2', '{}')`,
				`INSERT INTO ksadk_events VALUES ('e9', 's1', 'bot', 'run_status', '{"status":"running"}', 102.1, '{}', 9, 'r2', '{}')`,
			},
			want:   "user_message,run_status,tool_call,tool_result,assistant_message,run_status,user_message,run_status,run_status",
			status: session.StatusInterrupted,
			hist: []string{"user: weather?", `assistant: [tool_call] get_weather({"city":"Paris"})`, "user: [tool_result] get_weather: sunny",
				"assistant: It is sunny.", "user: more"},
		},
		{
			name: "oldest columns only, a failed run",
			schema: `CREATE TABLE ksadk_sessions (id TEXT PRIMARY KEY, agent_id TEXT, user_id TEXT, created_at REAL, updated_at REAL);
				CREATE TABLE ksadk_events (id TEXT PRIMARY KEY, session_id TEXT, author TEXT, event_type TEXT, content_json TEXT, timestamp REAL);`,
			insert: []string{
				`INSERT INTO ksadk_sessions VALUES ('s1', 'bot', 'alice', 10, 20)`,
				`INSERT INTO ksadk_events VALUES ('e1', 's1', 'user', 'user_message', '{"parts":[{"text":"hi"}]}', 11)`,
				`INSERT INTO ksadk_events VALUES ('e2', 's1', 'bot', 'run_status', '{"status":"error","detail":"boom"}', 12)`,
			},
			want: "user_message,run_status",
			hist: []string{"user: hi"},
		},
		{
			name: "a compacted conversation keeps its summary",
			schema: `CREATE TABLE ksadk_sessions (id TEXT PRIMARY KEY, agent_id TEXT, user_id TEXT, created_at REAL, updated_at REAL);
				CREATE TABLE ksadk_events (id TEXT PRIMARY KEY, session_id TEXT, author TEXT, event_type TEXT, content_json TEXT,
				timestamp REAL, seq_id INTEGER, metadata_json TEXT);`,
			insert: []string{
				`INSERT INTO ksadk_sessions VALUES ('s1', 'bot', 'alice', 10, 20)`,
				`INSERT INTO ksadk_events VALUES ('e1', 's1', 'user', 'user_message', '{"parts":[{"text":"a"}]}', 11, 1, '{}')`,
				`INSERT INTO ksadk_events VALUES ('e2', 's1', 'bot', 'assistant_stream_snapshot', '{"parts":[{"text":"A"}]}', 11.5, 2, '{}')`,
				`INSERT INTO ksadk_events VALUES ('e3', 's1', 'bot', 'assistant_message', '{"parts":[{"text":"A"}]}', 12, 3, '{}')`,
				`INSERT INTO ksadk_events VALUES ('e4', 's1', 'agent', 'compaction_boundary', '{"status":"compacted","compacted_until_seq_id":3}', 13, 4, '{}')`,
				`INSERT INTO ksadk_events VALUES ('e5', 's1', 'agent', 'context_checkpoint', '{"parts":[{"text":"they said a"}]}', 14, 5, '{"compacted_until_seq_id":3}')`,
				`INSERT INTO ksadk_events VALUES ('e6', 's1', 'user', 'user_message', '{"parts":[{"text":"b"}]}', 15, 6, '{}')`,
			},
			want: "user_message,assistant_message,compaction_boundary,context_checkpoint,user_message",
			hist: []string{"assistant: they said a", "user: b"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.sqlite")
			db := rawDB(t, path)
			for _, q := range append([]string{c.schema}, c.insert...) {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			db.Close()
			st, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			key := session.Key{App: "bot", User: "alice", ID: "s1"}
			sess, err := st.GetSession(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if sess.ActiveRunStatus != c.status {
				t.Fatalf("last run status %q, want %q", sess.ActiveRunStatus, c.status)
			}
			evs, err := st.Events(ctx, key, session.EventQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, e := range evs {
				types = append(types, e.Type)
			}
			if strings.Join(types, ",") != c.want {
				t.Fatalf("events %s, want %s", strings.Join(types, ","), c.want)
			}
			hist, _, err := session.LoadHistory(ctx, st, key)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, m := range hist {
				lines = append(lines, m.Role+": "+m.Content)
			}
			if strings.Join(lines, "\n") != strings.Join(c.hist, "\n") {
				t.Fatalf("history:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(c.hist, "\n"))
			}
			if strings.Contains(c.want, "context_checkpoint") {
				var d session.ContextCheckpointData
				if err := json.Unmarshal(evs[3].Data, &d); err != nil || d.UntilSeq != 2 || sess.CheckpointSeq != 4 {
					t.Fatalf("checkpoint %s, session checkpoint seq %d", evs[3].Data, sess.CheckpointSeq)
				}
				return
			}
			if c.status == session.StatusInterrupted {
				state, err := st.State(ctx, key)
				if err != nil || state.Session["city"] != "Paris" || state.Session["active_run"] != nil || state.Session["temp:x"] != nil {
					t.Fatalf("session state %+v, %v", state.Session, err)
				}
				if sess.Title != "Renamed" {
					t.Fatalf("title %q", sess.Title)
				}
				if run, err := st.GetRun(ctx, key, "r2"); err != nil || run.Status != session.StatusInterrupted {
					t.Fatalf("run r2: %+v, %v", run, err)
				}
			} else {
				var d session.RunStatusData
				if err := json.Unmarshal(evs[1].Data, &d); err != nil || d.Status != session.StatusFailed || d.Error == nil || d.Error.Message != "boom" {
					t.Fatalf("failed run status %s", evs[1].Data)
				}
			}
		})
	}
}
