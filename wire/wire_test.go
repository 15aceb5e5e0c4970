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

// The Python SDK's test_payload_contract.py checks its expansion with the same blocks.
func TestExpandDerivesTheInputText(t *testing.T) {
	p := wire.Payload{InputContent: []wire.ContentBlock{{Type: "input_text"}, {Type: "input_image", ImageURL: "https://x/y.png"},
		{Type: "input_text", Text: "a"}, {Type: "input_text", Text: "b"}}}
	wire.Expand(&p, nil)
	if string(p.Input) != `"a\nb"` {
		t.Errorf("input %s", p.Input)
	}
	want := []string{`{"text":""}`, `{"file_data":{"display_name":"","file_uri":"https://x/y.png"}}`, `{"text":"a"}`, `{"text":"b"}`}
	if len(p.InputParts) != len(want) {
		t.Fatalf("parts %s", p.InputParts)
	}
	for i := range want {
		if string(p.InputParts[i]) != want[i] {
			t.Errorf("part %d: %s, want %s", i, p.InputParts[i], want[i])
		}
	}
	if len(p.InputMessages) != 1 {
		t.Errorf("messages %s", p.InputMessages)
	}
}
