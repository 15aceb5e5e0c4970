package actions

import (
	"strings"
	"testing"
)

// Type errors name the client's field path, never a Go type or struct name.
func TestDecodeErrorsNameJSONFields(t *testing.T) {
	for _, tt := range []struct {
		body string
		v    any
		want string
	}{
		{`{"AgentId":5}`, new(runAgentRequest), "AgentId must be a string, not number"},
		{`{"UserId":true}`, new(sessionRequest), "UserId must be a string, not bool"},
		{`{"SessionId":42}`, new(sessionRequest), "SessionId must be a string, not number"},
	} {
		e := decodeJSON([]byte(tt.body), tt.v)
		if e == nil {
			t.Errorf("%s: accepted", tt.body)
			continue
		}
		if e.Message != tt.want {
			t.Errorf("%s: %q, want %q", tt.body, e.Message, tt.want)
		}
		for _, leak := range []string{"scoped", "Go ", "struct", "actions."} {
			if strings.Contains(e.Message, leak) {
				t.Errorf("%s: %q names %q", tt.body, e.Message, leak)
			}
		}
	}
}
