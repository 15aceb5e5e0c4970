package host

import (
	"encoding/json"
	"testing"
)

func TestWithHistorySplicesTheHistoryFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  any
		hist string
		want string
	}{
		{"empty object", struct{}{}, `[]`, `{"history":[]}`},
		{"fields", struct {
			A string `json:"a"`
			B int    `json:"b"`
		}{"<x>", 1}, `[{"role":"user"}]`, `{"history":[{"role":"user"}],"a":"\u003cx\u003e","b":1}`},
	} {
		got, err := withHistory(tc.doc, []byte(tc.hist))
		if err != nil || string(got) != tc.want || !json.Valid(got) {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}
