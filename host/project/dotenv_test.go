package project

import (
	"maps"
	"strings"
	"testing"
)

func TestParseDotenv(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{"empty", "", map[string]string{}, ""},
		{"plain", "A=1\nB=two words\n", map[string]string{"A": "1", "B": "two words"}, ""},
		{"comments and blanks", "# c\n\n  A=1 # trailing\n#B=2\n", map[string]string{"A": "1"}, ""},
		{"hash without space stays", "URL=http://x/#frag\n", map[string]string{"URL": "http://x/#frag"}, ""},
		{"export prefix", "export OPENAI_API_KEY=sk-1\n", map[string]string{"OPENAI_API_KEY": "sk-1"}, ""},
		{"spaces around =", "A = 1\n", map[string]string{"A": "1"}, ""},
		{"single quotes literal", `A='x ${B} \n # y'`, map[string]string{"A": `x ${B} \n # y`}, ""},
		{"double quotes escapes", `A="l1\nl2\t\"q\" \\"`, map[string]string{"A": "l1\nl2\t\"q\" \\"}, ""},
		{"multi-line double", "A=\"one\ntwo\"\nB=3", map[string]string{"A": "one\ntwo", "B": "3"}, ""},
		{"comment after quote", `A="x" # c`, map[string]string{"A": "x"}, ""},
		{"empty value", "A=\nB=\"\"\n", map[string]string{"A": "", "B": ""}, ""},
		{"crlf", "A=1\r\nB=2\r\n", map[string]string{"A": "1", "B": "2"}, ""},
		{"bom", "\ufeffA=1", map[string]string{"A": "1"}, ""},
		{"expansion", "A=x\nB=${A}-y\nC=\"${A}${MISSING:-d}\"\nD=${HOSTVAR}", map[string]string{"A": "x", "B": "x-y", "C": "xd", "D": "from-lookup"}, ""},
		{"later wins", "A=1\nA=2", map[string]string{"A": "2"}, ""},
		{"dotted key", "a.b-c=1", map[string]string{"a.b-c": "1"}, ""},
		{"no equals", "A=1\nJUSTAWORD\n", nil, "line 2"},
		{"bad key", "1A=1", nil, "line 1"},
		{"unterminated", "A=1\nB=\"open\n\nC=2", nil, "line 2"},
		{"junk after quote", `A="x" y`, nil, "after the closing quote"},
	}
	lookup := func(k string) (string, bool) {
		if k == "HOSTVAR" {
			return "from-lookup", true
		}
		return "", false
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDotenv(tt.in, lookup)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// quoteDotenv writes a value so that ParseDotenv reads it back unchanged.
func quoteDotenv(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func FuzzParseDotenv(f *testing.F) {
	for _, s := range []string{"A=1", "export B='x'\n# c\nC=\"a\\nb\" # d", "D=${A:-x}", "E=\"open", "=", "A=\"\\\"", "\ufeffX=1\r\n"} {
		f.Add(s, "KEY", "value")
	}
	f.Fuzz(func(t *testing.T, doc, key, value string) {
		// Any input: no panic, and an error or a map with valid keys.
		if m, err := ParseDotenv(doc, nil); err == nil {
			for k := range m {
				if k == "" || !isKeyByte(k[0], true) {
					t.Fatalf("parsed invalid key %q from %q", k, doc)
				}
			}
		}
		// A well-formed entry, double-quoted, reads back exactly (without ${ which
		// expands by design).
		if key == "" || strings.Contains(value, "${") {
			return
		}
		for i := 0; i < len(key); i++ {
			if !isKeyByte(key[i], i == 0) {
				return
			}
		}
		m, err := ParseDotenv("# header\n"+key+"="+quoteDotenv(value)+" # note\nOTHER=1\n", nil)
		if err != nil {
			t.Fatalf("%q=%q: %v", key, value, err)
		}
		if m[key] != value && key != "OTHER" {
			t.Fatalf("%q: got %q, want %q", key, m[key], value)
		}
	})
}
