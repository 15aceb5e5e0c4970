package jsonfield

import (
	"encoding/json"
	"testing"
)

// stringFieldByJSON is what StringField must agree with.
func stringFieldByJSON(data []byte) (string, error) {
	var v struct {
		Text string `json:"text"`
	}
	err := json.Unmarshal(data, &v)
	return v.Text, err
}

func TestStringField(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   string
		wantOK bool
	}{
		{`{"text":"hello"}`, "hello", true},
		{` { "text" : "hé llo" } `, "hé llo", true},
		{`{}`, "", true},
		{`{"other":1}`, "", true},
		{`{"content":[{"type":"input_text","text":"inner"}],"text":"outer"}`, "outer", true},
		{`{"a":{"text":"no"},"b":"x\"y","text":"yes","c":[1,"]",{"d":null}]}`, "yes", true},
		{`{"text":"one","text":"two"}`, "two", true},
		{`{"text":"a\nb"}`, "", false},     // escaped: decoded in full
		{`{"Text":"case"}`, "", false},     // encoding/json matches keys ignoring case
		{`{"text":5}`, "", false},          // not a string: json.Unmarshal fails
		{`{"text":null}`, "", false},       // null: json.Unmarshal leaves ""
		{`["text"]`, "", false},            // not an object
		{"{\"text\":\"\xff\"}", "", false}, // invalid UTF-8: encoding/json replaces it
		{`{"te\u0078t":"x"}`, "", false},   // escaped key
		{`{"n":-1.5e3,"t":true,"text":"v"}`, "v", true},
	} {
		got, ok := StringField([]byte(tc.in), "text")
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("StringField(%s) = %q, %t; want %q, %t", tc.in, got, ok, tc.want, tc.wantOK)
		}
		if ok {
			if byJSON, err := stringFieldByJSON([]byte(tc.in)); err != nil || byJSON != got {
				t.Errorf("%s: encoding/json says %q, %v", tc.in, byJSON, err)
			}
		}
	}
}

// On valid JSON, whenever StringField answers, encoding/json agrees.
func FuzzStringField(f *testing.F) {
	for _, s := range []string{`{"text":"hello"}`, `{"content":[{"text":"x"}],"text":"y"}`, `{"a":"b\\"c","text":"d"}`, `{}`, `{"text":"a","text":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := StringField(data, "text")
		if !ok {
			return
		}
		want, err := stringFieldByJSON(data)
		if err != nil || got != want {
			t.Fatalf("StringField(%q) = %q; encoding/json: %q, %v", data, got, want, err)
		}
	})
}

func BenchmarkStringField(b *testing.B) {
	data := []byte(`{"text":"Echo: hello there, how are you today?"}`)
	b.Run("StringField", func(b *testing.B) {
		for range b.N {
			if _, ok := StringField(data, "text"); !ok {
				b.Fatal("not ok")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for range b.N {
			if _, err := stringFieldByJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
