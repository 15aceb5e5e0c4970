package attach

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"unicode/utf16"

	"golang.org/x/net/html"
)

// textReadBytes is how much of a text file is read for a character cap: at most four
// bytes per character in UTF-8, plus a BOM.
func textReadBytes(maxChars int) int64 { return int64(maxChars)*4 + 4 }

// extractText decodes a text file: UTF-8 (invalid bytes replaced) or UTF-16 with a BOM.
func extractText(f io.Reader, size int64, tb *textBuf) extracted {
	b, err := io.ReadAll(io.LimitReader(f, min(size, textReadBytes(tb.max))))
	if err != nil {
		return failed("text", "the file could not be read")
	}
	tb.add(decodeText(b))
	if int64(len(b)) < size {
		tb.truncated = true
	}
	return ok("text", tb)
}

// decodeText turns bytes into text, honouring UTF-8 and UTF-16 byte order marks.
func decodeText(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return string(b[3:])
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return decodeUTF16(b[2:], false)
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return decodeUTF16(b[2:], true)
	}
	return string(b)
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(u))
}

// htmlMaxToken bounds one HTML token (a giant attribute or comment is not text).
const htmlMaxToken = 1 << 20

// extractHTML keeps an HTML page's visible text: scripts, styles and templates are
// dropped, block elements become line breaks.
func extractHTML(ctx context.Context, f io.Reader, size int64, tb *textBuf) extracted {
	z := html.NewTokenizer(io.LimitReader(f, size))
	z.SetMaxBuf(htmlMaxToken)
	var sb strings.Builder
	limit := int(textReadBytes(tb.max))
	skip := 0
	var warnings []string
	for n := 0; sb.Len() < limit; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return failed("html", "extraction was stopped: %v", ctx.Err())
		}
		tt := z.Next()
		if tt == html.ErrorToken {
			if err := z.Err(); !errors.Is(err, io.EOF) {
				warnings = append(warnings, "the HTML could not be read to the end; text may be incomplete")
			}
			break
		}
		name, _ := z.TagName()
		switch tt {
		case html.StartTagToken:
			if hiddenElement(string(name)) {
				skip++
			}
			if blockElement(string(name)) {
				sb.WriteByte('\n')
			}
		case html.EndTagToken:
			if hiddenElement(string(name)) && skip > 0 {
				skip--
			}
			if blockElement(string(name)) {
				sb.WriteByte('\n')
			}
		case html.SelfClosingTagToken:
			if blockElement(string(name)) {
				sb.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				sb.WriteString(collapseSpace(string(z.Text())))
			}
		}
	}
	if sb.Len() >= limit {
		tb.truncated = true
	}
	tb.add(tidyLines(sb.String()))
	e := ok("html", tb, warnings...)
	if len(warnings) > 0 {
		e.Status = StatusPartial
	}
	return e
}

func hiddenElement(name string) bool {
	switch name {
	case "script", "style", "noscript", "template", "svg", "math", "iframe", "object":
		return true
	}
	return false
}

func blockElement(name string) bool {
	switch name {
	case "p", "div", "br", "hr", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
		"h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "title", "dd", "dt", "nav", "main", "aside", "td", "th":
		return true
	}
	return false
}

// collapseSpace turns runs of white space into single spaces.
func collapseSpace(s string) string {
	var sb strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			space = true
			continue
		}
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		space = false
		sb.WriteRune(r)
	}
	if space && sb.Len() > 0 {
		sb.WriteByte(' ')
	}
	if space && sb.Len() == 0 {
		return " "
	}
	return sb.String()
}

// tidyLines trims lines and keeps at most one blank line in a row.
func tidyLines(s string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
