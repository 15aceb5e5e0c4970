package project

import (
	"strings"
	"testing"
)

// workspace: per user unless the project says shared; anything else is a clear error.
func TestWorkspaceMode(t *testing.T) {
	for _, tt := range []struct{ line, want, wantErr string }{
		{"", WorkspacePerUser, ""},
		{"workspace: shared\n", WorkspaceShared, ""},
		{"workspace: Per-User\n", WorkspacePerUser, ""},
		{"workspace: everyone\n", "", `"workspace": unknown value "everyone"`},
	} {
		dir := writeTree(t, map[string]string{"agentengine.yaml": "name: chat\nframework: langgraph\nentry_point: agent.py:graph\n" + tt.line, "agent.py": graphPy})
		p, err := Load(dir)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.line, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.line, err)
		case p.Workspace != tt.want:
			t.Errorf("%q: workspace %q, want %q", tt.line, p.Workspace, tt.want)
		}
	}
}
