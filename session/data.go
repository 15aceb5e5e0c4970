package session

import (
	"encoding/json"
	"fmt"

	"github.com/agentengine/agentengine/internal/jsonfield"
)

// DataOf decodes an event's Data into the payload type of its event type (for example
// DataOf[ToolCallData] for a tool_call event). A stored event whose data does not decode
// is corrupt or from another version: the error names the event so that callers can log
// it instead of acting on a zero value.
func DataOf[T any](e Event) (T, error) {
	var d T
	if len(e.Data) == 0 {
		return d, fmt.Errorf("session: %s event (seq %d) has no data", e.Type, e.Seq)
	}
	// A message's and a reasoning's text, read back on every turn, without reflection.
	switch p := any(&d).(type) {
	case *AssistantMessageData:
		if text, ok := jsonfield.StringField(e.Data, "text"); ok {
			p.Text = text
			return d, nil
		}
	case *ReasoningData:
		if text, ok := jsonfield.StringField(e.Data, "text"); ok {
			p.Text = text
			return d, nil
		}
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return d, fmt.Errorf("session: decoding the data of %s event (seq %d): %w", e.Type, e.Seq, err)
	}
	return d, nil
}
