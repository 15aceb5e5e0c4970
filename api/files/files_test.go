package files

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/host/workspace"
)

type env struct {
	r        *gin.Engine
	uploads  *attach.Store
	ws       *workspace.Workspace
	filesDir string
	wsDir    string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	gin.SetMode(gin.TestMode)
	base := t.TempDir()
	e := &env{filesDir: filepath.Join(base, "files"), wsDir: filepath.Join(base, "workspace")}
	var err error
	e.uploads, err = attach.New(attach.Config{Dir: e.filesDir, MaxUploadBytes: 4096, LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	e.ws, err = workspace.Open(workspace.Config{Dir: e.wsDir, MaxUploadBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.uploads.Close(); _ = e.ws.Close() })
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.r = gin.New()
	NewSurface(Deps{Uploads: e.uploads, Workspaces: map[string]*workspace.Workspace{"agent": e.ws}}).Register(e.r)
	return e
}

type answer struct {
	Code      any             `json:"Code"`
	Message   string          `json:"Message"`
	RequestID string          `json:"RequestId"`
	Action    string          `json:"Action"`
	Data      json.RawMessage `json:"Data"`
	Detail    string          `json:"detail"`
}

func (e *env) do(t testing.TB, req *http.Request) (*httptest.ResponseRecorder, answer) {
	t.Helper()
	w := httptest.NewRecorder()
	e.r.ServeHTTP(w, req)
	var a answer
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
			t.Fatalf("envelope %q: %v", w.Body.String(), err)
		}
		if a.RequestID == "" || !strings.HasPrefix(a.RequestID, "req-") {
			t.Fatalf("envelope without RequestId: %s", w.Body.String())
		}
	}
	return w, a
}

// multipartReq builds a multipart POST; fields are written in order, "file" as a file.
func multipartReq(t testing.TB, action string, fields [][2]string, fileName string, content []byte) *http.Request {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if f[0] == "file" {
			fw, err := mw.CreateFormFile("file", fileName)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fw.Write(content)
			continue
		}
		_ = mw.WriteField(f[0], f[1])
	}
	_ = mw.Close()
	req := httptest.NewRequest(http.MethodPost, Prefix+action, &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

func jsonReq(action string, body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, Prefix+action, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.Name() != "cache" {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestUploadAndAttachmentContent(t *testing.T) {
	e := newEnv(t)
	w, a := e.do(t, multipartReq(t, "UploadFile", [][2]string{{"AgentId", "agent"}, {"file", ""}}, "../../notes.txt", []byte("hello notes")))
	if w.Code != 200 || a.Code != float64(0) || a.Action != "UploadFile" {
		t.Fatalf("upload: %d %s", w.Code, w.Body)
	}
	var d struct {
		FileData struct {
			FileURI     string `json:"fileUri"`
			DisplayName string `json:"displayName"`
			MimeType    string `json:"mimeType"`
			SizeBytes   int64  `json:"sizeBytes"`
		}
	}
	_ = json.Unmarshal(a.Data, &d)
	if !strings.HasPrefix(d.FileData.FileURI, "ksadk-upload://") || d.FileData.DisplayName != "notes.txt" || d.FileData.SizeBytes != 11 || d.FileData.MimeType != "text/plain" {
		t.Fatalf("FileData %+v", d.FileData)
	}
	w, _ = e.do(t, httptest.NewRequest(http.MethodGet, Prefix+"AttachmentContent?FileUri="+url.QueryEscape(d.FileData.FileURI), nil))
	if w.Code != 200 || w.Body.String() != "hello notes" {
		t.Fatalf("content: %d %q", w.Code, w.Body)
	}
	h := w.Header()
	if h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment;") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("headers %v", h)
	}
	// Images are shown inline.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	_, a = e.do(t, multipartReq(t, "UploadFile", [][2]string{{"file", ""}}, "p.png", png))
	_ = json.Unmarshal(a.Data, &d)
	w, _ = e.do(t, httptest.NewRequest(http.MethodGet, Prefix+"AttachmentContent?FileUri="+url.QueryEscape(d.FileData.FileURI), nil))
	if w.Header().Get("Content-Type") != "image/png" || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "inline;") {
		t.Fatalf("image headers %v", w.Header())
	}
}

func TestUploadRejections(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"over the limit", multipartReq(t, "UploadFile", [][2]string{{"file", ""}}, "big.bin", make([]byte, 4097)), 413, "RequestTooLarge"},
		{"no file", multipartReq(t, "UploadFile", [][2]string{{"AgentId", "x"}}, "", nil), 400, "MissingParameter"},
		{"two files", multipartReq(t, "UploadFile", [][2]string{{"file", ""}, {"file", ""}}, "a.txt", []byte("a")), 400, "InvalidParameter"},
		{"not multipart", jsonReq("UploadFile", `{}`), 415, "UnsupportedMediaType"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, a := e.do(t, tc.req)
			if w.Code != tc.status || a.Code != tc.code || a.Message == "" || a.Detail != a.Message || string(a.Data) != "null" {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if names := storeFiles(t, e.filesDir); len(names) != 0 {
				t.Fatalf("a rejected upload left %v", names)
			}
		})
	}
}

