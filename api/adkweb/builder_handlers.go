package adkweb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host/workspace"
)

// ADK's agent builder edits the YAML files of an Agent Config project (an agent
// defined by root_agent.yaml). Its routes read and write those files inside the
// project's directory only, under the workspace's path rules (workspace.Clean: no
// absolute paths, no "..", no backslashes or control characters; every file operation
// goes through an os.Root, so a symlink cannot lead out either), and only .yaml/.yml
// files. As in google-adk, an upload whose YAML carries `args` or a code reference that
// leaves the app is refused, the builder's routes answer loopback clients only, and
// edits in progress ("tmp") live apart from the project until saved:
// .agentengine/builder/ in the project, a copy of its YAML files.

const (
	rootAgentYAML = "root_agent.yaml"
	// builderTmp is where the builder's unsaved edits live, inside the project.
	builderTmp = ".agentengine/builder"
	// maxBuilderFile bounds one uploaded YAML file.
	maxBuilderFile = 1 << 20
	remoteBuilder  = "This /dev endpoint only accepts requests from the machine running the server."
)

// Keys of an agent config whose values name Python code (google-adk's list).
var codeReferenceKeys = map[string]bool{
	"after_agent_callbacks": true, "after_model_callbacks": true, "after_tool_callbacks": true,
	"agent_class": true, "before_agent_callbacks": true, "before_model_callbacks": true,
	"before_tool_callbacks": true, "code": true, "input_schema": true, "model_code": true,
	"output_schema": true, "tools": true,
}

func (h *Handler) registerBuilder(r gin.IRouter) {
	r.GET("/dev/apps/:app/builder", handle(h.builderGet))
	r.GET("/builder/app/:app", handle(h.builderGet))
	r.POST("/dev/apps/:app/builder/save", handle(h.builderSave))
	r.POST("/builder/save", handle(h.builderSave)) // google-adk 1.x: the app is the files' first path element
	r.POST("/dev/apps/:app/builder/cancel", handle(h.builderCancel))
	r.POST("/builder/app/:app/cancel", handle(h.builderCancel))
}

// builderProject is the project directory of an Agent Config app, "" for an app whose
// agent is Python code (or that is not an ADK project).
func (h *Handler) builderProject(app string) string {
	dir := h.projects[app]
	if dir == "" {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(dir, rootAgentYAML)); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return dir
}

// refusal is a refused builder file, in google-adk's words (its messages are sentences).
type refusal string

func (r refusal) Error() string { return string(r) }

func refused(format string, args ...any) error { return refusal(fmt.Sprintf(format, args...)) }

// localOnly is google-adk's check: the builder's routes serve loopback clients only.
func localOnly(c *gin.Context) *httpError {
	if ip := net.ParseIP(c.RemoteIP()); ip != nil && ip.IsLoopback() {
		return nil
	}
	return detail(http.StatusForbidden, "%s", remoteBuilder)
}

// yamlPath checks a client path of a builder file: relative, inside, .yaml or .yml.
func yamlPath(p string) (string, error) {
	rel, err := workspace.Clean(strings.TrimLeft(p, "/"))
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%w: a file path is required", workspace.ErrInvalidPath)
	}
	switch strings.ToLower(path.Ext(rel)) {
	case ".yaml", ".yml":
		return rel, nil
	}
	return "", refused("File type not allowed: %q (allowed: .yaml, .yml)", rel)
}

// builderGet serves the builder's read: the YAML file at ?file_path= (root_agent.yaml
// by default) of the project, or of its unsaved edits with ?tmp=true; "" when there is
// none, the app is no Agent Config project or the path is refused (as ADK answers).
func (h *Handler) builderGet(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	if aerr := localOnly(c); aerr != nil {
		return aerr
	}
	tmp, aerr := boolQuery(c, "tmp")
	if aerr != nil {
		return aerr
	}
	c.Header("Cache-Control", "no-store")
	empty := func() *httpError {
		c.Data(http.StatusOK, "text/plain; charset=utf-8", nil)
		return nil
	}
	dir := h.builderProject(app)
	if dir == "" {
		return empty()
	}
	rel := rootAgentYAML
	if fp := c.Query("file_path"); fp != "" {
		var err error
		if rel, err = yamlPath(fp); err != nil {
			h.log.Debug("builder read refused", "app", app, "file_path", fp, "error", err)
			return empty()
		}
	}
	if tmp {
		if err := ensureBuilderTmp(dir); err != nil {
			h.log.Warn("builder: copy the project's YAML files", "app", app, "error", err)
			return empty()
		}
		dir = filepath.Join(dir, builderTmp)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return empty()
	}
	defer root.Close()
	body, err := readRegular(root, rel)
	if err != nil {
		return empty()
	}
	name := c.Query("file_path")
	if name == "" {
		name = app + ".yaml"
	}
	c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", path.Base(name)))
	c.Data(http.StatusOK, "application/x-yaml", body)
	return nil
}

