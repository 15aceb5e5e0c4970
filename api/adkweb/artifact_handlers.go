package adkweb

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// ADK's artifact routes, on the artifacts the agents saved through the ADK bridge's
// artifact service (host.ArtifactKey: a version per save, the session's, or the user's
// for "user:" names). google-adk 1.x and 2.x serve them at the same paths; names may
// contain "/" (2.x's {artifact_name:path}), so everything after /artifacts/ is parsed
// here, the /versions... suffixes first, as ADK orders its routes.

func (h *Handler) registerArtifacts(r gin.IRouter) {
	g := r.Group("/apps/:app/users/:user/sessions/:session/artifacts")
	g.GET("", handle(h.listArtifacts))
	g.POST("", handle(h.saveArtifact))
	g.GET("/*rest", handle(h.getArtifact))
	g.DELETE("/*rest", handle(h.deleteArtifact))
}

// artifactVersion is ADK's ArtifactVersion (response_model_exclude_none).
type artifactVersion struct {
	Version        int64           `json:"version"`
	CanonicalURI   string          `json:"canonicalUri"`
	CustomMetadata json.RawMessage `json:"customMetadata"`
	CreateTime     float64         `json:"createTime"`
	MimeType       string          `json:"mimeType,omitempty"`
}

// artifactMeta is what the bridge stores as a version's meta (adk_artifacts.py).
type artifactMeta struct {
	CustomMetadata json.RawMessage `json:"customMetadata,omitempty"`
	Text           bool            `json:"text,omitempty"`
	DisplayName    string          `json:"displayName,omitempty"`
	FileData       json.RawMessage `json:"fileData,omitempty"`
}

