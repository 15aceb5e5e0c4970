package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host/internal/history"
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
		got, err := withHistory(tc.doc, history.NewEncoded(nil, elems))
		if err != nil || string(got) != tc.want || !json.Valid(got) {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}
