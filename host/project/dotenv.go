package project

import (
	"fmt"
	"strings"
)

// ParseDotenv parses a .env file: KEY=VALUE lines, an optional "export " prefix, '#'
// comments (whole lines, or after whitespace following an unquoted value), 'single'
// quoted values taken literally, "double" quoted values with \n \r \t \" \\ escapes, and
// quoted values spanning lines. ${KEY} in unquoted and double-quoted values expands to a
// key defined earlier in the file, else to lookup(KEY) (nil: empty). That is the subset
// of python-dotenv that KsADK projects use; a line it cannot read is an error naming the
// line, not silently skipped.
func ParseDotenv(data string, lookup func(string) (string, bool)) (map[string]string, error) {
	out := map[string]string{}
	get := func(k string) string {
		if v, ok := out[k]; ok {
			return v
		}
		if lookup != nil {
			v, _ := lookup(k)
			return v
		}
		return ""
	}
	data = strings.TrimPrefix(data, "\ufeff")
	p := &dotenvParser{s: data, line: 1}
	for {
		p.skipBlank()
		if p.eof() {
			return out, nil
		}
		line := p.line
		key, val, err := p.entry(get)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out[key] = val
	}
}

type dotenvParser struct {
	s    string
	i    int
	line int
}

func (p *dotenvParser) eof() bool { return p.i >= len(p.s) }

func (p *dotenvParser) advance(n int) {
	p.line += strings.Count(p.s[p.i:p.i+n], "\n")
	p.i += n
}

// skipBlank skips whitespace, empty lines and comment lines.
func (p *dotenvParser) skipBlank() {
	for !p.eof() {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.advance(1)
		case c == '#':
			p.skipLine()
		default:
			return
		}
	}
}

func (p *dotenvParser) skipLine() {
	if j := strings.IndexByte(p.s[p.i:], '\n'); j >= 0 {
		p.advance(j + 1)
	} else {
		p.i = len(p.s)
	}
}

func (p *dotenvParser) skipSpaces() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func isKeyByte(c byte, first bool) bool {
	switch {
	case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		return true
	case first:
		return false
	}
	return c >= '0' && c <= '9' || c == '.' || c == '-'
}

func (p *dotenvParser) key() string {
	j := p.i
	for j < len(p.s) && isKeyByte(p.s[j], j == p.i) {
		j++
	}
	k := p.s[p.i:j]
	p.i = j
	return k
}

func (p *dotenvParser) entry(get func(string) string) (string, string, error) {
	if strings.HasPrefix(p.s[p.i:], "export ") || strings.HasPrefix(p.s[p.i:], "export\t") {
		p.i += len("export")
		p.skipSpaces()
	}
	key := p.key()
	if key == "" {
		return "", "", fmt.Errorf("expected KEY=VALUE, found %q", p.restOfLine())
	}
	p.skipSpaces()
	if p.eof() || p.s[p.i] != '=' {
		return "", "", fmt.Errorf("expected '=' after %s", key)
	}
	p.i++
	p.skipSpaces()
	if p.eof() {
		return key, "", nil
	}
	var val string
	switch q := p.s[p.i]; q {
	case '\'', '"':
		end := closingQuote(p.s, p.i+1, q)
		if end < 0 {
			return "", "", fmt.Errorf("%s: unterminated %c-quoted value", key, q)
		}
		raw := p.s[p.i+1 : end]
		p.advance(end + 1 - p.i)
		if q == '"' {
			val = expand(unescape(raw), get)
		} else {
			val = raw
		}
		// Only a comment may follow a quoted value.
		p.skipSpaces()
		if !p.eof() && p.s[p.i] != '\n' && p.s[p.i] != '\r' && p.s[p.i] != '#' {
			return "", "", fmt.Errorf("%s: unexpected %q after the closing quote", key, p.restOfLine())
		}
	default:
		rest := p.restOfLine()
		// A '#' starts a comment only after whitespace, so URL fragments and the like stay.
		for j := 1; j < len(rest); j++ {
			if rest[j] == '#' && (rest[j-1] == ' ' || rest[j-1] == '\t') {
				rest = rest[:j]
				break
			}
		}
		val = expand(strings.TrimRight(rest, " \t\r"), get)
	}
	p.skipLine()
	return key, val, nil
}

func (p *dotenvParser) restOfLine() string {
	rest := p.s[p.i:]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// closingQuote finds the quote closing a value that starts at i; in double quotes a
// backslash escapes the next byte.
func closingQuote(s string, i int, q byte) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if q == '"' {
				i++
			}
		case q:
			return i
		}
	}
	return -1
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '"', '\\':
			b.WriteByte(s[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// expand replaces ${KEY} (and ${KEY:-default}) references.
func expand(s string, get func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		name, def, hasDef := strings.Cut(s[i+2:i+j], ":-")
		v := get(name)
		if v == "" && hasDef {
			v = def
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}
