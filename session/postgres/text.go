package postgres

import (
	"strings"
	"unicode/utf8"
)

// PostgreSQL text holds neither NUL nor invalid UTF-8, while ids and prompts are
// arbitrary Go strings. esc maps every string to storable text injectively, leaving
// ordinary text (no backslash, NUL or invalid byte) unchanged; unesc inverts it.
func esc(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c == '\\' || c >= utf8.RuneSelf {
			clean = false
			break
		}
	}
	if clean || (utf8.ValidString(s) && !strings.ContainsAny(s, "\x00\\")) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&15])
		case r == 0:
			b.WriteString(`\0`)
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unesc(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '0':
			b.WriteByte(0)
			i++
		case '\\':
			b.WriteByte('\\')
			i++
		case 'x':
			if i+3 < len(s) {
				b.WriteByte(unhex(s[i+2])<<4 | unhex(s[i+3]))
				i += 3
			}
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// escAll escapes a list (query filters).
func escAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = esc(s)
	}
	return out
}
