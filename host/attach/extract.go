package attach

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Result statuses.
const (
	StatusOK      = "ok"
	StatusPartial = "partial"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Default limits (KsADK's: 20k characters of text, 600 of excerpt).
const (
	DefaultMaxTextChars = 20000
	ExcerptChars        = 600
)

// Result is the extraction result of one upload: an attachment_results item of the runner payload.
type Result struct {
	FileURI          string   `json:"file_uri"`
	Name             string   `json:"name"`
	MimeType         string   `json:"mime_type"`
	Kind             string   `json:"kind"`
	Status           string   `json:"status"`
	ExtractionMethod string   `json:"extraction_method"`
	Text             string   `json:"text"`
	TextExcerpt      string   `json:"text_excerpt"`
	Warnings         []string `json:"warnings"`
}

// extracted is the content-derived part of a Result: what the cache holds.
type extracted struct {
	Status   string   `json:"status"`
	Method   string   `json:"extraction_method"`
	Text     string   `json:"text"`
	Warnings []string `json:"warnings,omitempty"`
	// Transient results (a missing tool, a timeout) may differ next time: not cached.
	Transient bool `json:"-"`
}

func failed(method, format string, args ...any) extracted {
	return extracted{Status: StatusFailed, Method: method, Warnings: []string{fmt.Sprintf(format, args...)}}
}

func skipped(method, warning string, transient bool) extracted {
	return extracted{Status: StatusSkipped, Method: method, Warnings: []string{warning}, Transient: transient}
}

// result combines an upload's metadata with its extraction.
func result(m Meta, e extracted) Result {
	w := e.Warnings
	if w == nil {
		w = []string{}
	}
	return Result{
		FileURI: Ref(m.ID), Name: m.Name, MimeType: m.MimeType, Kind: m.Kind,
		Status: e.Status, ExtractionMethod: e.Method, Text: e.Text, TextExcerpt: prefix(e.Text, ExcerptChars), Warnings: w,
	}
}

// extract runs the extractor for the upload's type. Extractors parse untrusted input:
// a panic in one (or in a library under it) becomes a failed result, never a crash.
func (s *Store) extract(ctx context.Context, f fileReader, m Meta) (out extracted) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Warn("extractor panicked", "upload", m.ID, "mime", m.MimeType, "panic", v)
			out = failed("none", "the file could not be parsed: it looks corrupt or unsupported")
		}
	}()
	tb := newTextBuf(s.cfg.MaxTextChars)
	switch {
	case m.Kind == KindText:
		out = extractText(f, m.SizeBytes, tb)
	case m.MimeType == mimeHTML:
		out = extractHTML(ctx, f, m.SizeBytes, tb)
	case m.MimeType == mimePDF:
		out = s.extractPDF(ctx, f, m.SizeBytes, tb)
	case m.MimeType == mimeDocx || m.MimeType == mimeXlsx || m.MimeType == mimePptx:
		out = extractOffice(ctx, f, m.SizeBytes, m.MimeType, tb, officeLimits())
	case m.Kind == KindArchive:
		out = extractZip(ctx, f, m.SizeBytes, tb)
	case m.Kind == KindImage:
		out = s.ocr(ctx, f, m, tb)
	default:
		return skipped("none", fmt.Sprintf("no text extractor for %s files", m.MimeType), false)
	}
	if tb.truncated && out.Status == StatusOK {
		out.Status = StatusPartial
	}
	if tb.truncated {
		out.Warnings = append(out.Warnings, fmt.Sprintf("text truncated to %d characters", tb.max))
	}
	return out
}

// fileReader is what extractors read: an open upload.
type fileReader interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// textBuf accumulates extracted text up to a character cap.
type textBuf struct {
	b         strings.Builder
	n, max    int
	truncated bool
}

func newTextBuf(max int) *textBuf { return &textBuf{max: max} }

// add appends s (made valid UTF-8) and reports whether there is room for more.
func (t *textBuf) add(s string) bool {
	if t.truncated {
		return false
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := utf8.RuneCountInString(s)
	if t.n+n > t.max {
		s = prefix(s, t.max-t.n)
		n = t.max - t.n
		t.truncated = true
	}
	t.b.WriteString(s)
	t.n += n
	return !t.truncated
}

func (t *textBuf) full() bool { return t.truncated }

// String returns the text with surrounding blank space trimmed.
func (t *textBuf) String() string { return strings.TrimSpace(t.b.String()) }

// prefix returns the first n characters of s.
func prefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// ok is a successful extraction of tb's text.
func ok(method string, tb *textBuf, warnings ...string) extracted {
	return extracted{Status: StatusOK, Method: method, Text: tb.String(), Warnings: warnings}
}
