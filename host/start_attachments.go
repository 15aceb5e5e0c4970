package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"strings"

	"github.com/agentengine/agentengine/session"
)

// attachment describes a file or image of a turn: an attachments item of the payload
// and, with its extraction summary, the data of an attachment_ref event.
type attachment struct {
	FileURI   string `json:"file_uri,omitempty"`
	Name      string `json:"name,omitempty"`
	MimeType  string `json:"mime_type,omitempty"`
	Kind      string `json:"kind"`      // image, text, document, archive, binary; image or file when unknown
	Transport string `json:"transport"` // inline (sent as a data: URL) or reference
	Source    string `json:"source"`    // input_image or input_file
	SizeBytes int64  `json:"size_bytes,omitempty"`
}

// attachmentRefData is the data of an attachment_ref event.
type attachmentRefData struct {
	attachment
	Status           string   `json:"status,omitempty"`
	ExtractionMethod string   `json:"extraction_method,omitempty"`
	TextExcerpt      string   `json:"text_excerpt,omitempty"`
	Warnings         []string `json:"warnings,omitempty"`
}

// turnFile is a file of a turn with its extraction result (nil without a store).
type turnFile struct {
	att    attachment
	result *AttachmentResult
}

// resolveFiles turns the image and file blocks of the input into attachments: inline
// data is stored as an upload (so follow-up turns can restore it), upload references
// are checked (another user's upload does not exist for the turn's user). Other URLs
// are passed on as references and never fetched.
func (rt *Runtime) resolveFiles(ctx context.Context, user string, blocks []session.ContentBlock) ([]turnFile, error) {
	var out []turnFile
	for _, b := range blocks {
		if b.Type != "input_image" && b.Type != "input_file" {
			continue
		}
		a, err := rt.resolveBlock(ctx, user, b)
		if err != nil {
			return nil, err
		}
		out = append(out, turnFile{att: a})
	}
	return out, nil
}

func (rt *Runtime) resolveBlock(ctx context.Context, user string, b session.ContentBlock) (attachment, error) {
	a := attachment{Kind: "file", Name: b.Filename, Transport: "reference", Source: b.Type}
	src := b.FileData
	if b.Type == "input_image" {
		a.Kind, src = "image", b.ImageURL
	}
	if src == "" {
		src = b.FileURL
	}
	if src == "" {
		src = b.FileID
	}
	if mime, data, ok := splitDataURL(src); ok {
		a.Transport, a.MimeType, a.SizeBytes = "inline", mime, int64(len(data)*3/4)
		if rt.attach == nil {
			return a, nil
		}
		dec := &decodeErr{r: dataReader(src, data)}
		m, err := rt.attach.Put(ctx, user, inlineName(b), mime, dec)
		if dec.err != nil {
			return a, clientErr(ErrInvalidInput, "input", "the inline data of %s is not valid: %v", describe(b), dec.err)
		}
		if err != nil {
			return a, attachErr("store inline file", err)
		}
		a.fill(m)
		return a, nil
	}
	a.FileURI = src
	if rt.attach == nil || !rt.attach.IsRef(src) {
		return a, nil
	}
	m, err := rt.attach.Stat(ctx, src)
	if err == nil && m.Owner != "" && m.Owner != user {
		return a, clientErr(ErrNotFound, "input", "upload %.80q not found", src)
	}
	if err != nil {
		return a, attachErr("resolve upload", err)
	}
	a.fill(m)
	return a, nil
}

func (a *attachment) fill(m AttachmentMeta) {
	a.FileURI, a.MimeType, a.Kind, a.SizeBytes = m.URI, m.MimeType, m.Kind, m.SizeBytes
	if a.Name == "" {
		a.Name = m.Name
	}
}

// attachErr passes a store's client errors on and wraps the rest as internal.
func attachErr(op string, err error) error {
	var ce *ClientError
	if errors.As(err, &ce) {
		return ce
	}
	return fmt.Errorf("%s: %w", op, err)
}

func describe(b session.ContentBlock) string {
	if b.Filename != "" {
		return fmt.Sprintf("%s %q", b.Type, b.Filename)
	}
	return b.Type
}

func inlineName(b session.ContentBlock) string {
	if b.Filename != "" {
		return b.Filename
	}
	if b.Type == "input_image" {
		return "image"
	}
	return "file"
}

