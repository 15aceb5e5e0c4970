package adkweb

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestArtifactRoutes: the artifact routes of google-adk's web server (the same paths in
// 1.x and 2.x) over the store: save (2.x's POST), list, latest, a version, versions and
// their metadata, delete; "user:" names are the user's, seen from every session of theirs;
// names may contain "/"; bad input gets ADK's errors.
func TestArtifactRoutes(t *testing.T) {
	e := newEnv(t)
	s1, s2 := "/apps/echo/users/u/sessions/s1", "/apps/echo/users/u/sessions/s2"
	e.obj("POST", s1, `{}`, http.StatusOK)
	e.obj("POST", s2, `{}`, http.StatusOK)
	b64 := func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
	save := func(sess, name, part string) map[string]any {
		t.Helper()
		return e.obj("POST", sess+"/artifacts", `{"filename":"`+name+`","artifact":`+part+`,"custom_metadata":{"k":"v"}}`, http.StatusOK)
	}
	v0 := save(s1, "notes/plan.md", `{"inlineData":{"mimeType":"text/markdown","data":"`+base64.StdEncoding.EncodeToString([]byte("v0 \xff"))+`"}}`)
	if v0["version"] != 0.0 || v0["mimeType"] != "text/markdown" || v0["customMetadata"].(map[string]any)["k"] != "v" ||
		!strings.HasSuffix(v0["canonicalUri"].(string), "/sessions/s1/artifacts/notes/plan.md/versions/0") {
		t.Fatalf("save = %v", v0)
	}
	if v1 := save(s1, "notes/plan.md", `{"text":"v1"}`); v1["version"] != 1.0 || v1["mimeType"] != "text/plain" {
		t.Fatalf("second save = %v", v1)
	}
	if u := save(s2, "user:profile.json", `{"inline_data":{"mime_type":"application/json","data":"`+b64(`{"a":1}`)+`"}}`); u["version"] != 0.0 {
		t.Fatalf("user save = %v", u)
	}

	tests := []struct {
		method, path string
		status       int
		want         string // JSON, or the error detail's start
	}{
		{"GET", s1 + "/artifacts", 200, `["notes/plan.md","user:profile.json"]`},
		{"GET", s2 + "/artifacts", 200, `["user:profile.json"]`},
		{"GET", "/apps/echo/users/other/sessions/s1/artifacts", 200, `[]`},
		{"GET", s1 + "/artifacts/notes/plan.md", 200, `{"text":"v1"}`},
		{"GET", s1 + "/artifacts/notes/plan.md?version=0", 200, `{"inlineData":{"data":"` + b64("v0 \xff") + `","mimeType":"text/markdown"}}`},
		{"GET", s1 + "/artifacts/notes/plan.md/versions/0", 200, `{"inlineData":{"data":"` + b64("v0 \xff") + `","mimeType":"text/markdown"}}`},
		{"GET", s1 + "/artifacts/notes/plan.md/versions/latest", 200, `{"text":"v1"}`},
		{"GET", s1 + "/artifacts/notes/plan.md/versions", 200, `[0,1]`},
		{"GET", s1 + "/artifacts/user:profile.json", 200, `{"inlineData":{"data":"` + b64(`{"a":1}`) + `","mimeType":"application/json"}}`},
		{"GET", s1 + "/artifacts/nope.txt", 404, "Artifact not found"},
		{"GET", s1 + "/artifacts/notes/plan.md/versions/7", 404, "Artifact not found"},
		{"GET", s1 + "/artifacts/notes/plan.md/versions/x", 422, "Invalid version ID"},
		{"GET", s1 + "/artifacts/notes/plan.md?version=x", 422, ""},
		{"GET", s1 + "/artifacts/notes/plan.md/versions/9/metadata", 404, "Artifact version not found"},
		{"GET", s1 + "/artifacts/nope.txt/versions", 200, `[]`},
		{"GET", s1 + "/artifacts/nope.txt/versions/metadata", 200, `[]`},
		{"GET", "/apps/nope/users/u/sessions/s1/artifacts", 404, "App not found"},
	}
	for _, tc := range tests {
		status, _, b := e.do(tc.method, tc.path, "")
		if status != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, status, tc.status, b)
			continue
		}
		if status >= 400 {
			var d struct {
				Detail json.RawMessage `json:"detail"`
			}
			var msg string
			if json.Unmarshal(b, &d) != nil || len(d.Detail) == 0 {
				t.Errorf("%s: not FastAPI's error shape: %s", tc.path, b)
			} else if json.Unmarshal(d.Detail, &msg) == nil && !strings.HasPrefix(msg, tc.want) {
				t.Errorf("%s: detail %q, want %q", tc.path, msg, tc.want)
			}
			continue
		}
		var got, want any
		_ = json.Unmarshal(b, &got)
		_ = json.Unmarshal([]byte(tc.want), &want)
		if gj, wj := mustJSON(got), mustJSON(want); string(gj) != string(wj) {
			t.Errorf("%s %s = %s, want %s", tc.method, tc.path, gj, wj)
		}
	}

	meta := e.json("GET", s1+"/artifacts/notes/plan.md/versions/metadata", "", http.StatusOK).([]any)
	if len(meta) != 2 || meta[1].(map[string]any)["version"] != 1.0 || meta[1].(map[string]any)["createTime"].(float64) <= 0 {
		t.Fatalf("versions metadata = %v", meta)
	}
	if m := e.obj("GET", s1+"/artifacts/notes/plan.md/versions/latest/metadata", "", http.StatusOK); m["version"] != 1.0 {
		t.Fatalf("latest metadata = %v", m)
	}
	if u := e.obj("GET", s1+"/artifacts/user:profile.json/versions/0/metadata", "", http.StatusOK); strings.Contains(u["canonicalUri"].(string), "/sessions/") {
		t.Fatalf("a user artifact's URI names a session: %v", u)
	}

	// Bad saves.
	for _, tc := range []struct {
		path, body string
		status     int
	}{
		{s1 + "/artifacts", `{"artifact":{"text":"x"}}`, 422},
		{s1 + "/artifacts", `{"filename":"a"}`, 422},
		{s1 + "/artifacts", `{"filename":"","artifact":{"text":"x"}}`, 400},
		{s1 + "/artifacts", `{"filename":"a","artifact":{}}`, 400},
		{s1 + "/artifacts", `{"filename":"a","artifact":{"inlineData":{"data":"%%%"}}}`, 422},
		{s1 + "/artifacts", `{"filename":"a","artifact":{"text":"x"},"custom_metadata":[1]}`, 422},
		{s1 + "/artifacts", `[]`, 422},
		{"/apps/echo/users/u/sessions/missing/artifacts", `{"filename":"a","artifact":{"text":"x"}}`, 404},
	} {
		if status, _, b := e.do("POST", tc.path, tc.body); status != tc.status {
			t.Errorf("POST %s %s: %d, want %d: %s", tc.path, tc.body, status, tc.status, b)
		}
	}

	// Delete: every version; null, also for a name that has none.
	for _, p := range []string{s1 + "/artifacts/notes/plan.md", s1 + "/artifacts/nope.txt"} {
		if status, _, b := e.do("DELETE", p, ""); status != 200 || string(b) != "null" {
			t.Fatalf("DELETE %s: %d %s", p, status, b)
		}
	}
	if got := e.json("GET", s1+"/artifacts", "", http.StatusOK); string(mustJSON(got)) != `["user:profile.json"]` {
		t.Fatalf("after delete: %s", mustJSON(got))
	}
	// Deleting the session deletes its artifacts, not the user's.
	save(s1, "gone.txt", `{"text":"x"}`)
	if status, _, b := e.do("DELETE", s1, ""); status != 200 {
		t.Fatalf("delete session: %d %s", status, b)
	}
	if got := e.json("GET", s1+"/artifacts", "", http.StatusOK); string(mustJSON(got)) != `["user:profile.json"]` {
		t.Fatalf("after deleting the session: %s", mustJSON(got))
	}
}

