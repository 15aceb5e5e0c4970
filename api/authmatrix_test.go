package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/files"
	"github.com/agentengine/agentengine/api/langgraph"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/host/workspace"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

const (
	aliceKey = "alice-key-0123456789"
	bobKey   = "bob-key-0123456789ab"
	shared   = "shared-token-0123456789"
)

type matrixEnv struct {
	t      *testing.T
	url    string
	tokens string
}

func newMatrixEnv(t *testing.T) *matrixEnv {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# key user\n"+aliceKey+" alice\n"+bobKey+" bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := api.LoadTokens(tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, stop := inprocess.Serve(echoagent.New())
	dir := t.TempDir()
	uploads, err := attach.New(attach.Config{Dir: filepath.Join(dir, "files"), LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Framework: "go", Runner: client}},
		Attachments: uploads.ForHost()})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(workspace.Config{Dir: filepath.Join(dir, "workspaces"), PerUser: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = uploads.Close(); _ = ws.Close() })
	ui, err := actions.New(actions.Config{Runtime: rt, Extensions: []actions.Extension{
		files.NewSurface(files.Deps{Uploads: uploads, Workspaces: map[string]*workspace.Workspace{"echo": ws}})}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, AuthToken: shared, Tokens: keys,
		Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt}), adkweb.New(adkweb.Config{Runtime: rt}), ui,
			langgraph.New(langgraph.Config{Runtime: rt, Frameworks: []string{"go"}})}})
	srv := apitest.Serve(t, r, rt, stop)
	return &matrixEnv{t: t, url: srv.URL, tokens: tokens}
}

func (e *matrixEnv) do(method, path, body, key string, extra ...string) (int, []byte) {
	e.t.Helper()
	h := append([]string{"Content-Type", "application/json"}, extra...)
	if strings.HasPrefix(body, "--"+formBoundary) {
		h[1] = "multipart/form-data; boundary=" + formBoundary
	}
	if key != "" {
		h = append(h, "Authorization", "Bearer "+key)
	}
	code, _, b := apitest.Do(e.t, e.url, method, path, body, h...)
	return code, b
}

