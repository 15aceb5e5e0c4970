// Package jsonscan holds the few JSON scanning steps that the fast decoders of the module
// share (the runner payload's history decoder in wire, jsonfield.StringField): each reads
// exactly what encoding/json would, or says it cannot, and the caller then decodes in full.
// Standard library only, so wire stays a leaf in all but this.
package jsonscan

import "unicode/utf8"

// SkipSpace returns the index of the first byte at or after i that is not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// PlainString returns the string at b[i:] when it has no escapes and is valid UTF-8
// without control characters, as the bytes between its quotes.
func PlainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[i+1 : j]
			return s, j + 1, ascii || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, i, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, i, false
}

// ValueEnd returns the index after the JSON value at b[i:], found by its brackets and
// quotes (the caller validates what it keeps).
func ValueEnd(b []byte, i int) (int, bool) {
	depth, inString := 0, false
	for j := i; j < len(b); j++ {
		c := b[j]
		if inString {
			switch c {
			case '\\':
				j++
			case '"':
				inString = false
				if depth == 0 {
					return j + 1, true
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j, j > i // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return j + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j, j > i
			}
		}
	}
	return len(b), depth == 0 && !inString && len(b) > i
}
