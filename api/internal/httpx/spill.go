package httpx

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// Spill lets a JSON answer carry strings of megabytes without building the whole answer
// in memory first (encoding/json would hold it in a buffer grown by doubling, about
// three times the text at its peak): Ref swaps a long string for a placeholder, and
// WriteJSONSpilled writes the string, escaped, in the placeholder's place as the
// answer goes out. A nil *Spill swaps nothing.
type Spill struct {
	tag   string // random per answer: no text holds a placeholder by chance
	texts []string
}

// spillMin is the shortest string Ref swaps out: shorter ones cost less inline.
const spillMin = 64 << 10

// NewSpill returns a Spill for one answer.
func NewSpill() *Spill {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return &Spill{tag: "spill-" + hex.EncodeToString(b[:])}
}

// Ref returns text, or for a long one a placeholder WriteJSONSpilled replaces with it.
func (s *Spill) Ref(text string) string {
	if s == nil || len(text) < spillMin {
		return text
	}
	s.texts = append(s.texts, text)
	return "\x00" + s.tag + ":" + strconv.Itoa(len(s.texts)-1) + "\x00"
}

// WriteJSONSpilled writes v as WriteJSON does, with s's strings in their placeholders'
// places.
func WriteJSONSpilled(c *gin.Context, status int, v any, s *Spill) {
	if s == nil || len(s.texts) == 0 {
		WriteJSON(c, status, v)
		return
	}
	c.Render(status, spilledRender{v: v, s: s})
}

type spilledRender struct {
	v any
	s *Spill
}

func (r spilledRender) WriteContentType(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
}

func (r spilledRender) Render(w http.ResponseWriter) error {
	r.WriteContentType(w)
	return r.s.encode(w, r.v)
}

// encode writes v's JSON to w with the placeholders filled in.
func (s *Spill) encode(w io.Writer, v any) error {
	var skel bytes.Buffer
	if err := NewEncoder(&skel).Encode(v); err != nil {
		return err
	}
	return s.Fill(w, skel.Bytes())
}

// Len is how many strings Ref has swapped out so far (0 for a nil Spill): a JSON
// document built after it grew holds placeholders.
func (s *Spill) Len() int {
	if s == nil {
		return 0
	}
	return len(s.texts)
}

// Fill writes skeleton, JSON encoded with s's placeholders in it, to w with each
// placeholder replaced by its string, escaped.
func (s *Spill) Fill(w io.Writer, skeleton []byte) error {
	b := skeleton
	// A placeholder is a whole JSON string: "\u0000TAG:N\u0000".
	open := []byte(`"\u0000` + s.tag + ":")
	for {
		i := bytes.Index(b, open)
		if i < 0 {
			break
		}
		rest := b[i+len(open):]
		end := bytes.Index(rest, []byte(`\u0000"`))
		if end < 0 {
			return fmt.Errorf("spill: unterminated placeholder")
		}
		n, err := strconv.Atoi(string(rest[:end]))
		if err != nil || n < 0 || n >= len(s.texts) {
			return fmt.Errorf("spill: bad placeholder %q", rest[:end])
		}
		if _, err := w.Write(b[:i]); err != nil {
			return err
		}
		if err := writeJSONString(w, s.texts[n]); err != nil {
			return err
		}
		b = rest[end+len(`\u0000"`):]
	}
	_, err := w.Write(b)
	return err
}

// spillChunk is how much of a long string is escaped at a time.
const spillChunk = 32 << 10

// writeJSONString writes text as one JSON string, escaped as NewEncoder escapes it, a
// chunk at a time. Chunks end before a rune's first byte, so every UTF-8 sequence,
// valid or not, is escaped as it would be whole.
func writeJSONString(w io.Writer, text string) error {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	if _, err := io.WriteString(w, `"`); err != nil {
		return err
	}
	for len(text) > 0 {
		n := min(spillChunk, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		buf.Reset()
		if err := enc.Encode(text[:n]); err != nil {
			return err
		}
		// Encode wrote "chunk"\n: the quotes and the newline are not the chunk's.
		out := buf.Bytes()
		if _, err := w.Write(out[1 : len(out)-2]); err != nil {
			return err
		}
		text = text[n:]
	}
	_, err := io.WriteString(w, `"`)
	return err
}
