package testutil

import "testing"

func TestReplacementsApply(t *testing.T) {
	rs := Replacements{
		Replace(`\b(run|msg)_[0-9a-f]{4}\b`, "${1}_X"),
		Replace(`run_X`, "R"), // sees the first replacement's output
	}
	for _, tc := range []struct{ in, want string }{
		{`{"id":"msg_12ab","run":"run_beef"}`, `{"id":"msg_X","run":"R"}`},
		{`nothing volatile`, `nothing volatile`},
		{``, ``},
	} {
		if got := string(rs.Apply([]byte(tc.in))); got != tc.want {
			t.Errorf("Apply(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
