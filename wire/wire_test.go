package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/wire"
)

func TestStateMerged(t *testing.T) {
	cases := []struct {
		name  string
		state wire.State
		want  map[string]any
	}{
		{"empty", wire.State{}, map[string]any{}},
		{"session over user over app",
			wire.State{
				App:     map[string]any{"theme": "dark", "lang": "en", "a": 1.0},
				User:    map[string]any{"theme": "light", "lang": "de"},
				Session: map[string]any{"lang": "fr"},
			},
			map[string]any{"theme": "light", "lang": "fr", "a": 1.0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.state.Merged(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Merged() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestPayloadInputText(t *testing.T) {
	cases := []struct {
		name, input, want string
	}{
		{"string", `"hello"`, "hello"},
		{"resume item", `{"type":"mcp_approval_response","approve":true}`, ""},
		{"absent", ``, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := wire.Payload{Input: json.RawMessage(c.input)}
			if got := p.InputText(); got != c.want {
				t.Errorf("InputText() = %q, want %q", got, c.want)
			}
		})
	}
}
