package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestWithHistorySplicesTheHistoryFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  any
		hist []string
		want string
	}{
		{"empty object", struct{}{}, nil, `{"history":[]}`},
		{"fields", struct {
			A string `json:"a"`
			B int    `json:"b"`
		}{"<x>", 1}, []string{`{"role":"user"}`}, `{"history":[{"role":"user"}],"a":"\u003cx\u003e","b":1}`},
		{"two messages, a document larger than the room left for it", struct {
			A string `json:"a"`
		}{strings.Repeat("y", 2*docRoom)}, []string{`{"role":"user"}`, `{"role":"assistant"}`},
			`{"history":[{"role":"user"},{"role":"assistant"}],"a":"` + strings.Repeat("y", 2*docRoom) + `"}`},
	} {
		var elems []json.RawMessage
		for _, e := range tc.hist {
			elems = append(elems, json.RawMessage(e))
		}
		got, err := withHistory(tc.doc, newEncodedHistory(nil, elems))
		if err != nil || string(got) != tc.want || !json.Valid(got) {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

// An encoded history's size is the length of the array it writes, whatever its pieces.
func TestEncodedHistorySize(t *testing.T) {
	for _, joined := range []string{"", `{"a":1}`, `{"a":1},{"b":2}`} {
		for n := range 3 {
			var elems []json.RawMessage
			for i := range n {
				elems = append(elems, json.RawMessage(fmt.Sprintf(`{"item":%d}`, i)))
			}
			h := newEncodedHistory([]byte(joined), elems)
			got := h.appendTo(nil)
			if len(got) != h.size || !json.Valid(got) {
				t.Errorf("joined %q, %d items: %s is %d bytes, size says %d", joined, n, got, len(got), h.size)
			}
		}
	}
}
