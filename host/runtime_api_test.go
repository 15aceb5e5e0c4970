package host

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/apisurface"
)

// docs/ARCHITECTURE.md names the caller of every exported method of Runtime: a method
// added without its row fails here, and so does a row whose method went.
func TestRuntimeMethodsAreDocumented(t *testing.T) {
	ids, err := apisurface.Read(".")
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, id := range ids {
		if m, ok := strings.CutPrefix(id.Name, "Runtime."); ok && m != "New" {
			methods = append(methods, m)
		}
	}
	doc, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## host.Runtime's methods\n")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no "## host.Runtime's methods" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\|").FindAllStringSubmatch(sec, -1) {
		documented = append(documented, m[1])
	}
	if len(methods) < 10 || len(documented) < 10 {
		t.Fatalf("found %d methods, %d documented: the check would check nothing", len(methods), len(documented))
	}
	for _, m := range methods {
		if !slices.Contains(documented, m) {
			t.Errorf("Runtime.%s is exported but docs/ARCHITECTURE.md does not say who calls it", m)
		}
	}
	for _, m := range documented {
		if !slices.Contains(methods, m) {
			t.Errorf("docs/ARCHITECTURE.md lists Runtime.%s, which Runtime does not export", m)
		}
	}
}
