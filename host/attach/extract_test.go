package attach

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// putResult uploads data and waits for its extraction.
func putResult(t *testing.T, s *Store, name, declared string, data []byte) (Meta, Result) {
	t.Helper()
	m, err := s.Put(context.Background(), name, declared, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := s.Result(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	return m, r
}

func TestSniff(t *testing.T) {
	s, _ := newStore(t, nil)
	png := renderPNG(t, "x")
	for _, tc := range []struct {
		name, declared string
		data           []byte
		mime, kind     string
	}{
		{"a.png", "", png, "image/png", KindImage},
		{"a.txt", "text/plain", png, "image/png", KindImage}, // declared type is advisory
		{"evil.png", "image/png", []byte("just text"), "text/plain", KindText},
		{"doc.pdf", "", makePDF("hi"), mimePDF, KindDocument},
		{"x.bin", "application/octet-stream", makePDF("hi"), mimePDF, KindDocument},
		{"a.docx", "", makeDocx(t, "p"), mimeDocx, KindDocument},
		{"a.xlsx", "", makeXlsx(t), mimeXlsx, KindDocument},
		{"a.pptx", "", makePptx(t), mimePptx, KindDocument},
		{"a.docx", mimeDocx, makeZip(t, map[string]string{"a.txt": "x"}), mimeZip, KindArchive},
		{"p.html", "", []byte("<!DOCTYPE html><html><body>x</body></html>"), mimeHTML, KindDocument},
		{"n.md", "", []byte("# notes"), "text/markdown", KindText},
		{"d.csv", "", []byte("a,b\n1,2"), "text/csv", KindText},
		{"d.json", "", []byte(`{"a":1}`), "application/json", KindText},
		{"noext", "text/csv", []byte("a,b"), "text/csv", KindText},
		{"x.exe", "text/plain", []byte{0x4d, 0x5a, 0, 0, 1, 2, 3, 0xff}, "application/octet-stream", KindBinary},
	} {
		m, err := s.Put(context.Background(), tc.name, tc.declared, bytes.NewReader(tc.data), 0)
		if err != nil {
			t.Fatal(err)
		}
		if m.MimeType != tc.mime || m.Kind != tc.kind {
			t.Errorf("%s (declared %q): got %s/%s, want %s/%s", tc.name, tc.declared, m.MimeType, m.Kind, tc.mime, tc.kind)
		}
	}
}

func TestExtractors(t *testing.T) {
	s, _ := newStore(t, func(c *Config) { c.LookPath = noTools })
	long := strings.Repeat("abcdefghij", 3000) // 30k characters
	for _, tc := range []struct {
		name    string
		data    []byte
		status  string
		method  string
		want    []string
		notWant []string
		warn    string
	}{
		{"n.txt", []byte("plain text\xff here"), StatusOK, "text", []string{"plain text\uFFFD here"}, nil, ""},
		{"u16.txt", []byte{0xFF, 0xFE, 'h', 0, 'i', 0}, StatusOK, "text", []string{"hi"}, nil, ""},
		{"n.md", []byte("# Heading\n- item"), StatusOK, "text", []string{"# Heading", "- item"}, nil, ""},
		{"d.csv", []byte("name,amount\nrent,100\n"), StatusOK, "text", []string{"rent,100"}, nil, ""},
		{"d.json", []byte(`{"risk":"supply"}`), StatusOK, "text", []string{`"risk":"supply"`}, nil, ""},
		{"p.html", []byte(`<!DOCTYPE html><html><head><title>T</title><style>.a{color:red}</style>
			<script>alert("x")</script></head><body><h1>Report</h1><p>First   para</p><noscript>ns</noscript><p>Second</p></body></html>`),
			StatusOK, "html", []string{"Report", "First para", "Second"}, []string{"alert", "color:red", "ns"}, ""},
		{"a.docx", makeDocx(t, "Risk one", "Risk two"), StatusOK, "docx", []string{"Risk one\nRisk two"}, nil, ""},
		{"a.xlsx", makeXlsx(t), StatusOK, "xlsx", []string{"## Sheet: Budget", "Item\tCost", "Servers\t\t1200", "Total"}, nil, ""},
		{"a.pptx", makePptx(t), StatusOK, "pptx", []string{"## Slide 1\nIntro slide", "## Slide 2\nSecond slide", "## Slide 10\nTenth slide"}, nil, ""},
		{"a.zip", makeZip(t, map[string]string{"notes.txt": "zipped notes", "../evil.txt": "no", "inner.zip": "PK", "page.html": "<p>hi <b>there</b></p>"}),
			StatusPartial, "zip", []string{"notes.txt", "zipped notes", "hi there"}, []string{"\nno\n"}, "unsafe path"},
		{"doc.pdf", makePDF("Risk one: supply chain"), StatusOK, "pdf", []string{"Risk one: supply chain"}, nil, ""},
		{"long.txt", []byte(long), StatusPartial, "text", []string{"abcdefghij"}, nil, "truncated to 20000"},
		{"x.bin", []byte{0, 1, 2, 3, 0xff, 0xfe}, StatusSkipped, "none", nil, nil, "no text extractor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r := putResult(t, s, tc.name, "", tc.data)
			if r.Status != tc.status || r.ExtractionMethod != tc.method {
				t.Fatalf("status %s/%s, want %s/%s (warnings %v, text %.200q)", r.Status, r.ExtractionMethod, tc.status, tc.method, r.Warnings, r.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("text %.300q lacks %q", r.Text, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(r.Text, w) {
					t.Errorf("text %.300q has %q", r.Text, w)
				}
			}
			if tc.warn != "" && !strings.Contains(strings.Join(r.Warnings, "|"), tc.warn) {
				t.Errorf("warnings %v lack %q", r.Warnings, tc.warn)
			}
			if n := len([]rune(r.Text)); n > DefaultMaxTextChars {
				t.Errorf("text has %d characters", n)
			}
			if r.TextExcerpt != prefix(r.Text, ExcerptChars) || len([]rune(r.TextExcerpt)) > ExcerptChars {
				t.Errorf("excerpt %q is not the text's first %d characters", r.TextExcerpt, ExcerptChars)
			}
			if r.Warnings == nil || !strings.HasPrefix(r.FileURI, Scheme) || r.Name != tc.name {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestCorruptInputsFailCleanly(t *testing.T) {
	for _, isolate := range []bool{false, true} {
		s, _ := newStore(t, func(c *Config) { c.IsolatePDF = isolate })
		good := makePDF("hello")
		for name, data := range map[string][]byte{
			"truncated.pdf": good[:len(good)/2],
			"garbage.pdf":   append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0xde, 0xad}, 500)...),
			"badxref.pdf":   bytes.Replace(good, []byte("xref\n0 6"), []byte("xref\n0 9999999999"), 1),
			"cycle.pdf":     bytes.Replace(good, []byte("/Kids [3 0 R]"), []byte("/Kids [2 0 R]"), 1),
			"v2.pdf":        append([]byte("%PDF-2.0\n"), good[9:]...),
			"hugesize.pdf":  bytes.Replace(good, []byte("/Size 6"), []byte("/Size 9000000000"), 1),
		} {
			start := time.Now()
			_, r := putResult(t, s, name, "application/pdf", data)
			t.Logf("isolate=%v %s: %s %v in %v", isolate, name, r.Status, r.Warnings, time.Since(start))
			if r.Status != StatusFailed && r.Status != StatusOK {
				t.Errorf("isolate=%v %s: status %s", isolate, name, r.Status)
			}
			if r.Status == StatusFailed && (len(r.Warnings) == 0 || r.Warnings[0] == "") {
				t.Errorf("isolate=%v %s: failed without a warning", isolate, name)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("isolate=%v %s took %v", isolate, name, time.Since(start))
			}
			if (name == "truncated.pdf" || name == "cycle.pdf") && r.Status != StatusFailed {
				t.Errorf("isolate=%v truncated PDF: %+v", isolate, r)
			}
		}
		_, r := putResult(t, s, "broken.docx", "", append(makeDocx(t, "x")[:40], 0, 0))
		if r.Status != StatusFailed || r.Kind != KindArchive {
			// A zip cut short no longer reads as a document: it is a corrupt archive.
			t.Errorf("corrupt docx: %+v", r)
		}
	}
}

func TestPDFWorker(t *testing.T) {
	s, _ := newStore(t, func(c *Config) { c.IsolatePDF = true })
	_, r := putResult(t, s, "doc.pdf", "", makePDF("Isolated text"))
	if r.Status != StatusOK || !strings.Contains(r.Text, "Isolated text") {
		t.Fatalf("worker result %+v", r)
	}
}

func TestZipBombGuards(t *testing.T) {
	ctx := context.Background()
	many := map[string]string{}
	for i := range 60 {
		many["f"+strconv.Itoa(i)+".txt"] = "x"
	}
	data := makeZip(t, many)
	if _, err := openZip(bytes.NewReader(data), int64(len(data)), zipLimits{50, 1 << 20, 1 << 20}); err == nil || !strings.Contains(err.Error(), "too many entries") {
		t.Fatalf("60 entries with a bound of 50: %v", err)
	}
	// 1 MiB of markup compresses to a few KiB; reading stops at the part bound (a
	// broken document, read in part) and at the file's budget.
	doc := makeZip(t, map[string]string{
		"word/document.xml": `<w:document ` + wNS + `><w:body><w:p><w:r><w:t>start</w:t></w:r></w:p><!--` + strings.Repeat("0", 1<<20) + `--></w:body></w:document>`,
	})
	for _, lim := range []zipLimits{{10, 64 << 10, 1 << 30}, {10, 1 << 30, 64 << 10}} {
		tb := newTextBuf(DefaultMaxTextChars)
		e := extractOffice(ctx, bytes.NewReader(doc), int64(len(doc)), mimeDocx, tb, lim)
		if e.Status != StatusPartial || e.Text != "start" || len(e.Warnings) != 1 {
			t.Fatalf("limits %+v: %+v", lim, e)
		}
	}
	// Within the limits the same document reads whole.
	tb := newTextBuf(DefaultMaxTextChars)
	if e := extractOffice(ctx, bytes.NewReader(doc), int64(len(doc)), mimeDocx, tb, officeLimits()); e.Status != StatusOK {
		t.Fatalf("default limits: %+v", e)
	}
}

func TestCacheByContent(t *testing.T) {
	s, dir := newStore(t, nil)
	m1, r1 := putResult(t, s, "a.txt", "", []byte("same content"))
	m2, r2 := putResult(t, s, "b.txt", "", []byte("same content"))
	if m1.ID == m2.ID || r1.Text != r2.Text || r2.Name != "b.txt" || r2.FileURI != m2.URI() {
		t.Fatalf("results %+v %+v", r1, r2)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, cacheDir))
	if len(ents) != 1 {
		t.Fatalf("cache holds %d entries, want 1", len(ents))
	}
	// Deleting the upload's file does not matter to a cached result of the same content.
	key, _ := cacheKey(m1)
	if _, ok := s.cached(key); !ok {
		t.Fatal("result not cached")
	}
}

func TestResultTimesOut(t *testing.T) {
	s, _ := newStore(t, func(c *Config) {
		c.LookPath = func(string) (string, error) { return fakeTool(t, "exec sleep 5"), nil }
	})
	m, err := s.Put(context.Background(), "a.png", "", bytes.NewReader(renderPNG(t, "x")), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Result(ctx, m.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
}

func noTools(string) (string, error) { return "", errors.New("not found") }