// alice's session on each surface: its id and the routes that touch it.
func (e *matrixEnv) aliceSession() (adkID, respID, convID string) {
	e.t.Helper()
	code, b := e.do("POST", "/apps/echo/users/alice/sessions", `{}`, aliceKey)
	if code != 200 {
		e.t.Fatalf("create ADK session: %d %s", code, b)
	}
	var s struct{ ID string }
	_ = json.Unmarshal(b, &s)
	code, b = e.do("POST", "/v1/responses", `{"model":"echo","input":"hello"}`, aliceKey)
	if code != 200 {
		e.t.Fatalf("create response: %d %s", code, b)
	}
	var r struct {
		ID        string `json:"id"`
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(b, &r)
	return s.ID, r.ID, r.SessionID
}

// formBoundary separates the parts of the multipart bodies of the file routes.
const formBoundary = "matrixboundary"

// form is a multipart body: fields in order, then "file" with content.
func form(content string, fields ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(fields); i += 2 {
		b.WriteString("--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"" + fields[i] + "\"\r\n\r\n" + fields[i+1] + "\r\n")
	}
	b.WriteString("--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n" + content + "\r\n")
	b.WriteString("--" + formBoundary + "--\r\n")
	return b.String()
}

// aliceFiles gives alice an upload and a workspace file; it returns the upload's URI.
func (e *matrixEnv) aliceFiles() string {
	e.t.Helper()
	code, b := e.do("POST", files.Prefix+"UploadFile", form("alice's upload"), aliceKey)
	if code != 200 {
		e.t.Fatalf("upload: %d %s", code, b)
	}
	var u struct {
		Data struct {
			FileData struct {
				FileURI string `json:"fileUri"`
			}
		}
	}
	_ = json.Unmarshal(b, &u)
	if code, b := e.do("POST", files.Prefix+"AddWorkspaceFile", form("alice's notes", "Path", "notes/a.txt"), aliceKey); code != 200 {
		e.t.Fatalf("add workspace file: %d %s", code, b)
	}
	return u.Data.FileData.FileURI
}

// Every route × {no key, wrong key, another user's key}: refused (401) without a valid
// key, and another user's resources are not found (404) with a valid one; the owner's
// key works. A key from the tokens file is its user, whatever header it sends.
func TestAuthMatrix(t *testing.T) {
	e := newMatrixEnv(t)
	adkID, respID, convID := e.aliceSession()
	upload := e.aliceFiles()
	routes := []struct {
		name, method, path, body string
	}{
		{"adk get", "GET", "/apps/echo/users/alice/sessions/" + adkID, ""},
		{"adk patch", "PATCH", "/apps/echo/users/alice/sessions/" + adkID, `{"stateDelta":{"k":"v"}}`},
		{"adk run", "POST", "/run", `{"appName":"echo","userId":"alice","sessionId":"` + adkID + `","newMessage":{"role":"user","parts":[{"text":"hi"}]}}`},
		{"openai get response", "GET", "/v1/responses/" + respID, ""},
		{"openai continue", "POST", "/v1/responses", `{"model":"echo","input":"more","previous_response_id":"` + respID + `"}`},
		{"openai input items", "GET", "/v1/responses/" + respID + "/input_items", ""},
		{"actions get session", "POST", actions.Prefix + "GetSession", `{"AgentId":"echo","SessionId":"` + convID + `"}`},
		{"actions list events", "POST", actions.Prefix + "ListSessionEvents", `{"AgentId":"echo","SessionId":"` + convID + `"}`},
		{"files attachment", "GET", files.Prefix + "AttachmentContent?FileUri=" + url.QueryEscape(upload), ""},
		{"files workspace content", "GET", files.Prefix + "GetWorkspaceFileContent?FilePath=notes/a.txt", ""},
		{"files workspace export", "GET", files.Prefix + "ExportWorkspaceZip?Path=notes", ""},
		{"files workspace delete", "POST", files.Prefix + "DeleteWorkspaceFile", `{"Path":"notes/a.txt","UserId":"alice"}`},
		{"langgraph thread", "GET", "/threads/" + adkID, ""},
		{"langgraph patch thread", "PATCH", "/threads/" + adkID, `{"metadata":{"k":"v"}}`},
		{"langgraph state", "GET", "/threads/" + adkID + "/state", ""},
		{"langgraph history", "POST", "/threads/" + adkID + "/history", `{}`},
		{"langgraph runs", "GET", "/threads/" + adkID + "/runs", ""},
		{"langgraph run", "POST", "/threads/" + adkID + "/runs/wait", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi"}]}}`},
		{"adk delete", "DELETE", "/apps/echo/users/alice/sessions/" + adkID, ""},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			if code, b := e.do(rt.method, rt.path, rt.body, ""); code != http.StatusUnauthorized {
				t.Errorf("no key: %d %s", code, b)
			}
			if code, b := e.do(rt.method, rt.path, rt.body, "wrong-key-0123456789"); code != http.StatusUnauthorized {
				t.Errorf("wrong key: %d %s", code, b)
			}
			// bob's key, claiming to be alice: still bob.
			if code, b := e.do(rt.method, rt.path, rt.body, bobKey, "X-AgentEngine-User", "alice"); code != http.StatusNotFound {
				t.Errorf("bob's key on alice's resource: %d %s", code, b)
			}
			if code, b := e.do(rt.method, rt.path, rt.body, aliceKey); code != http.StatusOK {
				t.Errorf("alice's key: %d %s", code, b)
			}
		})
	}
}

