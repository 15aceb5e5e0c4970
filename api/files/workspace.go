package files

import (
	"errors"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host/workspace"
)

// PreviewCSP is the policy of workspace content: a sandbox without allow-same-origin
// gives previewed HTML an opaque origin, so its scripts can run but cannot reach this
// server, its cookies or storage; nothing may be fetched.
const PreviewCSP = "sandbox allow-scripts; default-src 'none'; img-src data: blob:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'none'"

// rootLabel names the workspace root in listings (the local path is not disclosed).
const rootLabel = "workspace"

// workspaceParams reads an action's parameters and the workspace its AgentId names.
func (h *handlers) workspaceParams(c *gin.Context) (params, *workspace.Workspace, *apiError) {
	p, e := readParams(c)
	if e != nil {
		return nil, nil, e
	}
	agent, e := p.str("AgentId")
	if e != nil {
		return nil, nil, e
	}
	user, e := p.str("UserId")
	if e != nil {
		return nil, nil, e
	}
	ws, e := h.workspaceFor(c, agent, user)
	return p, ws, e
}

func (h *handlers) listWorkspace(c *gin.Context) {
	const action = "ListWorkspaceFiles"
	requestID(c)
	p, ws, e := h.workspaceParams(c)
	if e != nil {
		fail(c, action, e)
		return
	}
	dir, e := p.str("Path")
	if e != nil {
		fail(c, action, e)
		return
	}
	recursive, e := p.boolean("Recursive")
	if e != nil {
		fail(c, action, e)
		return
	}
	rel, err := workspace.Clean(dir)
	if err != nil {
		fail(c, action, h.fromWorkspace(action, err))
		return
	}
	entries, truncated, err := ws.List(c.Request.Context(), rel, recursive)
	if err != nil {
		fail(c, action, h.fromWorkspace(action, err))
		return
	}
	ok(c, action, gin.H{"Root": rootLabel, "Path": rel, "Entries": entries, "Truncated": truncated})
}

func (h *handlers) workspaceContent(c *gin.Context) {
	const action = "GetWorkspaceFileContent"
	requestID(c)
	ws, e := h.workspaceFor(c, c.Query("AgentId"), c.Query("UserId"))
	if e != nil {
		fail(c, action, e)
		return
	}
	name := c.Query("FilePath")
	if name == "" {
		fail(c, action, missing("FilePath"))
		return
	}
	f, ent, err := ws.Open(name)
	if err != nil {
		fail(c, action, h.fromWorkspace(action, err))
		return
	}
	defer f.Close()
	ct := contentType(ent.Path, f)
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", ct)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Disposition", disposition(true, ent.Name))
	if !strings.HasPrefix(ct, "application/pdf") {
		// PDFs are left out: browsers refuse to show PDFs in a sandboxed document.
		hdr.Set("Content-Security-Policy", PreviewCSP)
	}
	fi, err := f.Stat()
	if err != nil {
		fail(c, action, h.internal(action, err))
		return
	}
	http.ServeContent(c.Writer, c.Request, "", fi.ModTime(), f)
}

// contentType is a workspace file's type: by extension, else sniffed; text gets UTF-8.
func contentType(name string, f io.ReadSeeker) string {
	ct := workspace.MimeType(name)
	if ct == "application/octet-stream" {
		var head [512]byte
		n, _ := io.ReadFull(f, head[:])
		_, _ = f.Seek(0, io.SeekStart)
		ct = http.DetectContentType(head[:n])
	}
	if strings.HasPrefix(ct, "text/") && !strings.Contains(ct, "charset") {
		ct += "; charset=utf-8"
	}
	return ct
}

