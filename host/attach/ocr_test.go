package attach

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool writes a shell script standing in for tesseract.
func fakeTool(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tesseract")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOCRAbsent(t *testing.T) {
	s, _ := newStore(t, func(c *Config) { c.LookPath = noTools })
	m, r := putResult(t, s, "scan.png", "", renderPNG(t, "HELLO"))
	if r.Status != StatusSkipped || len(r.Warnings) != 1 || r.Warnings[0] != TesseractMissing {
		t.Fatalf("result %+v", r)
	}
	// Skips for a missing tool are not cached: installing tesseract later helps.
	key, _ := cacheKey(m)
	if _, ok := s.cached(key); ok {
		t.Fatal("a skipped result was cached")
	}
}

func TestOCRFakeTool(t *testing.T) {
	for _, tc := range []struct {
		name, script, status, text, warn string
	}{
		{"reads stdin", `[ "$1" = stdin ] && [ "$2" = stdout ] && [ -z "$OPENAI_API_KEY" ] && head -c 8 | od -c | head -1 >/dev/null && echo "INVOICE 42"`, StatusOK, "INVOICE 42", ""},
		{"no text", `cat >/dev/null`, StatusOK, "", "no text"},
		{"crashes", `echo boom >&2; exit 3`, StatusFailed, "", "OCR failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "sk-secret") // must not reach the tool
			bin := fakeTool(t, tc.script)
			s, _ := newStore(t, func(c *Config) { c.LookPath = func(string) (string, error) { return bin, nil } })
			_, r := putResult(t, s, "scan.png", "", renderPNG(t, "x"))
			if r.Status != tc.status || r.ExtractionMethod != "tesseract" || strings.TrimSpace(r.Text) != tc.text {
				t.Fatalf("result %+v", r)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(r.Warnings, "|"), tc.warn) {
				t.Fatalf("warnings %v lack %q", r.Warnings, tc.warn)
			}
		})
	}
}

func TestOCRTesseract(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		// .ci/run installs it: in CI a missing tesseract is a failure, not a skip.
		if os.Getenv("CI") != "" {
			t.Fatal("tesseract is not installed (apt-get install tesseract-ocr)")
		}
		t.Skip("tesseract is not installed (apt-get install tesseract-ocr)")
	}
	s, _ := newStore(t, nil)
	_, r := putResult(t, s, "scan.png", "", renderPNG(t, "HELLO OCR 42"))
	if r.Status != StatusOK || r.ExtractionMethod != "tesseract" || !strings.Contains(r.Text, "HELLO") {
		t.Fatalf("result %+v", r)
	}
	t.Logf("tesseract read %q", r.Text)
	_ = context.Background
}
