package pluginsdk

import (
	"os"
	"reflect"
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

// The Python SDK's Capabilities has the Go SDK's fields with the same defaults: all off,
// Summarize derived from the runner (None in Python, a Summarizer in Go).
func TestPythonCapabilitiesMatch(t *testing.T) {
	src, err := os.ReadFile("python/src/agentengine_runner/runner.py")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nclass Capabilities:\n")
	if !ok {
		t.Fatal("runner.py has no class Capabilities")
	}
	body, _, _ = strings.Cut(body, "\n\n\n") // the class ends at the next top-level definition
	py := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^    ([a-z_]+): ([^=\n]+?) = (\S+)$`).FindAllStringSubmatch(body, -1) {
		if !strings.HasPrefix(m[2], "InitVar") { // accepted for old runners, not a capability
			py[m[1]] = m[3]
		}
	}
	want := map[string]string{}
	ct := reflect.TypeFor[Capabilities]()
	for i := range ct.NumField() {
		name := regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(ct.Field(i).Name, "${1}_${2}")
		want[strings.ToLower(name)] = "False"
	}
	want["summarize"] = "None"
	// Only the Python SDK keeps artifacts (ADK's artifact service, in its ADK bridge).
	want["artifacts"] = "False"
	if !reflect.DeepEqual(py, want) {
		t.Errorf("Python Capabilities fields and defaults %v, want %v (the Go SDK's)", py, want)
	}
}