// artifactBlob and artifactPart are genai's Blob and Part as FastAPI writes them
// (field order, URL-safe base64).
type artifactBlob struct {
	Data        string `json:"data"`
	DisplayName string `json:"displayName,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

type artifactPart struct {
	FileData   json.RawMessage `json:"fileData,omitempty"`
	InlineData *artifactBlob   `json:"inlineData,omitempty"`
	Text       *string         `json:"text,omitempty"`
}

func partOf(d session.Doc) artifactPart {
	var m artifactMeta
	_ = json.Unmarshal(d.Meta, &m) // a version without meta is inline data
	switch {
	case m.Text:
		s := string(d.Data)
		return artifactPart{Text: &s}
	case len(m.FileData) > 0:
		return artifactPart{FileData: m.FileData}
	}
	return artifactPart{InlineData: &artifactBlob{Data: base64.URLEncoding.EncodeToString(d.Data), DisplayName: m.DisplayName, MimeType: d.MimeType}}
}

func versionOf(key session.Key, d session.Doc) artifactVersion {
	var m artifactMeta
	_ = json.Unmarshal(d.Meta, &m)
	custom := m.CustomMetadata
	if len(custom) == 0 {
		custom = emptyObject()
	}
	uri := fmt.Sprintf("agentengine://apps/%s/users/%s/sessions/%s/artifacts/%s/versions/%d", key.App, key.User, key.ID, d.Key.Name, d.Version)
	if d.Key.Session == "" {
		uri = fmt.Sprintf("agentengine://apps/%s/users/%s/artifacts/%s/versions/%d", key.App, key.User, d.Key.Name, d.Version)
	}
	return artifactVersion{Version: d.Version, CanonicalURI: uri, CustomMetadata: custom,
		CreateTime: float64(d.CreatedAt.UnixMicro()) / 1e6, MimeType: d.MimeType}
}

// artifactPath is the parsed rest of an artifact route.
type artifactPath struct {
	name     string
	versions bool   // .../versions or .../versions/metadata
	version  string // .../versions/{version}[/metadata]
	metadata bool
}

func parseArtifactPath(rest string) artifactPath {
	rest = strings.TrimPrefix(rest, "/")
	if n, ok := strings.CutSuffix(rest, "/versions/metadata"); ok && n != "" {
		return artifactPath{name: n, versions: true, metadata: true}
	}
	if n, ok := strings.CutSuffix(rest, "/versions"); ok && n != "" {
		return artifactPath{name: n, versions: true}
	}
	meta := false
	if n, ok := strings.CutSuffix(rest, "/metadata"); ok {
		if i := strings.LastIndex(n, "/versions/"); i > 0 {
			rest, meta = n, true
		}
	}
	if i := strings.LastIndex(rest, "/versions/"); i > 0 && !strings.Contains(rest[i+len("/versions/"):], "/") {
		return artifactPath{name: rest[:i], version: rest[i+len("/versions/"):], metadata: meta}
	}
	return artifactPath{name: rest}
}

// artifactScope resolves the path's app, user and session id (the session need not
// exist, as with ADK's artifact service: its artifacts then are none).
func (h *Handler) artifactScope(c *gin.Context) (session.Key, *httpError) {
	app, user, aerr := h.scope(c)
	if aerr != nil {
		return session.Key{}, aerr
	}
	return session.Key{App: app, User: user, ID: c.Param("session")}, nil
}

// listArtifacts serves GET .../artifacts: the session's and the user's names, sorted.
func (h *Handler) listArtifacts(c *gin.Context) *httpError {
	key, aerr := h.artifactScope(c)
	if aerr != nil {
		return aerr
	}
	names, err := h.rt.ArtifactNames(c.Request.Context(), key)
	if err != nil {
		return fromHostError(h.log, "list artifacts", err)
	}
	if names == nil {
		names = []string{}
	}
	httpx.WriteJSON(c, http.StatusOK, names)
	return nil
}

// getArtifact serves the GET routes under .../artifacts/.
func (h *Handler) getArtifact(c *gin.Context) *httpError {
	key, aerr := h.artifactScope(c)
	if aerr != nil {
		return aerr
	}
	p := parseArtifactPath(c.Param("rest"))
	if p.name == "" {
		return detail(http.StatusNotFound, "Not Found")
	}
	ctx, dk := c.Request.Context(), host.ArtifactKey(key, p.name)
	if p.versions {
		vs, err := h.rt.DocVersions(ctx, dk)
		if err != nil && !errors.Is(err, host.ErrNotFound) {
			return fromHostError(h.log, "list artifact versions", err)
		}
		if p.metadata {
			out := make([]artifactVersion, 0, len(vs))
			for _, d := range vs {
				out = append(out, versionOf(key, d))
			}
			httpx.WriteJSON(c, http.StatusOK, out)
			return nil
		}
		out := make([]int64, 0, len(vs))
		for _, d := range vs {
			out = append(out, d.Version)
		}
		httpx.WriteJSON(c, http.StatusOK, out)
		return nil
	}
	version := int64(-1)
	switch {
	case p.version != "":
		if p.version != "latest" {
			v, err := strconv.ParseInt(p.version, 10, 64)
			if err != nil {
				return detail(http.StatusUnprocessableEntity, "Invalid version ID")
			}
			version = v
		}
	case c.Query("version") != "":
		v, err := strconv.ParseInt(c.Query("version"), 10, 64)
		if err != nil {
			return invalid("int_parsing", []any{"query", "version"}, "Input should be a valid integer, unable to parse string as an integer")
		}
		version = v
	}
	if version < -1 {
		return detail(http.StatusNotFound, "Artifact not found")
	}
	d, err := h.rt.GetDoc(ctx, dk, version)
	if errors.Is(err, host.ErrNotFound) {
		if p.metadata {
			return detail(http.StatusNotFound, "Artifact version not found")
		}
		return detail(http.StatusNotFound, "Artifact not found")
	}
	if err != nil {
		return fromHostError(h.log, "load artifact", err)
	}
	if p.metadata {
		httpx.WriteJSON(c, http.StatusOK, versionOf(key, d))
		return nil
	}
	httpx.WriteJSON(c, http.StatusOK, partOf(d))
	return nil
}

// deleteArtifact serves DELETE .../artifacts/{name}: every version; null, as ADK, also
// when there was none.
func (h *Handler) deleteArtifact(c *gin.Context) *httpError {
	key, aerr := h.artifactScope(c)
	if aerr != nil {
		return aerr
	}
	name := strings.TrimPrefix(c.Param("rest"), "/")
	if name == "" {
		return detail(http.StatusMethodNotAllowed, "Method Not Allowed")
	}
	err := h.rt.DeleteDoc(c.Request.Context(), host.ArtifactKey(key, name))
	if err != nil && !errors.Is(err, host.ErrNotFound) {
		return fromHostError(h.log, "delete artifact", err)
	}
	c.Data(http.StatusOK, "application/json", []byte("null"))
	return nil
}

// saveArtifactRequest is ADK's SaveArtifactRequest.
type saveArtifactRequest struct {
	Filename       *string         `json:"filename"`
	Artifact       json.RawMessage `json:"artifact"`
	CustomMetadata json.RawMessage `json:"custom_metadata"`
	CustomMeta     json.RawMessage `json:"customMetadata"`
}

// saveArtifact serves POST .../artifacts (google-adk 2.x): a new version of the named
// artifact of an existing session (a "user:" name: of the user), answered with its
// ArtifactVersion. The part is inline data, text or a file reference.
func (h *Handler) saveArtifact(c *gin.Context) *httpError {
	key, aerr := h.sessionKey(c)
	if aerr != nil {
		return aerr
	}
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	var req saveArtifactRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return notAnObject("body")
	}
	switch {
	case req.Filename == nil:
		return invalid("missing", []any{"body", "filename"}, "Field required")
	case len(req.Artifact) == 0:
		return invalid("missing", []any{"body", "artifact"}, "Field required")
	case *req.Filename == "":
		return detail(http.StatusBadRequest, "artifact filename must not be empty")
	}
	custom := req.CustomMetadata
	if len(custom) == 0 {
		custom = req.CustomMeta
	}
	if len(custom) > 0 && string(custom) != "null" && !isObject(custom) {
		return invalid("dict_type", []any{"body", "custom_metadata"}, "Input should be a valid dictionary")
	}
	doc, aerr := docOfPart(req.Artifact, custom)
	if aerr != nil {
		return aerr
	}
	ctx := c.Request.Context()
	if _, err := h.rt.Session(ctx, key); err != nil {
		if errors.Is(err, host.ErrNotFound) {
			return sessionNotFound(key.ID)
		}
		return fromHostError(h.log, "get session", err)
	}
	doc.Key = host.ArtifactKey(key, *req.Filename)
	v, err := h.rt.PutDoc(ctx, doc)
	if err != nil {
		return fromHostError(h.log, "save artifact", err)
	}
	d, err := h.rt.GetDoc(ctx, doc.Key, v)
	if err != nil {
		return fromHostError(h.log, "load artifact", err)
	}
	httpx.WriteJSON(c, http.StatusOK, versionOf(key, d))
	return nil
}

// docOfPart is a genai Part (camelCase or snake_case) as the bridge stores it.
func docOfPart(raw json.RawMessage, custom json.RawMessage) (session.Doc, *httpError) {
	var p struct {
		Text       *string         `json:"text"`
		InlineData json.RawMessage `json:"inlineData"`
		InlineSn   json.RawMessage `json:"inline_data"`
		FileData   json.RawMessage `json:"fileData"`
		FileSn     json.RawMessage `json:"file_data"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return session.Doc{}, notAnObject("body", "artifact")
	}
	m := artifactMeta{}
	if len(custom) > 0 && string(custom) != "null" {
		m.CustomMetadata = custom
	}
	var d session.Doc
	inline, file := firstOf(p.InlineData, p.InlineSn), firstOf(p.FileData, p.FileSn)
	switch {
	case len(inline) > 0:
		var b struct {
			Data        string `json:"data"`
			MimeType    string `json:"mimeType"`
			MimeSn      string `json:"mime_type"`
			DisplayName string `json:"displayName"`
			DisplaySn   string `json:"display_name"`
		}
		if json.Unmarshal(inline, &b) != nil {
			return d, notAnObject("body", "artifact", "inlineData")
		}
		data, ok := decodeBase64(b.Data)
		if !ok {
			return d, invalid("base64_decode", []any{"body", "artifact", "inlineData", "data"}, "Base64 decoding error")
		}
		d.Data, d.MimeType = data, firstNonEmpty(b.MimeType, b.MimeSn, "application/octet-stream")
		m.DisplayName = firstNonEmpty(b.DisplayName, b.DisplaySn)
	case p.Text != nil:
		d.Data, d.MimeType, m.Text = []byte(*p.Text), "text/plain", true
	case len(file) > 0 && isObject(file):
		var f struct {
			MimeType string `json:"mimeType"`
			MimeSn   string `json:"mime_type"`
		}
		_ = json.Unmarshal(file, &f)
		d.MimeType, m.FileData = firstNonEmpty(f.MimeType, f.MimeSn), file
	default:
		return d, detail(http.StatusBadRequest, "an artifact must be inline data, text or a file reference")
	}
	d.Meta, _ = json.Marshal(m)
	return d, nil
}

func firstOf(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 && string(a) != "null" {
		return a
	}
	if string(b) == "null" {
		return nil
	}
	return b
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// splitArtifactEvent is how ADK's /run_sse streams an event with both content and an
// artifactDelta: the content without the delta, then the delta without the content
// (ADK's dev UI renders the artifact from the second).
func splitArtifactEvent(ev Event) []Event {
	if ev.Content == nil || len(ev.Content.Parts) == 0 || !isObject(ev.Actions.ArtifactDelta) || string(ev.Actions.ArtifactDelta) == "{}" {
		return []Event{ev}
	}
	content, delta := ev, ev
	content.Actions.ArtifactDelta = emptyObject()
	delta.Content = nil
	return []Event{content, delta}
}
