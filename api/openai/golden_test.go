package openai

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run go test ./api/openai -update to create it): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// volatile matches generated ids and timestamps in wire output.
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\b(resp|msg|fc|rs|sess|run|apr|call|mcpr|fco)_[0-9a-f]{12,32}\b`), "${1}_X"},
	{regexp.MustCompile(`chatcmpl-[0-9a-f]{12,32}`), "chatcmpl-X"},
	{regexp.MustCompile(`"(created_at|completed_at|created)":( ?)\d+`), `"$1":${2}0`},
}

// normalise replaces volatile ids and timestamps so real runs can be compared with
// golden files.
func normalise(b []byte) []byte {
	for _, v := range volatile {
		b = v.re.ReplaceAll(b, []byte(v.repl))
	}
	return b
}
