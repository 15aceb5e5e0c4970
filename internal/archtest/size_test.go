package archtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxHostFileLines bounds a file of the host package: the turn's stages are one file
// each, with helpers beside them, so a file that grows past this is doing two jobs.
const maxHostFileLines = 400

func TestHostFilesStaySmall(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "host", "*.go"))
	if err != nil || len(files) < 10 {
		t.Fatalf("host's files: %v (%d)", err, len(files))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > maxHostFileLines {
			t.Errorf("%s has %d lines (at most %d): split it by stage or concern, as docs/ARCHITECTURE.md lays out", filepath.Base(f), n, maxHostFileLines)
		}
	}
}
