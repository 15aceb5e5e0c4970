package host

import (
	"context"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// TestRunArtifacts: a run gets every version of the session's and the user's artifacts
// (not another session's), in name and version order, their data within the budget: the
// latest version of each name first, then older ones, newest first.
func TestRunArtifacts(t *testing.T) {
	ctx := context.Background()
	client, stop := inprocess.Serve(echoagent.New())
	t.Cleanup(stop)
	rt, err := New(Config{Store: memory.New(), Agents: []Agent{{Name: "app", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	key := session.Key{App: "app", User: "u", ID: "s1"}
	for _, k := range []session.Key{key, {App: "app", User: "u", ID: "s2"}} {
		if _, err := rt.store.CreateSession(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	put := func(k session.Key, name, data string) {
		t.Helper()
		if _, err := rt.PutDoc(ctx, session.Doc{Key: ArtifactKey(k, name), MimeType: "text/plain", Data: []byte(data), Meta: []byte(`{"text":true}`)}); err != nil {
			t.Fatal(err)
		}
	}
	put(key, "b.txt", "b0-xxxx")
	put(key, "b.txt", "b1-xx")
	put(key, "a.txt", "a0")
	put(session.Key{App: "app", User: "u", ID: "s2"}, "user:p.txt", "p0")
	put(session.Key{App: "app", User: "u", ID: "s2"}, "other.txt", "s2 only")
	if k := ArtifactKey(key, "user:p.txt"); k.Session != "" || k.User != "u" {
		t.Fatalf("a user: name is the user's: %+v", k)
	}

	for _, tc := range []struct {
		budget int
		want   string // name/version[=data or -], in order
	}{
		{1 << 20, "a.txt/0=a0 b.txt/0=b0-xxxx b.txt/1=b1-xx user:p.txt/0=p0"},
		// 9 bytes: the latest of each (a0, b1-xx, p0) fit, b0 does not.
		{9, "a.txt/0=a0 b.txt/0=- b.txt/1=b1-xx user:p.txt/0=p0"},
		{0, "a.txt/0=- b.txt/0=- b.txt/1=- user:p.txt/0=-"},
	} {
		got, err := rt.runArtifacts(ctx, key, tc.budget)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, a := range got {
			d := string(a.Data)
			if a.DataOmitted {
				d = "-"
			}
			parts = append(parts, a.Name+"/"+string(rune('0'+a.Version))+"="+d)
			if string(a.MetaJson) != `{"text": true}` && string(a.MetaJson) != `{"text":true}` || a.MimeType != "text/plain" || a.CreateTime <= 0 {
				t.Errorf("%s: meta %s, mime %q, time %v", a.Name, a.MetaJson, a.MimeType, a.CreateTime)
			}
		}
		if s := strings.Join(parts, " "); s != tc.want {
			t.Errorf("budget %d: %s, want %s", tc.budget, s, tc.want)
		}
	}
	if got, err := rt.runArtifacts(ctx, session.Key{App: "app", User: "v", ID: "s1"}, 1<<20); err != nil || len(got) != 0 {
		t.Fatalf("another user's run: %v, %v", got, err)
	}
}
