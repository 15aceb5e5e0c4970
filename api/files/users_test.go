package files

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/host/workspace"
)

// testUser binds a request to the user its X-Test-User header names, as the router
// does for a tokens-file key or the trusted user header.
const testUser = "X-Test-User"

func newUsersEnv(t *testing.T) *env {
	t.Helper()
	gin.SetMode(gin.TestMode)
	base := t.TempDir()
	e := &env{filesDir: filepath.Join(base, "files"), wsDir: filepath.Join(base, "workspaces")}
	var err error
	e.uploads, err = attach.New(attach.Config{Dir: e.filesDir, MaxUploadBytes: 4096, LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	e.ws, err = workspace.Open(workspace.Config{Dir: e.wsDir, MaxUploadBytes: 4096, PerUser: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.uploads.Close(); _ = e.ws.Close() })
	e.r = gin.New()
	e.r.Use(func(c *gin.Context) {
		if u := c.GetHeader(testUser); u != "" {
			c.Request = c.Request.WithContext(caller.With(c.Request.Context(), caller.Identity{User: u, Bound: true}))
		}
	})
	NewSurface(Deps{Uploads: e.uploads, Workspaces: map[string]*workspace.Workspace{"agent": e.ws}}).Register(e.r)
	return e
}

func as(req *http.Request, user string) *http.Request {
	if user != "" {
		req.Header.Set(testUser, user)
	}
	return req
}

// Per-user workspaces: what alice writes, bob neither lists, reads, exports nor deletes
// (not found), whatever UserId he sends; the operator reaches it by naming alice.
func TestWorkspaceIsPerUser(t *testing.T) {
	e := newUsersEnv(t)
	if w, a := e.do(t, as(multipartReq(t, "AddWorkspaceFile", [][2]string{{"Path", "notes/a.txt"}, {"file", ""}}, "a.txt", []byte("alice's")), "alice")); w.Code != 200 {
		t.Fatalf("alice adds: %d %s", w.Code, a.Message)
	}
	list := func(user, body string) []workspace.Entry {
		t.Helper()
		w, a := e.do(t, as(jsonReq("ListWorkspaceFiles", body), user))
		if w.Code != 200 {
			t.Fatalf("%s lists: %d %s", user, w.Code, a.Message)
		}
		var d struct{ Entries []workspace.Entry }
		_ = json.Unmarshal(a.Data, &d)
		return d.Entries
	}
	if got := list("alice", `{"Recursive":true}`); len(got) != 2 {
		t.Errorf("alice lists %v", got)
	}
	for _, body := range []string{`{"Recursive":true}`, `{"Recursive":true,"UserId":"alice"}`} {
		if got := list("bob", body); len(got) != 0 {
			t.Errorf("bob lists %v with %s", got, body)
		}
	}
	for name, req := range map[string]*http.Request{
		"content": httptest.NewRequest("GET", Prefix+"GetWorkspaceFileContent?FilePath=notes/a.txt", nil),
		"export":  httptest.NewRequest("GET", Prefix+"ExportWorkspaceZip?Path=notes", nil),
		"delete":  jsonReq("DeleteWorkspaceFile", `{"Path":"notes/a.txt","UserId":"alice"}`),
	} {
		if w, a := e.do(t, as(req, "bob")); w.Code != http.StatusNotFound || a.Code != codeNotFound {
			t.Errorf("bob %s: %d %v %s", name, w.Code, a.Code, a.Message)
		}
	}
	// The operator (a request bound to nobody) is the default user, or the one it names.
	if got := list("", `{"Recursive":true}`); len(got) != 0 {
		t.Errorf("default user lists %v", got)
	}
	if got := list("", `{"Recursive":true,"UserId":"alice"}`); len(got) != 2 {
		t.Errorf("operator naming alice lists %v", got)
	}
	if w, _ := e.do(t, as(httptest.NewRequest("GET", Prefix+"GetWorkspaceFileContent?FilePath=notes/a.txt", nil), "alice")); w.Code != 200 || w.Body.String() != "alice's" {
		t.Errorf("alice reads: %d %q", w.Code, w.Body)
	}
	// Files land in the user's directory, nowhere else.
	if _, err := os.Stat(filepath.Join(e.wsDir, "alice", "notes", "a.txt")); err != nil {
		t.Errorf("alice's file: %v", err)
	}
}

// An upload is its uploader's: another user's request for it is not found; the
// operator reads it by naming the owner.
func TestUploadsArePerUser(t *testing.T) {
	e := newUsersEnv(t)
	w, a := e.do(t, as(multipartReq(t, "UploadFile", [][2]string{{"file", ""}}, "a.txt", []byte("alice's upload")), "alice"))
	if w.Code != 200 {
		t.Fatalf("upload: %d %s", w.Code, a.Message)
	}
	var d struct{ FileData fileData }
	_ = json.Unmarshal(a.Data, &d)
	get := func(user, extra string) int {
		w, _ := e.do(t, as(httptest.NewRequest("GET", Prefix+"AttachmentContent?FileUri="+url.QueryEscape(d.FileData.FileURI)+extra, nil), user))
		return w.Code
	}
	for _, tt := range []struct {
		who, extra string
		want       int
	}{
		{"alice", "", 200},
		{"bob", "", 404},
		{"bob", "&UserId=alice", 404},
		{"", "", 404}, // the operator as the default user
		{"", "&UserId=alice", 200},
	} {
		if got := get(tt.who, tt.extra); got != tt.want {
			t.Errorf("%q%s: %d, want %d", tt.who, tt.extra, got, tt.want)
		}
	}
	m, err := e.uploads.Stat(d.FileData.FileURI[len("ksadk-upload://"):])
	if err != nil || m.Owner != "alice" {
		t.Errorf("stored owner %q, %v", m.Owner, err)
	}
	// Uploads without an owner (stored before owners were recorded) stay readable.
	m, err = e.uploads.Put(context.Background(), "inline.txt", "text/plain", strings.NewReader("inline"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := e.do(t, as(httptest.NewRequest("GET", Prefix+"AttachmentContent?FileUri="+url.QueryEscape(m.URI()), nil), "bob")); w.Code != 200 {
		t.Errorf("unowned upload: %d", w.Code)
	}
}
