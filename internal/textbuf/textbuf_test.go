package textbuf

import (
	"strings"
	"testing"
	"unsafe"
)

func TestText(t *testing.T) {
	for _, tt := range []struct {
		name string
		ops  []string // "+x" adds x, "=x" sets x, "0" resets
		want string
	}{
		{"empty", nil, ""},
		{"one piece", []string{"+hello"}, "hello"},
		{"pieces", []string{"+he", "+l", "+", "+lo"}, "hello"},
		{"empty first", []string{"+", "+a", "+b"}, "ab"},
		{"set replaces", []string{"+ab", "+c", "=whole"}, "whole"},
		{"add after set", []string{"=ab", "+c"}, "abc"},
		{"reset", []string{"+ab", "+c", "0"}, ""},
		{"reused after reset", []string{"+ab", "+c", "0", "+d", "+e"}, "de"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var txt Text
			for _, op := range tt.ops {
				switch {
				case op == "0":
					txt.Reset()
				case op[0] == '+':
					txt.Add(op[1:])
				case op[0] == '=':
					txt.Set(op[1:])
				}
			}
			if got := txt.String(); got != tt.want || txt.Len() != len(tt.want) {
				t.Fatalf("%q (len %d), want %q", got, txt.Len(), tt.want)
			}
		})
	}
}

// A text that arrives as one piece is not copied, and what String returned earlier
// stays as it was while more is added.
func TestTextKeepsOnePieceAsItCame(t *testing.T) {
	in := strings.Repeat("x", 1<<20)
	var txt Text
	txt.Add(in)
	if unsafe.StringData(txt.String()) != unsafe.StringData(in) {
		t.Fatal("a one-piece text was copied")
	}
	before := txt.String()
	txt.Add("y")
	mid := txt.String()
	txt.Add("z")
	if before != in || mid != in+"y" || txt.String() != in+"yz" {
		t.Fatal("an earlier String changed")
	}
}

func BenchmarkTextThousandDeltas(b *testing.B) {
	for b.Loop() {
		var txt Text
		for range 1000 {
			txt.Add("word ")
		}
		_ = txt.String()
	}
}