func TestAttachmentContentRejectsTraversal(t *testing.T) {
	e := newEnv(t)
	for _, ref := range []string{
		"ksadk-upload://../../secret.txt", "ksadk-upload://..%2f..%2fsecret.txt", "ksadk-upload://%2e%2e%2f%2e%2e%2fsecret.txt",
		"ksadk-upload:///etc/passwd", "ksadk-upload://0123456789abcdef0123456789abcde\x00", "file:///etc/passwd", "../secret.txt",
		"ksadk-upload://0123456789ABCDEF0123456789ABCDEF",
	} {
		w, a := e.do(t, httptest.NewRequest(http.MethodGet, Prefix+"AttachmentContent?FileUri="+url.QueryEscape(ref), nil))
		if w.Code != 400 || a.Code != "InvalidParameter" || strings.Contains(w.Body.String(), "secret") {
			t.Errorf("%q: %d %s", ref, w.Code, w.Body)
		}
	}
	w, a := e.do(t, httptest.NewRequest(http.MethodGet, Prefix+"AttachmentContent?FileUri=ksadk-upload://0123456789abcdef0123456789abcdef", nil))
	if w.Code != 404 || a.Message != "Attachment not found" {
		t.Fatalf("unknown: %d %s", w.Code, w.Body)
	}
}

