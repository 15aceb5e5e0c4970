package wire

import (
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/apisurface"
)

// documentAPI is all wire exports: the runner documents, their methods, and the functions
// that decode and derive them. A Go agent project carries a copy of wire, so a host helper
// belongs in the host (or internal/...), not here.
var documentAPI = []string{
	"Checkpoint", "CheckpointRef", "CheckpointWrite", "ContentBlock", "Expand", "InputMessagesOf",
	"InputPartsOf", "InputText", "Message", "Payload", "Payload.InputText", "PlatformContext",
	"Resume", "SessionContext", "State", "State.Merged", "UnmarshalPayload", "Usage",
}

// go doc ./wire lists only the documents.
func TestAPIIsTheDocuments(t *testing.T) {
	ids, err := apisurface.Read(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range ids {
		got = append(got, id.Name)
	}
	if g, w := strings.Join(got, " "), strings.Join(documentAPI, " "); g != w {
		t.Errorf("wire exports\n  %s\nwant only the documents\n  %s", g, w)
	}
}
