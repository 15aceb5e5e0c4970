package adkweb

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got, *update, "./api/adkweb")
}

// volatile matches generated ids and times in wire output of real runs.
var volatile = testutil.Replacements{
	testutil.Replace(`\b(run|sess|call|apr|msg|fc|rs)_[0-9a-f]{12,32}\b`, "${1}_X"),
	testutil.Replace(`"(timestamp|lastUpdateTime)":\s?[0-9.e+]+`, `"$1":0`),
}

func normalise(b []byte) []byte {
	return volatile.Apply(b)
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
