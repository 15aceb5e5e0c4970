package adkweb

import (
	"bytes"
	"encoding/json"
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
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run go test ./api/adkweb -update to create it): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// volatile matches generated ids and times in wire output of real runs.
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\b(run|sess|call|apr|msg|fc|rs)_[0-9a-f]{12,32}\b`), "${1}_X"},
	{regexp.MustCompile(`"(timestamp|lastUpdateTime)":\s?[0-9.e+]+`), `"$1":0`},
}

func normalise(b []byte) []byte {
	for _, v := range volatile {
		b = v.re.ReplaceAll(b, []byte(v.repl))
	}
	return b
}

// indent pretty-prints JSON keeping its field order (the wire order).
func indent(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return append(bytes.TrimSpace(b.Bytes()), '\n')
}
