package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

type spillDoc struct {
	ID    string   `json:"id"`
	Text  string   `json:"text"`
	Parts []string `json:"parts"`
	HTML  string   `json:"html"`
}

// A spilled answer is byte for byte what WriteJSON writes.
func TestWriteJSONSpilledEqualsWriteJSON(t *testing.T) {
	long := func(unit string) string { return strings.Repeat(unit, spillMin/len(unit)+7) }
	for _, tt := range []struct {
		name string
		doc  spillDoc
	}{
		{"short strings stay inline", spillDoc{ID: "a", Text: "hi", Parts: []string{"x"}}},
		{"one long ascii", spillDoc{ID: "b", Text: long("x")}},
		{"escapes across chunks", spillDoc{ID: "c", Text: long("a\"b\\c\n\t\x01<>&")}},
		{"multibyte across chunks", spillDoc{ID: "d", Text: long("é€😀"), Parts: []string{long("ü"), "short", long("z")}}},
		{"invalid utf-8 and separators", spillDoc{ID: "e", Text: long("a\xffb\xe2\x82c\u2028\u2029"), HTML: long("<script>")}},
		{"a placeholder's look-alike is text", spillDoc{ID: "\x00spill-0000:0\x00", Text: long("\x00spill-")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := render(t, func(c *gin.Context) { WriteJSON(c, http.StatusOK, tt.doc) })
			s := NewSpill()
			d := tt.doc
			d.Text, d.HTML = s.Ref(d.Text), s.Ref(d.HTML)
			d.Parts = append([]string(nil), d.Parts...)
			for i := range d.Parts {
				d.Parts[i] = s.Ref(d.Parts[i])
			}
			got := render(t, func(c *gin.Context) { WriteJSONSpilled(c, http.StatusOK, d, s) })
			if !bytes.Equal(got, want) {
				t.Fatalf("spilled answer differs: %d bytes against %d", len(got), len(want))
			}
			var back spillDoc
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSpillRefKeepsShortStrings(t *testing.T) {
	var nilSpill *Spill
	if got := nilSpill.Ref(strings.Repeat("x", spillMin)); len(got) != spillMin {
		t.Fatal("a nil Spill swapped a string")
	}
	s := NewSpill()
	if got := s.Ref("short"); got != "short" || len(s.texts) != 0 {
		t.Fatalf("a short string was swapped: %q", got)
	}
}

func render(t *testing.T, write func(*gin.Context)) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	write(c)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	return rec.Body.Bytes()
}

// Any string, written a chunk at a time, is what the encoder writes for it whole.
func FuzzWriteJSONString(f *testing.F) {
	f.Add("plain", 3)
	f.Add("a\"b\\c\n\x00\u2028é\xff\xe2\x82", 1)
	f.Add(strings.Repeat("€", 40), 5)
	f.Fuzz(func(t *testing.T, unit string, reps int) {
		text := strings.Repeat(unit, min(max(reps, 0), spillChunk/max(len(unit), 1)*3))
		var want bytes.Buffer
		if err := NewEncoder(&want).Encode(text); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeJSONString(&got, text); err != nil {
			t.Fatal(err)
		}
		if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got.Bytes(), w) {
			t.Fatalf("%d bytes escaped differ from the encoder's", len(text))
		}
	})
}