func TestWorkspaceActions(t *testing.T) {
	e := newEnv(t)
	// Path after the file, as a browser's FormData may order it.
	w, a := e.do(t, multipartReq(t, "AddWorkspaceFile", [][2]string{{"AgentId", "agent"}, {"file", ""}, {"Path", "site/index.html"}}, "index.html",
		[]byte(`<script>fetch("/agentengine/api/v1/DeleteSession")</script><h1>hi</h1>`)))
	if w.Code != 200 {
		t.Fatalf("add: %d %s", w.Code, w.Body)
	}
	var added struct{ Entry workspace.Entry }
	_ = json.Unmarshal(a.Data, &added)
	if added.Entry.Path != "site/index.html" || added.Entry.Type != "file" {
		t.Fatalf("entry %+v", added.Entry)
	}
	w, a = e.do(t, jsonReq("ListWorkspaceFiles", `{"AgentId":"agent","Path":".","Recursive":true}`))
	var list struct {
		Root, Path string
		Entries    []workspace.Entry
	}
	_ = json.Unmarshal(a.Data, &list)
	if w.Code != 200 || list.Path != "." || len(list.Entries) != 2 || list.Entries[0].Path != "site" || strings.Contains(w.Body.String(), e.wsDir) {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	w, _ = e.do(t, httptest.NewRequest(http.MethodGet, Prefix+"GetWorkspaceFileContent?AgentId=agent&FilePath=site/index.html", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<h1>hi</h1>") {
		t.Fatalf("content: %d %s", w.Code, w.Body)
	}
	if w.Header().Get("Content-Security-Policy") != PreviewCSP || w.Header().Get("X-Content-Type-Options") != "nosniff" ||
		w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("preview headers %v", w.Header())
	}
	w, _ = e.do(t, httptest.NewRequest(http.MethodGet, Prefix+"ExportWorkspaceZip?Path=site", nil))
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/zip" {
		t.Fatalf("export: %d %v", w.Code, w.Header())
	}
	zr, err := zip.NewReader(bytes.NewReader(w.Body.Bytes()), int64(w.Body.Len()))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "index.html" {
		t.Fatalf("zip %v %v", zr, err)
	}
	w, a = e.do(t, jsonReq("DeleteWorkspaceFile", `{"Path":"site"}`))
	if w.Code != 409 || a.Code != "ResourceConflict" {
		t.Fatalf("delete non-empty: %d %s", w.Code, w.Body)
	}
	w, _ = e.do(t, jsonReq("DeleteWorkspaceFile", `{"Path":"site/index.html"}`))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"Deleted":true`) {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	w, _ = e.do(t, jsonReq("DeleteWorkspaceFile", `{"Path":"site/index.html"}`))
	if w.Code != 404 {
		t.Fatalf("delete again: %d %s", w.Code, w.Body)
	}
	w, _ = e.do(t, jsonReq("ListWorkspaceFiles", `{"AgentId":"other"}`))
	if w.Code != 404 {
		t.Fatalf("unknown agent: %d %s", w.Code, w.Body)
	}
}

func TestWorkspaceRejections(t *testing.T) {
	e := newEnv(t)
	if err := os.Symlink(filepath.Dir(e.wsDir), filepath.Join(e.wsDir, "out")); err != nil {
		t.Fatal(err)
	}
	bad := []string{"../secret.txt", "/etc/passwd", "%2e%2e/secret.txt", "..%2fsecret.txt", "a\\..\\..\\secret.txt", "a\x00b", "out/secret.txt"}
	for _, p := range bad {
		q := url.QueryEscape(p)
		for _, req := range []*http.Request{
			jsonReq("ListWorkspaceFiles", `{"Path":`+jsonString(p)+`}`),
			httptest.NewRequest(http.MethodGet, Prefix+"GetWorkspaceFileContent?FilePath="+q, nil),
			jsonReq("DeleteWorkspaceFile", `{"Path":`+jsonString(p)+`}`),
			httptest.NewRequest(http.MethodGet, Prefix+"ExportWorkspaceZip?Path="+q, nil),
			multipartReq(t, "AddWorkspaceFile", [][2]string{{"Path", p}, {"file", ""}}, "x.txt", []byte("planted")),
			multipartReq(t, "AddWorkspaceFile", [][2]string{{"file", ""}, {"Path", p}}, "x.txt", []byte("planted")),
		} {
			w, a := e.do(t, req)
			if w.Code != 400 || a.Code != "InvalidParameter" || strings.Contains(w.Body.String(), "secret\"") {
				t.Errorf("%s %q: %d %s", req.URL.Path, p, w.Code, w.Body)
			}
		}
	}
	w, _ := e.do(t, multipartReq(t, "AddWorkspaceFile", [][2]string{{"Path", "big.bin"}, {"file", ""}}, "big.bin", make([]byte, 4097)))
	if w.Code != 413 {
		t.Fatalf("over limit: %d %s", w.Code, w.Body)
	}
	ents, _ := os.ReadDir(e.wsDir)
	if len(ents) != 1 || ents[0].Name() != "out" {
		t.Fatalf("rejected writes left %v", ents)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.wsDir), "x.txt")); !os.IsNotExist(err) {
		t.Fatal("a write escaped the workspace")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestActionsMap(t *testing.T) {
	all := Actions(Deps{Uploads: &attach.Store{}, Workspaces: map[string]*workspace.Workspace{"a": nil}})
	for name := range all {
		if len(Methods(name)) == 0 {
			t.Errorf("%s has no method", name)
		}
	}
	if len(all) != 7 {
		t.Fatalf("%d actions", len(all))
	}
	if n := len(Actions(Deps{})); n != 0 {
		t.Fatalf("no deps: %d actions", n)
	}
	_ = context.Background
	_ = io.Discard
}

// A name that is not valid UTF-8 would make a file no JSON client can name again (it
// is listed with U+FFFD in its place): such names are refused at upload, whether they
// come as the Path field or as the file's name.
func TestUploadsRefuseInvalidUTF8Names(t *testing.T) {
	e := newEnv(t)
	const bad = "a\xff.txt"
	for name, req := range map[string]*http.Request{
		"workspace path first": multipartReq(t, "AddWorkspaceFile", [][2]string{{"Path", "dir/" + bad}, {"file", ""}}, "x.txt", []byte("x")),
		"workspace path after": multipartReq(t, "AddWorkspaceFile", [][2]string{{"file", ""}, {"Path", bad}}, "x.txt", []byte("x")),
		"workspace file name":  multipartReq(t, "AddWorkspaceFile", [][2]string{{"file", ""}}, bad, []byte("x")),
		"upload file name":     multipartReq(t, "UploadFile", [][2]string{{"file", ""}}, bad, []byte("x")),
		"workspace read":       httptest.NewRequest(http.MethodGet, Prefix+"GetWorkspaceFileContent?FilePath=a%FF.txt", nil),
	} {
		w, a := e.do(t, req)
		if w.Code != 400 || a.Code != "InvalidParameter" || !strings.Contains(a.Message, "UTF-8") {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	if ents, _ := os.ReadDir(e.wsDir); len(ents) != 0 {
		t.Errorf("refused writes left %v", ents)
	}
	if names := storeFiles(t, e.filesDir); len(names) != 0 {
		t.Errorf("a refused upload left %v", names)
	}
}

// FuzzWorkspaceUploadName: whatever Path and file name an upload carries, the answer is
// a client error or a file that JSON clients can reach again by the path they were told:
// read and deleted. Never a server error.
func FuzzWorkspaceUploadName(f *testing.F) {
	for _, s := range [][2]string{
		{"notes/a.txt", "x.txt"}, {"", "a.txt"}, {"", "a\xff.txt"}, {"dir/a\xfe", "x"}, {"../up", "x"},
		{"", "../../etc/passwd"}, {"%2e%2e/x", ""}, {"a\\b", "c"}, {"\u00e9t\u00e9.txt", ""}, {"", "\"q\".txt"},
		{"a//b/./c", ""}, {"", "dir/sub/name.txt"}, {"\u202etxt.exe", ""},
	} {
		f.Add(s[0], s[1])
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, p, name string) {
		w, a := e.do(t, multipartReq(t, "AddWorkspaceFile", [][2]string{{"Path", p}, {"file", ""}}, name, []byte("x")))
		if w.Code >= 500 {
			t.Fatalf("Path %q, file name %q: %d %s", p, name, w.Code, w.Body)
		}
		if w.Code != http.StatusOK {
			return
		}
		var d struct{ Entry struct{ Path string } }
		if err := json.Unmarshal(a.Data, &d); err != nil || d.Entry.Path == "" {
			t.Fatalf("entry %s: %v", a.Data, err)
		}
		got := httptest.NewRequest(http.MethodGet, Prefix+"GetWorkspaceFileContent?FilePath="+url.QueryEscape(d.Entry.Path), nil)
		if w, _ := e.do(t, got); w.Code != http.StatusOK || w.Body.String() != "x" {
			t.Fatalf("Path %q, file name %q: stored as %q, which reads %d %q", p, name, d.Entry.Path, w.Code, w.Body)
		}
		if w, _ := e.do(t, jsonReq("DeleteWorkspaceFile", `{"Path":`+jsonString(d.Entry.Path)+`}`)); w.Code != http.StatusOK {
			t.Fatalf("Path %q, file name %q: stored as %q, which deletes %d %s", p, name, d.Entry.Path, w.Code, w.Body)
		}
	})
}
