package postgres

import (
	"testing"
	"unicode/utf8"
)

func FuzzEsc(f *testing.F) {
	for _, s := range []string{"", "a", `a\b`, "c\x00d", "\xff\xfe", `\x00`, "会话 🚀", `\\0`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := esc(s)
		if !utf8.ValidString(e) {
			t.Fatalf("esc(%q) = %q is not UTF-8", s, e)
		}
		for i := 0; i < len(e); i++ {
			if e[i] == 0 {
				t.Fatalf("esc(%q) = %q has NUL", s, e)
			}
		}
		if got := unesc(e); got != s {
			t.Fatalf("unesc(esc(%q)) = %q", s, got)
		}
	})
}
