package pluginsdk

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/runnerplugin"
)

// The Python SDK's server must use the same message limit as the Go side.
func TestPythonMessageLimitMatches(t *testing.T) {
	src, err := os.ReadFile("python/src/agentengine_runner/server.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MAX_MESSAGE_BYTES = (.+)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("server.py has no MAX_MESSAGE_BYTES")
	}
	// The expression is a sum of products of (a << b) and integers.
	total := 0
	for _, term := range strings.Split(string(m[1]), "+") {
		v := 1
		for _, f := range strings.Split(term, "*") {
			f = strings.Trim(strings.TrimSpace(f), "()")
			if a, b, ok := strings.Cut(f, "<<"); ok {
				x, _ := strconv.Atoi(strings.TrimSpace(a))
				y, _ := strconv.Atoi(strings.TrimSpace(b))
				v *= x << y
				continue
			}
			x, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("cannot read %q in %q", f, m[1])
			}
			v *= x
		}
		total += v
	}
	if total != runnerplugin.MaxMessageBytes {
		t.Errorf("server.py MAX_MESSAGE_BYTES = %d, runnerplugin.MaxMessageBytes = %d", total, runnerplugin.MaxMessageBytes)
	}
}