// readRegular reads a regular file under root (a symlink out of it fails in os.Root).
func readRegular(root *os.Root, rel string) ([]byte, error) {
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxBuilderFile {
		return nil, fs.ErrInvalid
	}
	return root.ReadFile(rel)
}

// builderSave serves the builder's save: the uploaded YAML files (multipart "files",
// each named "<app>/<path>" or "<path>") are checked, all before any is written, then
// written to the unsaved edits (?tmp=true) or to the project, the unsaved edits first
// (then dropped). It answers true, or false when the disk refused a write; a refused
// file is 400 with the reason.
func (h *Handler) builderSave(c *gin.Context) *httpError {
	if aerr := localOnly(c); aerr != nil {
		return aerr
	}
	tmp, aerr := boolQuery(c, "tmp")
	if aerr != nil {
		return aerr
	}
	form, err := c.MultipartForm()
	if err != nil {
		return invalid("missing", []any{"body", "files"}, "Field required")
	}
	files := form.File["files"]
	if len(files) == 0 {
		return invalid("missing", []any{"body", "files"}, "Field required")
	}
	app := c.Param("app")
	if app == "" { // google-adk 1.x: the app is the first path element of every file
		for _, f := range files {
			first, _, ok := strings.Cut(strings.TrimLeft(uploadName(f), "/"), "/")
			if !ok || (app != "" && first != app) {
				return detail(http.StatusBadRequest, "Exactly one app name is required in the uploaded file names")
			}
			app = first
		}
	}
	if _, err := h.rt.ResolveAgent(app); err != nil {
		return appNotFound(app)
	}
	dir := h.builderProject(app)
	if dir == "" {
		return detail(http.StatusBadRequest, "%s is not an Agent Config project (it has no %s): the builder edits only those", app, rootAgentYAML)
	}
	type upload struct {
		rel  string
		body []byte
	}
	uploads := make([]upload, 0, len(files))
	for _, f := range files {
		raw := uploadName(f)
		rel, err := yamlPath(strings.TrimPrefix(strings.TrimLeft(raw, "/"), app+"/"))
		if err != nil {
			return detail(http.StatusBadRequest, "%s: %v", raw, err)
		}
		body, err := readUpload(f)
		if err != nil {
			return detail(http.StatusBadRequest, "%s: %v", raw, err)
		}
		if err := checkAgentYAML(body, app+"/"+rel, app); err != nil {
			return detail(http.StatusBadRequest, "%v", err)
		}
		uploads = append(uploads, upload{rel, body})
	}
	target := dir
	if tmp {
		target = filepath.Join(dir, builderTmp)
	} else if err := copyYAML(filepath.Join(dir, builderTmp), dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		h.log.Warn("builder: apply the unsaved edits", "app", app, "error", err)
		httpx.WriteJSON(c, http.StatusOK, false)
		return nil
	}
	for _, u := range uploads {
		if err := writeUnder(target, u.rel, u.body); err != nil {
			h.log.Warn("builder: write", "app", app, "file", u.rel, "error", err)
			httpx.WriteJSON(c, http.StatusOK, false)
			return nil
		}
	}
	if !tmp {
		if err := os.RemoveAll(filepath.Join(dir, builderTmp)); err != nil {
			httpx.WriteJSON(c, http.StatusOK, false)
			return nil
		}
	}
	httpx.WriteJSON(c, http.StatusOK, true)
	return nil
}

