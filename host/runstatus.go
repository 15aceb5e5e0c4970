package host

import (
	"encoding/json"

	"github.com/agentengine/agentengine/session"
)

// RunStatusOf returns the status of a run_status event ("" for other events).
func RunStatusOf(e *session.Event) string {
	if e == nil || e.Type != session.TypeRunStatus {
		return ""
	}
	var d session.RunStatusData
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Status
}