// The file routes that create or list: refused without a valid key; with bob's key they
// act on bob's own files, never alice's, whatever user they name.
func TestAuthMatrixFilesOfTheCaller(t *testing.T) {
	e := newMatrixEnv(t)
	e.aliceFiles()
	for _, rt := range []struct{ name, method, path, body string }{
		{"upload", "POST", files.Prefix + "UploadFile", form("x")},
		{"workspace add", "POST", files.Prefix + "AddWorkspaceFile", form("bob's", "UserId", "alice", "Path", "notes/a.txt")},
		{"workspace list", "POST", files.Prefix + "ListWorkspaceFiles", `{"Recursive":true,"UserId":"alice"}`},
	} {
		t.Run(rt.name, func(t *testing.T) {
			if code, b := e.do(rt.method, rt.path, rt.body, ""); code != http.StatusUnauthorized {
				t.Errorf("no key: %d %s", code, b)
			}
			if code, b := e.do(rt.method, rt.path, rt.body, "wrong-key-0123456789"); code != http.StatusUnauthorized {
				t.Errorf("wrong key: %d %s", code, b)
			}
			if code, b := e.do(rt.method, rt.path, rt.body, bobKey, "X-AgentEngine-User", "alice"); code != http.StatusOK {
				t.Errorf("bob's key: %d %s", code, b)
			}
		})
	}
	// bob's write went to his workspace; alice's file is as she left it.
	_, b := e.do("GET", files.Prefix+"GetWorkspaceFileContent?FilePath=notes/a.txt", "", aliceKey)
	if string(b) != "alice's notes" {
		t.Errorf("alice's file reads %q", b)
	}
	_, b = e.do("GET", files.Prefix+"GetWorkspaceFileContent?FilePath=notes/a.txt", "", bobKey)
	if string(b) != "bob's" {
		t.Errorf("bob's file reads %q", b)
	}
	_, b = e.do("POST", files.Prefix+"ListWorkspaceFiles", `{"Recursive":true}`, bobKey)
	if strings.Count(string(b), `"Type":"file"`) != 1 {
		t.Errorf("bob lists %s", b)
	}
}