// addWorkspaceFile streams the multipart "file" to Path. Path and AgentId may come in
// the query or as form fields, before or after the file: the file is staged in the
// workspace and moved once the whole body has been read and checked.
func (h *handlers) addWorkspaceFile(c *gin.Context) {
	const action = "AddWorkspaceFile"
	requestID(c)
	target, agent, user := c.Query("Path"), c.Query("AgentId"), c.Query("UserId")
	mr, e := multipartBody(c)
	if e != nil {
		fail(c, action, e)
		return
	}
	var staged *workspace.Staged
	var stagedIn *workspace.Workspace
	defer func() {
		if staged != nil {
			staged.Discard()
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(c, action, readErr(err))
			return
		}
		switch part.FormName() {
		case "Path", "AgentId", "UserId":
			v, e := formValue(part)
			if e != nil {
				fail(c, action, e)
				return
			}
			switch part.FormName() {
			case "Path":
				target = v
			case "AgentId":
				agent = v
			default:
				user = v
			}
		case "file":
			if staged != nil {
				fail(c, action, invalid("send one file per AddWorkspaceFile request"))
				return
			}
			// A path known already is checked before a byte of the file is stored.
			if target != "" {
				if _, err := workspace.Clean(target); err != nil {
					fail(c, action, h.fromWorkspace(action, err))
					return
				}
			}
			ws, e := h.workspaceFor(c, agent, user)
			if e != nil {
				fail(c, action, e)
				return
			}
			src := &recordingReader{r: part}
			st, err := ws.Stage(c.Request.Context(), src)
			switch {
			case errors.Is(err, workspace.ErrTooLarge):
				fail(c, action, tooLarge("the file is larger than the %d MiB workspace upload limit", ws.MaxUploadBytes()>>20))
				return
			case src.err != nil:
				fail(c, action, readErr(src.err))
				return
			case err != nil:
				fail(c, action, h.internal(action, err))
				return
			}
			staged, stagedIn = st, ws
			if target == "" && part.FileName() != "" {
				target = path.Base(part.FileName())
			}
		}
	}
	if staged == nil {
		fail(c, action, missing("file"))
		return
	}
	if target == "" {
		fail(c, action, missing("Path"))
		return
	}
	if ws, e := h.workspaceFor(c, agent, user); e != nil || ws != stagedIn {
		fail(c, action, invalid("AgentId and UserId must come before the file"))
		return
	}
	ent, err := staged.Commit(target)
	staged = nil
	if err != nil {
		fail(c, action, h.fromWorkspace(action, err))
		return
	}
	ok(c, action, gin.H{"Entry": ent})
}

func (h *handlers) deleteWorkspaceFile(c *gin.Context) {
	const action = "DeleteWorkspaceFile"
	requestID(c)
	p, ws, e := h.workspaceParams(c)
	if e != nil {
		fail(c, action, e)
		return
	}
	target, e := p.str("Path")
	if e != nil {
		fail(c, action, e)
		return
	}
	if target == "" {
		fail(c, action, missing("Path"))
		return
	}
	if err := ws.Delete(target); err != nil {
		fail(c, action, h.fromWorkspace(action, err))
		return
	}
	ok(c, action, gin.H{"Deleted": true})
}

func (h *handlers) exportWorkspace(c *gin.Context) {
	const action = "ExportWorkspaceZip"
	requestID(c)
	ws, e := h.workspaceFor(c, c.Query("AgentId"), c.Query("UserId"))
	if e != nil {
		fail(c, action, e)
		return
	}
	dir := c.DefaultQuery("Path", ".")
	// Errors are answered before the stream starts; one in the middle can only cut
	// the zip short (its missing central directory shows the client it is broken).
	ent, err := ws.Stat(dir)
	if err != nil {
		fail(c, action, h.fromWorkspace(action, err))
		return
	}
	name := "workspace.zip"
	if ent.Path != "." {
		name = "workspace-" + strings.ReplaceAll(ent.Path, "/", "-") + ".zip"
	}
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", "application/zip")
	hdr.Set("Content-Disposition", disposition(false, name))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return
	}
	if err := ws.ExportZip(c.Request.Context(), ent.Path, c.Writer); err != nil {
		h.d.Logger.Warn("workspace export ended early", "path", ent.Path, "error", err)
		c.Abort()
	}
}