// dataReader decodes a data: URL's payload: base64 (padded or not) or percent-encoded.
func dataReader(url, data string) io.Reader {
	meta, _, _ := strings.Cut(url, ",")
	if !strings.HasSuffix(strings.ToLower(meta), ";base64") {
		return percentReader(data)
	}
	enc := base64.StdEncoding
	if len(data)%4 != 0 {
		enc = base64.RawStdEncoding
		data = strings.TrimRight(data, "=")
	}
	return base64.NewDecoder(enc, strings.NewReader(data))
}

func percentReader(data string) io.Reader {
	s, err := neturl.PathUnescape(data)
	if err != nil {
		return errReader{err}
	}
	return strings.NewReader(s)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// decodeErr remembers a decoding error, which is the client's, apart from the store's.
type decodeErr struct {
	r   io.Reader
	err error
}

func (d *decodeErr) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		d.err = err
	}
	return n, err
}

// awaitResults waits (bounded by AttachmentWait) for the extraction of the turn's files.
func (rt *Runtime) awaitResults(ctx context.Context, files []turnFile) {
	if rt.attach == nil || len(files) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, rt.attachTTL)
	defer cancel()
	for i := range files {
		r := rt.fileResult(wctx, files[i].att)
		files[i].result = &r
	}
}

func (rt *Runtime) fileResult(ctx context.Context, a attachment) AttachmentResult {
	r := AttachmentResult{FileURI: a.FileURI, Name: a.Name, MimeType: a.MimeType, Kind: a.Kind,
		Status: "skipped", ExtractionMethod: "none", Warnings: []string{}}
	if !rt.attach.IsRef(a.FileURI) {
		r.Warnings = append(r.Warnings, "remote files are not fetched; only uploads and inline files are extracted")
		return r
	}
	got, err := rt.attach.Result(ctx, a.FileURI)
	switch {
	case err == nil:
		if a.Name != "" {
			got.Name = a.Name
		}
		return got
	case ctx.Err() != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("text extraction did not finish within %s", rt.attachTTL))
	case errors.As(err, new(*ClientError)):
		r.Status = "failed"
		r.Warnings = append(r.Warnings, "the uploaded file is no longer available")
	default:
		rt.log.Error("attachment extraction failed", "file", a.FileURI, "error", err)
		r.Status = "failed"
		r.Warnings = append(r.Warnings, "the file could not be read")
	}
	return r
}

// filesOfRefs is the session's latest attachment context: the files of the newest
// turn that had any, from the newest attachment_ref events (see historyCache).
func (rt *Runtime) filesOfRefs(ctx context.Context, evs []session.Event) []turnFile {
	if len(evs) == 0 {
		return nil
	}
	last := evs[len(evs)-1].InvocationID
	var files []turnFile
	for _, e := range evs {
		var d attachmentRefData
		if e.InvocationID != last || json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		files = append(files, turnFile{att: d.attachment})
	}
	rt.awaitResults(ctx, files)
	return files
}

func attachmentRefEvents(invocationID string, files []turnFile) []session.NewEvent {
	evs := make([]session.NewEvent, 0, len(files))
	for _, f := range files {
		d := attachmentRefData{attachment: f.att}
		if r := f.result; r != nil {
			d.Status, d.ExtractionMethod, d.TextExcerpt, d.Warnings = r.Status, r.ExtractionMethod, r.TextExcerpt, r.Warnings
		}
		evs = append(evs, session.NewEvent{InvocationID: invocationID, Type: session.TypeAttachmentRef,
			Author: "user", Data: session.MustJSON(d)})
	}
	return evs
}

// fileFields renders files as the payload's attachments and results lists.
func fileFields(files []turnFile) (atts, results []json.RawMessage) {
	atts, results = []json.RawMessage{}, []json.RawMessage{}
	for _, f := range files {
		atts = append(atts, session.MustJSON(f.att))
		if f.result != nil {
			results = append(results, session.MustJSON(f.result))
		}
	}
	return atts, results
}

// splitDataURL splits "data:<mime>[;params],<data>", as the runner payload's parts do (wire
// derives inline_data from the same URLs).
func splitDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mime, _, _ = strings.Cut(meta, ";")
	return mime, data, true
}
