package host

import (
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Ids keep their shape (a prefix and 24 hex digits), are unique, and sort by the time
// they were made: an index on them grows at its end.
func TestNewIDsSortByTime(t *testing.T) {
	shape := regexp.MustCompile(`^msg_[0-9a-f]{24}$`)
	seen := map[string]bool{}
	prev := ""
	for i := range 20000 {
		id := newID("msg_")
		if !shape.MatchString(id) {
			t.Fatalf("id %q has the wrong shape", id)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
		// Within one millisecond the order is random; across milliseconds it is the time's.
		if i > 0 && id[:16] < prev[:16] {
			t.Fatalf("id %q sorts before the earlier %q", id, prev)
		}
		prev = id
	}
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	a, b := idAt(base), idAt(base.Add(time.Millisecond))
	earlier, later := hex.EncodeToString(a[:]), hex.EncodeToString(b[:])
	if strings.Compare(earlier, later) >= 0 {
		t.Fatalf("%s (a millisecond later) does not sort after %s", later, earlier)
	}
	if earlier[:12] != "01a20846fe00" {
		t.Fatalf("time part %s, want the milliseconds since 1970 in 12 hex digits", earlier[:12])
	}
}
