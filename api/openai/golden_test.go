package openai

import (
	"flag"
	"path/filepath"
	"regexp"
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
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\b(resp|msg|fc|rs|sess|run|apr|call|mcpr|fco|conv|mcp_call)_[0-9a-f]{12,32}\b`), "${1}_X"},
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
