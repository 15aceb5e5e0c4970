package host

import (
	"github.com/agentengine/agentengine/internal/jsonfield"
	"github.com/agentengine/agentengine/session"
)

// RunStatusOf returns the status of a run_status event ("" for other events).
func RunStatusOf(e *session.Event) string {
	if e == nil || e.Type != session.TypeRunStatus {
		return ""
	}
	if status, ok := jsonfield.StringField(e.Data, "status"); ok {
		return status
	}
	d, err := session.DataOf[session.RunStatusData](*e)
	if err != nil {
		return ""
	}
	return d.Status
}
