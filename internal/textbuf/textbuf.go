// Package textbuf accumulates text that streams in as pieces (a message's deltas).
package textbuf

import "strings"

// Text is a text built from pieces. Adding is amortised (a += per piece copies the whole
// text each time, quadratic in the pieces), and a text that came as one piece is kept
// as it came, without a copy: a whole answer of megabytes in one delta is not doubled.
// The zero value is an empty text.
type Text struct {
	b   strings.Builder
	one string // the text while it is one piece (b is empty then)
}

// Add appends s.
func (t *Text) Add(s string) {
	switch {
	case s == "":
	case t.one == "" && t.b.Len() == 0:
		t.one = s
	default:
		if t.one != "" {
			t.b.Grow(len(t.one) + len(s))
			t.b.WriteString(t.one)
			t.one = ""
		}
		t.b.WriteString(s)
	}
}

// Set replaces the text with s.
func (t *Text) Set(s string) {
	t.b.Reset()
	t.one = s
}

// Reset empties t and lets go of its buffer.
func (t *Text) Reset() { t.Set("") }

// String is the text so far; it stays valid after later Adds.
func (t *Text) String() string {
	if t.one != "" {
		return t.one
	}
	return t.b.String()
}

// Len is the text's length in bytes.
func (t *Text) Len() int { return len(t.one) + t.b.Len() }
