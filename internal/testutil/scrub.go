package testutil

import "regexp"

// Replacement rewrites each match of Re with Repl (regexp.ReplaceAll's template syntax).
type Replacement struct {
	Re   *regexp.Regexp
	Repl string
}

// Replacements make wire output of real runs comparable with golden files by
// rewriting what differs run to run (generated ids, times), applied in order.
type Replacements []Replacement

// Apply returns b with each replacement applied in turn.
func (rs Replacements) Apply(b []byte) []byte {
	for _, r := range rs {
		b = r.Re.ReplaceAll(b, []byte(r.Repl))
	}
	return b
}

// Replace is the Replacement of pattern's matches (a regexp; it panics on a bad one) with repl.
func Replace(pattern, repl string) Replacement {
	return Replacement{Re: regexp.MustCompile(pattern), Repl: repl}
}