// builderCancel drops the unsaved edits: true, as ADK.
func (h *Handler) builderCancel(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	if aerr := localOnly(c); aerr != nil {
		return aerr
	}
	ok := true
	if dir := h.builderProject(app); dir != "" {
		ok = os.RemoveAll(filepath.Join(dir, builderTmp)) == nil
	}
	httpx.WriteJSON(c, http.StatusOK, ok)
	return nil
}

// uploadName is the file name as the client sent it: the builder's names are paths
// ("app/sub/agent.yaml"), which multipart's Filename cuts to the last element.
func uploadName(f *multipart.FileHeader) string {
	if _, params, err := mime.ParseMediaType(f.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		return params["filename"]
	}
	return f.Filename
}

func readUpload(f *multipart.FileHeader) ([]byte, error) {
	if f.Size > maxBuilderFile {
		return nil, fmt.Errorf("larger than %d bytes", maxBuilderFile)
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, maxBuilderFile+1))
}

// checkAgentYAML refuses what google-adk's builder refuses: `args` anywhere (it can run
// code) and code references that leave the app (a dotted name that is neither under
// the app nor one of ADK's built-in agents or tools).
func checkAgentYAML(body []byte, filename, app string) error {
	dec := yaml.NewDecoder(bytes.NewReader(body))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return refused("Invalid YAML in %q: %v", filename, err)
		}
		if err := walkAgentYAML(doc, filename, app); err != nil {
			return err
		}
	}
}

func walkAgentYAML(node any, filename, app string) error {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if k == "args" {
				return refused("Blocked key %q found in %q. The '%s' field is not allowed in builder uploads because it can execute arbitrary code.", k, filename, k)
			}
			if codeReferenceKeys[k] {
				for _, ref := range codeReferences(v) {
					if !allowedReference(ref, app) {
						return refused("Blocked code reference %q in %q. The '%s' field may only reference code under '%s' or an ADK built-in.", ref, filename, k, app)
					}
				}
			}
			if err := walkAgentYAML(v, filename, app); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range n {
			if err := walkAgentYAML(v, filename, app); err != nil {
				return err
			}
		}
	}
	return nil
}

func codeReferences(v any) []string {
	switch n := v.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, x := range n {
			out = append(out, codeReferences(x)...)
		}
		return out
	case map[string]any:
		if s, ok := n["name"].(string); ok {
			return []string{s}
		}
	}
	return nil
}

func allowedReference(ref, app string) bool {
	if !strings.Contains(ref, ".") {
		return true // resolved against ADK's own built-ins
	}
	for _, ns := range []string{"google.adk.agents.", "google.adk.tools."} {
		if rest, ok := strings.CutPrefix(ref, ns); ok {
			return !strings.Contains(rest, ".")
		}
	}
	return strings.HasPrefix(ref, app+".")
}

// ensureBuilderTmp starts the unsaved edits as a copy of the project's YAML files.
func ensureBuilderTmp(dir string) error {
	tmp := filepath.Join(dir, builderTmp)
	if _, err := os.Stat(tmp); err == nil {
		return nil
	}
	return copyYAML(dir, tmp)
}

// copyYAML copies the agent config files (*.yaml, *.yml but agentengine.yaml) under
// from to the same paths under to, leaving out dot directories, virtualenvs and the
// builder's own copy; symlinks are not followed.
func copyYAML(from, to string) error {
	src, err := os.OpenRoot(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return fs.WalkDir(src.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "__pycache__" || d.Name() == "venv") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || p == "agentengine.yaml" {
			return nil
		}
		if _, err := yamlPath(p); err != nil {
			return nil
		}
		body, err := readRegular(src, p)
		if err != nil {
			return err
		}
		return writeUnder(to, p, body)
	})
}

// writeUnder writes body at rel under dir (created), through an os.Root.
func writeUnder(dir, rel string, body []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return root.WriteFile(rel, body, 0o644)
}

// boolQuery reads an optional boolean query parameter as FastAPI does.
func boolQuery(c *gin.Context, name string) (bool, *httpError) {
	v, ok := c.GetQuery(name)
	if !ok {
		return false, nil
	}
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, invalid("bool_parsing", []any{"query", name}, "Input should be a valid boolean, unable to interpret input")
}