// The tokens file is read again when it changes: a new key works and a removed one is
// refused without a restart.
func TestTokensFileRotation(t *testing.T) {
	e := newMatrixEnv(t)
	if code, _ := e.do("GET", "/v1/models", "", aliceKey); code != 200 {
		t.Fatalf("alice before rotation: %d", code)
	}
	newKey := "alice-rotated-0123456789"
	// A different size makes the change visible even within the file system's mtime
	// granularity.
	if err := os.WriteFile(e.tokens, []byte(newKey+" alice\n"+bobKey+" bob\n# rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(e.tokens, future, future)
	if code, _ := e.do("GET", "/v1/models", "", aliceKey); code != http.StatusUnauthorized {
		t.Errorf("old key after rotation: %d", code)
	}
	if code, _ := e.do("GET", "/v1/models", "", newKey); code != 200 {
		t.Errorf("new key: %d", code)
	}
	// A broken file keeps the keys read last.
	if err := os.WriteFile(e.tokens, []byte("not a valid line at all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.do("GET", "/v1/models", "", newKey); code != 200 {
		t.Errorf("key after a broken rewrite: %d", code)
	}
}

// Emptying the tokens file, leaving only comments in it or removing it revokes every
// key at once (the shared token still works); adding a key back lets it in again.
func TestTokensFileRevokesTheLastKey(t *testing.T) {
	rewrite := func(e *matrixEnv, content string, size int) {
		t.Helper()
		if err := os.WriteFile(e.tokens, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		future := time.Now().Add(time.Duration(size) * time.Second)
		_ = os.Chtimes(e.tokens, future, future)
	}
	for name, revoke := range map[string]func(e *matrixEnv){
		"empty":    func(e *matrixEnv) { rewrite(e, "", 2) },
		"comments": func(e *matrixEnv) { rewrite(e, "# every key revoked\n\n   # still none\n", 2) },
		"removed": func(e *matrixEnv) {
			if err := os.Remove(e.tokens); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newMatrixEnv(t)
			if code, _ := e.do("GET", "/v1/models", "", aliceKey); code != 200 {
				t.Fatalf("alice before: %d", code)
			}
			revoke(e)
			for _, k := range []string{aliceKey, bobKey} {
				if code, _ := e.do("GET", "/v1/models", "", k); code != http.StatusUnauthorized {
					t.Errorf("revoked key %s…: %d", k[:5], code)
				}
			}
			if code, _ := e.do("GET", "/v1/models", "", shared); code != 200 {
				t.Errorf("shared token: %d", code)
			}
			rewrite(e, bobKey+" bob\n", 4)
			if code, _ := e.do("GET", "/v1/models", "", bobKey); code != 200 {
				t.Errorf("key added back: %d", code)
			}
			if code, _ := e.do("GET", "/v1/models", "", aliceKey); code != http.StatusUnauthorized {
				t.Errorf("alice still revoked: %d", code)
			}
		})
	}
}

func TestLoadTokensRejectsBadFiles(t *testing.T) {
	for name, content := range map[string]string{
		"empty":     "# nothing\n",
		"short key": "short alice\n",
		"no user":   aliceKey + "\n",
		"duplicate": aliceKey + " alice\n" + aliceKey + " bob\n",
		"bad user":  aliceKey + " a\x01b\n",
	} {
		p := filepath.Join(t.TempDir(), "tokens")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := api.LoadTokens(p, nil); err == nil || !strings.Contains(err.Error(), "tokens file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// app: state is shared by every user of an agent: a per-user key cannot write it over
// ADK (create, PATCH, a run's stateDelta); the operator's shared token can.
func TestAppStateNeedsTheOperator(t *testing.T) {
	e := newMatrixEnv(t)
	adkID, _, _ := e.aliceSession()
	sess := "/apps/echo/users/alice/sessions/" + adkID
	for _, tt := range []struct{ name, method, path, body string }{
		{"patch", "PATCH", sess, `{"stateDelta":{"app:theme":"dark"}}`},
		{"create", "POST", "/apps/echo/users/alice/sessions", `{"state":{"app:theme":"dark"}}`},
		{"run", "POST", "/run", `{"appName":"echo","userId":"alice","sessionId":"` + adkID + `","stateDelta":{"app:theme":"dark"},"newMessage":{"role":"user","parts":[{"text":"hi"}]}}`},
	} {
		code, b := e.do(tt.method, tt.path, tt.body, aliceKey)
		if code != http.StatusForbidden || !strings.HasPrefix(string(b), `{"detail":"app:theme`) {
			t.Errorf("%s with alice's key: %d %s", tt.name, code, b)
		}
	}
	if code, b := e.do("PATCH", sess, `{"stateDelta":{"user:lang":"de","k":1}}`, aliceKey); code != http.StatusOK {
		t.Errorf("alice's own state: %d %s", code, b)
	}
	if code, b := e.do("PATCH", sess, `{"stateDelta":{"app:theme":"dark"}}`, shared, "X-AgentEngine-User", "alice"); code != http.StatusOK {
		t.Errorf("operator: %d %s", code, b)
	}
}

// ADK /run referencing an upload the caller cannot see (another user's, or none at all)
// names the upload that was not found, not the session, which exists.
func TestADKRunNamesTheMissingUpload(t *testing.T) {
	e := newMatrixEnv(t)
	upload := e.aliceFiles()
	code, b := e.do("POST", "/apps/echo/users/bob/sessions", `{}`, bobKey)
	if code != 200 {
		t.Fatalf("bob's session: %d %s", code, b)
	}
	var s struct{ ID string }
	_ = json.Unmarshal(b, &s)
	for name, ref := range map[string]string{
		"another user's": upload,
		"unknown":        "ksadk-upload://00000000000000000000000000000000",
	} {
		body := `{"appName":"echo","userId":"bob","sessionId":"` + s.ID + `","newMessage":{"role":"user","parts":[{"text":"see"},{"fileData":{"fileUri":"` + ref + `","mimeType":"text/plain"}}]}}`
		code, b := e.do("POST", "/run", body, bobKey)
		if code != http.StatusNotFound || !strings.Contains(string(b), ref) || strings.Contains(string(b), "Session not found") {
			t.Errorf("%s upload: %d %s", name, code, b)
		}
	}
	// The session is untouched and still takes turns.
	body := `{"appName":"echo","userId":"bob","sessionId":"` + s.ID + `","newMessage":{"role":"user","parts":[{"text":"hi"}]}}`
	if code, b := e.do("POST", "/run", body, bobKey); code != 200 {
		t.Errorf("a turn after: %d %s", code, b)
	}
}

// State over its tier's budget (4 MiB by default) is refused on every way a client
// writes it, 413 in the surface's shape, and nothing is stored; a runner's state over
// the budget fails its run with the reason. The user's sessions keep taking turns.
func TestStateBudgetOnEverySurface(t *testing.T) {
	e := newMatrixEnv(t)
	adkID, _, _ := e.aliceSession()
	big := strings.Repeat("x", 5<<20)
	sess := "/apps/echo/users/alice/sessions/" + adkID
	for _, tt := range []struct{ name, method, path, body, key string }{
		{"patch user", "PATCH", sess, `{"stateDelta":{"user:big":"` + big + `"}}`, aliceKey},
		{"patch app", "PATCH", sess, `{"stateDelta":{"app:big":"` + big + `"}}`, shared},
		{"patch session", "PATCH", sess, `{"stateDelta":{"big":"` + big + `"}}`, aliceKey},
		{"create", "POST", "/apps/echo/users/alice/sessions/s-big", `{"user:big":"` + big + `"}`, aliceKey},
		{"run", "POST", "/run", `{"appName":"echo","userId":"alice","sessionId":"` + adkID + `","stateDelta":{"user:big":"` + big + `"},"newMessage":{"role":"user","parts":[{"text":"hi"}]}}`, aliceKey},
	} {
		extra := []string{}
		if tt.key == shared {
			extra = []string{"X-AgentEngine-User", "alice"}
		}
		code, b := e.do(tt.method, tt.path, tt.body, tt.key, extra...)
		if code != http.StatusRequestEntityTooLarge || !strings.HasPrefix(string(b), `{"detail":"the `) || !strings.Contains(string(b), "budget") {
			t.Errorf("%s: %d %.300s", tt.name, code, b)
		}
	}
	if code, _ := e.do("GET", "/apps/echo/users/alice/sessions/s-big", "", aliceKey); code != http.StatusNotFound {
		t.Errorf("a session whose initial state was refused exists: %d", code)
	}
	// The agent's own state over the budget, through the Web UI's action API.
	code, b := e.do("POST", actions.Prefix+"RunAgent", `{"AgentId":"echo","Messages":[{"role":"user","content":[{"type":"input_text","text":"state:user:big=`+big+`"}]}]}`, aliceKey)
	if !strings.Contains(string(b), `"status":"failed"`) || !strings.Contains(string(b), "state change was refused") {
		t.Errorf("runner state over the budget: %d %.500s", code, b)
	}
	code, b = e.do("GET", sess, "", aliceKey)
	if code != 200 || len(b) > 1<<20 {
		t.Errorf("session after refused writes: %d, %d bytes", code, len(b))
	}
	body := `{"appName":"echo","userId":"alice","sessionId":"` + adkID + `","newMessage":{"role":"user","parts":[{"text":"hi"}]}}`
	if code, b := e.do("POST", "/run", body, aliceKey); code != 200 {
		t.Errorf("a turn after: %d %.300s", code, b)
	}
}
