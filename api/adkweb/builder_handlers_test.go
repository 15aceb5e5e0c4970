package adkweb

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// builderEnv serves the surface with "echo" an Agent Config project (root_agent.yaml in
// its directory) and "echo2" a code-defined one.
func builderEnv(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	dir, code := filepath.Join(root, "project"), filepath.Join(root, "code")
	for _, f := range []struct{ path, body string }{
		{filepath.Join(dir, "root_agent.yaml"), "name: echo\nsub_agents:\n  - config_path: sub/helper.yaml\n"},
		{filepath.Join(dir, "sub", "helper.yaml"), "name: helper\n"},
		{filepath.Join(dir, "agentengine.yaml"), "name: echo\n"},
		{filepath.Join(dir, ".venv", "x.yaml"), "not: copied\n"},
		{filepath.Join(root, "secret.yaml"), "secret: true\n"},
		{filepath.Join(code, "agent.py"), "root_agent = None\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "secret.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{
		{Name: "echo", Framework: "adk", Runner: client},
		{Name: "echo2", Framework: "adk", Runner: client},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{New(Config{Runtime: rt, Projects: map[string]string{"echo": dir, "echo2": code}})}})
	return apitest.Serve(t, r, rt, stop).URL, dir
}

func upload(t *testing.T, url string, files map[string]string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for name, content := range files {
		fw, err := w.CreateFormFile("files", name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	resp, err := http.Post(url, w.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSpace(b.String())
}

// TestBuilderReadsInsideTheProjectOnly: the builder reads the project's YAML files, and
// "" for anything outside it, not YAML, or of a code-defined project.
func TestBuilderReadsInsideTheProjectOnly(t *testing.T) {
	url, _ := builderEnv(t)
	for _, tc := range []struct {
		path, want string
	}{
		{"/dev/apps/echo/builder", "name: echo\nsub_agents:"},
		{"/builder/app/echo", "name: echo\nsub_agents:"},
		{"/dev/apps/echo/builder?file_path=sub/helper.yaml", "name: helper"},
		{"/dev/apps/echo/builder?file_path=/sub/helper.yaml", "name: helper"},
		{"/dev/apps/echo/builder?file_path=../secret.yaml", ""},
		{"/dev/apps/echo/builder?file_path=sub/../../secret.yaml", ""},
		{"/dev/apps/echo/builder?file_path=%2e%2e/secret.yaml", ""},
		{"/dev/apps/echo/builder?file_path=sub%5c..%5c..%5csecret.yaml", ""},
		{"/dev/apps/echo/builder?file_path=link.yaml", ""}, // a symlink out of the project
		{"/dev/apps/echo/builder?file_path=agent.py", ""},
		{"/dev/apps/echo/builder?file_path=" + url + "/x.yaml", ""},
		{"/dev/apps/echo2/builder", ""},
		{"/dev/apps/echo/builder?tmp=true", "name: echo\nsub_agents:"},
	} {
		status, h, b := apitest.Do(t, url, "GET", tc.path, "")
		if status != 200 || !strings.HasPrefix(string(b), tc.want) || (tc.want == "" && len(b) != 0) {
			t.Errorf("%s: %d %q, want %q", tc.path, status, b, tc.want)
		}
		if tc.want != "" && h.Get("Content-Type") != "application/x-yaml" {
			t.Errorf("%s: content type %q", tc.path, h.Get("Content-Type"))
		}
	}
	for _, p := range []string{"/dev/apps/nope/builder", "/builder/app/nope"} {
		if status, _, _ := apitest.Do(t, url, "GET", p, ""); status != 404 {
			t.Errorf("%s: %d, want 404", p, status)
		}
	}
	if status, _, _ := apitest.Do(t, url, "GET", "/dev/apps/echo/builder?tmp=maybe", ""); status != 422 {
		t.Errorf("tmp=maybe: %d, want 422", status)
	}
}

// TestBuilderSaves: uploads go to the unsaved edits with tmp=true, to the project on save
// (with the edits), and are refused, nothing written, when a path leaves the project, is
// not YAML, or the YAML can run code outside the app.
func TestBuilderSaves(t *testing.T) {
	url, dir := builderEnv(t)
	read := func(rel string) string {
		b, _ := os.ReadFile(filepath.Join(dir, rel))
		return string(b)
	}
	if status, b := upload(t, url+"/dev/apps/echo/builder/save?tmp=true", map[string]string{"echo/sub/helper.yaml": "name: helper2\n"}); status != 200 || b != "true" {
		t.Fatalf("tmp save: %d %s", status, b)
	}
	if read("sub/helper.yaml") != "name: helper\n" {
		t.Fatal("a tmp save wrote the project")
	}
	if _, _, b := apitest.Do(t, url, "GET", "/dev/apps/echo/builder?file_path=sub/helper.yaml&tmp=true", ""); string(b) != "name: helper2\n" {
		t.Fatalf("tmp read = %q", b)
	}
	if status, b := upload(t, url+"/dev/apps/echo/builder/save", map[string]string{"root_agent.yaml": "name: echo\ndescription: saved\n"}); status != 200 || b != "true" {
		t.Fatalf("save: %d %s", status, b)
	}
	if read("root_agent.yaml") != "name: echo\ndescription: saved\n" || read("sub/helper.yaml") != "name: helper2\n" {
		t.Fatalf("after save: %q %q", read("root_agent.yaml"), read("sub/helper.yaml"))
	}
	if _, err := os.Stat(filepath.Join(dir, builderTmp)); !os.IsNotExist(err) {
		t.Fatalf("the unsaved edits stay after a save: %v", err)
	}
	// google-adk 1.x's route: the app is the files' first path element.
	if status, b := upload(t, url+"/builder/save", map[string]string{"echo/new.yaml": "name: new\n"}); status != 200 || b != "true" || read("new.yaml") != "name: new\n" {
		t.Fatalf("1.x save: %d %s %q", status, b, read("new.yaml"))
	}
	// Cancel drops the unsaved edits.
	upload(t, url+"/dev/apps/echo/builder/save?tmp=true", map[string]string{"root_agent.yaml": "name: dropped\n"})
	if status, _, b := apitest.Do(t, url, "POST", "/dev/apps/echo/builder/cancel", "{}"); status != 200 || strings.TrimSpace(string(b)) != "true" {
		t.Fatalf("cancel: %d %s", status, b)
	}
	if _, err := os.Stat(filepath.Join(dir, builderTmp)); !os.IsNotExist(err) || read("root_agent.yaml") != "name: echo\ndescription: saved\n" {
		t.Fatalf("after cancel: %v %q", err, read("root_agent.yaml"))
	}

	for _, tc := range []struct {
		url   string
		files map[string]string
		want  string
	}{
		{"/dev/apps/echo/builder/save", map[string]string{"../escape.yaml": "name: x\n"}, "invalid path"},
		{"/dev/apps/echo/builder/save", map[string]string{"echo/../../escape.yaml": "name: x\n"}, "invalid path"},
		{"/dev/apps/echo/builder/save", map[string]string{"/abs.yaml": "name: x\n", "ok.yaml": "name: y\n"}, ""},
		{"/dev/apps/echo/builder/save", map[string]string{"agent.py": "import os\n"}, "File type not allowed"},
		{"/dev/apps/echo/builder/save", map[string]string{"a.yaml": "tools:\n  - name: os.system\n"}, "Blocked code reference"},
		{"/dev/apps/echo/builder/save", map[string]string{"a.yaml": "tools:\n  - name: google.adk.tools.google_search\n"}, ""},
		{"/dev/apps/echo/builder/save", map[string]string{"a.yaml": "tools:\n  - name: google.adk.tools.x.y\n"}, "Blocked code reference"},
		{"/dev/apps/echo/builder/save", map[string]string{"a.yaml": "name: x\nmodel_code:\n  args: [1]\n"}, "Blocked key"},
		{"/dev/apps/echo/builder/save", map[string]string{"a.yaml": "name: [\n"}, "Invalid YAML"},
		{"/builder/save", map[string]string{"echo/a.yaml": "name: a\n", "echo2/b.yaml": "name: b\n"}, "Exactly one app name"},
		{"/dev/apps/echo2/builder/save", map[string]string{"root_agent.yaml": "name: x\n"}, "echo2 is not an Agent Config project"},
	} {
		status, b := upload(t, url+tc.url, tc.files)
		if tc.want == "" {
			if status != 200 || b != "true" {
				t.Errorf("%v: %d %s, want true", tc.files, status, b)
			}
			continue
		}
		if status != 400 || !strings.Contains(b, tc.want) {
			t.Errorf("%v: %d %s, want 400 %q", tc.files, status, b, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.yaml")); !os.IsNotExist(err) {
		t.Fatal("a traversal wrote outside the project")
	}
	if read("abs.yaml") != "name: x\n" {
		t.Fatal("a leading / is relative to the project, as in google-adk")
	}
	if status, _, _ := apitest.Do(t, url, "POST", "/dev/apps/echo/builder/save", ""); status != 422 {
		t.Errorf("no files: %d, want 422", status)
	}
}

// TestBuilderIsLocalOnly: as google-adk's, the builder's routes refuse remote clients.
func TestBuilderIsLocalOnly(t *testing.T) {
	h := New(Config{Runtime: newEnv(t).rt, Projects: map[string]string{"echo": t.TempDir()}})
	r := api.NewRouter(api.Config{Runtime: h.rt, Surfaces: []api.Surface{h}})
	for _, p := range []string{"/dev/apps/echo/builder", "/builder/app/echo"} {
		req := httptest.NewRequest("GET", p, nil)
		req.RemoteAddr = "192.0.2.1:5555"
		req.Host = "localhost"
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "only accepts requests from the machine") {
			t.Errorf("%s from a remote client: %d %s", p, w.Code, w.Body)
		}
	}
}