// TestArtifactsAreTheUsers: another user cannot reach a user's artifacts through the
// path (the trusted user header names the caller).
func TestArtifactsAreTheUsers(t *testing.T) {
	e := newEnv(t)
	alice := []string{headerUser, "alice"}
	e.obj("POST", "/apps/echo/users/alice/sessions/s", `{}`, http.StatusOK, alice...)
	e.obj("POST", "/apps/echo/users/alice/sessions/s/artifacts", `{"filename":"a.txt","artifact":{"text":"secret"}}`, http.StatusOK, alice...)
	for _, p := range []string{"/apps/echo/users/alice/sessions/s/artifacts", "/apps/echo/users/alice/sessions/s/artifacts/a.txt"} {
		if status, _, b := e.do("GET", p, "", headerUser, "bob"); status == http.StatusOK && strings.Contains(string(b), "a.txt") || strings.Contains(string(b), "secret") {
			t.Errorf("bob read %s: %d %s", p, status, b)
		}
	}
}

// TestSplitArtifactEvent: /run_sse streams an event with content and an artifact delta as
// ADK does: the content without the delta, then the delta alone.
func TestSplitArtifactEvent(t *testing.T) {
	text := "saved"
	ev := Event{Content: &Content{Role: "user", Parts: []Part{{Text: &text}}}, Actions: noActions(), ID: "e"}
	if got := splitArtifactEvent(ev); len(got) != 1 {
		t.Fatalf("no delta: %d events", len(got))
	}
	ev.Actions.ArtifactDelta = json.RawMessage(`{"a.txt":0}`)
	got := splitArtifactEvent(ev)
	if len(got) != 2 || got[0].Content == nil || string(got[0].Actions.ArtifactDelta) != `{}` ||
		got[1].Content != nil || string(got[1].Actions.ArtifactDelta) != `{"a.txt":0}` {
		t.Fatalf("split = %+v", got)
	}
	ev.Content = nil
	if got := splitArtifactEvent(ev); len(got) != 1 {
		t.Fatalf("a delta alone: %d events", len(got))
	}
}

// TestParseArtifactPath: ADK's route order over names that contain "/".
func TestParseArtifactPath(t *testing.T) {
	for in, want := range map[string]artifactPath{
		"/a.txt":                       {name: "a.txt"},
		"/d/a.txt":                     {name: "d/a.txt"},
		"/d/a.txt/versions":            {name: "d/a.txt", versions: true},
		"/d/a.txt/versions/metadata":   {name: "d/a.txt", versions: true, metadata: true},
		"/d/a.txt/versions/3":          {name: "d/a.txt", version: "3"},
		"/d/a.txt/versions/3/metadata": {name: "d/a.txt", version: "3", metadata: true},
		"/versions/a.txt":              {name: "versions/a.txt"},
		"/d/metadata":                  {name: "d/metadata"},
		"/d/versions/x/y":              {name: "d/versions/x/y"},
		"/user:p.json/versions/latest": {name: "user:p.json", version: "latest"},
	} {
		if got := parseArtifactPath(in); got != want {
			t.Errorf("%s = %+v, want %+v", in, got, want)
		}
	}
}
