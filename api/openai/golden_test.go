package openai

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got, *update, "./api/openai")
}

// volatile matches generated ids and timestamps in wire output.
var volatile = testutil.Replacements{
	testutil.Replace(`\b(resp|msg|fc|rs|sess|run|apr|call|mcpr|fco|conv|mcp_call)_[0-9a-f]{12,32}\b`, "${1}_X"),
	testutil.Replace(`chatcmpl-[0-9a-f]{12,32}`, "chatcmpl-X"),
	testutil.Replace(`"(created_at|completed_at|created)":( ?)\d+`, `"$1":${2}0`),
}

// normalise replaces volatile ids and timestamps so real runs can be compared with
// golden files.
func normalise(b []byte) []byte {
	return volatile.Apply(b)
}
