package files

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host/attach"
)

// fileData is UploadFile's answer (KsADK's camelCase field names).
type fileData struct {
	FileURI     string `json:"fileUri"`
	DisplayName string `json:"displayName"`
	MimeType    string `json:"mimeType"`
	SizeBytes   int64  `json:"sizeBytes"`
}

// uploadFile streams the multipart "file" field into the upload store.
func (h *handlers) uploadFile(c *gin.Context) {
	const action = "UploadFile"
	requestID(c)
	owner, e := h.user(c, c.Query("UserId"))
	if e != nil {
		fail(c, action, e)
		return
	}
	mr, e := multipartBody(c)
	if e != nil {
		fail(c, action, e)
		return
	}
	var meta *attach.Meta
	// A stored upload is removed again if the rest of the request turns out bad.
	defer func() {
		if meta != nil && c.Writer.Status() != http.StatusOK {
			_ = h.d.Uploads.Delete(meta.ID)
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
		if part.FormName() != "file" {
			continue // other fields (AgentId, SessionId) do not matter to the store
		}
		if meta != nil {
			fail(c, action, invalid("send one file per UploadFile request"))
			return
		}
		if !utf8.ValidString(part.FileName()) {
			// Its name is shown back to clients as JSON, where it would not survive.
			fail(c, action, invalid("the file name must be valid UTF-8"))
			return
		}
		src := &recordingReader{r: part}
		m, err := h.d.Uploads.PutAs(c.Request.Context(), owner, part.FileName(), part.Header.Get("Content-Type"), src, 0)
		switch {
		case errors.Is(err, attach.ErrTooLarge):
			fail(c, action, tooLarge("the file is larger than the %d MiB upload limit", h.d.Uploads.MaxUploadBytes()>>20))
			return
		case src.err != nil:
			fail(c, action, readErr(src.err))
			return
		case err != nil:
			fail(c, action, h.internal(action, err))
			return
		}
		meta = &m
	}
	if meta == nil {
		fail(c, action, missing("file"))
		return
	}
	ok(c, action, gin.H{"FileData": fileData{FileURI: meta.URI(), DisplayName: meta.Name, MimeType: meta.MimeType, SizeBytes: meta.SizeBytes}})
}

// recordingReader remembers a read error: the client's, apart from the store's.
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

// attachmentContent serves an upload's bytes.
func (h *handlers) attachmentContent(c *gin.Context) {
	const action = "AttachmentContent"
	requestID(c)
	ref := c.Query("FileUri")
	if ref == "" {
		fail(c, action, missing("FileUri"))
		return
	}
	user, e := h.user(c, c.Query("UserId"))
	if e != nil {
		fail(c, action, e)
		return
	}
	f, m, err := h.d.Uploads.OpenRef(ref)
	if err == nil && m.Owner != "" && m.Owner != user {
		// Another user's upload does not exist for the caller.
		f.Close()
		err = attach.ErrNotFound
	}
	switch {
	case errors.Is(err, attach.ErrInvalidRef):
		fail(c, action, invalid("FileUri must be ksadk-upload:// followed by 32 lowercase hex characters"))
		return
	case errors.Is(err, attach.ErrNotFound):
		fail(c, action, notFound("Attachment not found"))
		return
	case err != nil:
		fail(c, action, h.internal(action, err))
		return
	}
	defer f.Close()
	inline := m.MimeType == "application/pdf" || rasterImage(m.MimeType)
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", m.MimeType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Disposition", disposition(inline, m.Name))
	// An upload never changes under its id.
	hdr.Set("Cache-Control", "private, max-age=86400, immutable")
	if m.MimeType != "application/pdf" {
		// Opaque origin and nothing active, should a browser render it anyway. PDFs are
		// left out: browsers refuse to show PDFs in a sandboxed document.
		hdr.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'")
	}
	http.ServeContent(c.Writer, c.Request, "", m.CreatedAt.Truncate(time.Second), f)
}

// rasterImage reports image types a browser shows without running anything (not SVG).
func rasterImage(mimeType string) bool {
	switch mimeType {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon", "image/vnd.microsoft.icon":
		return true
	}
	return false
}

// disposition builds a Content-Disposition with an ASCII fallback and the UTF-8 name.
func disposition(inline bool, name string) string {
	kind := "attachment"
	if inline {
		kind = "inline"
	}
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '/' || r == ';' {
			return '_'
		}
		return r
	}, name)
	if ascii == "" {
		ascii = "file"
	}
	return fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`, kind, ascii, attrEncode(name))
}

// attrEncode percent-encodes everything but RFC 5987's attr-chars.
func attrEncode(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			sb.WriteByte(c)
			continue
		}
		fmt.Fprintf(&sb, "%%%02X", c)
	}
	return sb.String()
}
