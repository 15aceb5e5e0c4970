package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/files"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/host/workspace"
)

// The file actions are an extension: the action surface mounts them under its prefix,
// announces them in the bootstrap and answers their wrong methods in its envelope.
func TestExtensionsShareThePrefix(t *testing.T) {
	dir := t.TempDir()
	uploads, err := attach.New(attach.Config{Dir: filepath.Join(dir, "files"), LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(workspace.Config{Dir: filepath.Join(dir, "workspace")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = uploads.Close(); _ = ws.Close() })
	with := newEnv(t, func(o *envOptions) {
		o.cfg.Extensions = []actions.Extension{files.NewSurface(files.Deps{Uploads: uploads, Workspaces: map[string]*workspace.Workspace{"echo": ws}})}
	})
	without := newEnv(t)

	var boot struct {
		Capabilities struct{ Attachments, WorkspaceFiles bool }
	}
	with.must("GetAgentUiBootstrap", map[string]any{}, &boot)
	if !boot.Capabilities.Attachments || !boot.Capabilities.WorkspaceFiles {
		t.Errorf("capabilities with the file actions: %+v", boot.Capabilities)
	}
	without.must("GetAgentUiBootstrap", map[string]any{}, &boot)
	if boot.Capabilities.Attachments || boot.Capabilities.WorkspaceFiles {
		t.Errorf("capabilities without them: %+v", boot.Capabilities)
	}

	if r := with.post("ListWorkspaceFiles", map[string]any{}); r.status != 200 {
		t.Errorf("ListWorkspaceFiles: %d %s", r.status, r.raw)
	}
	wantError(t, with.do("DELETE", actions.Prefix+"AttachmentContent", nil), 405, actions.CodeMethod, "AttachmentContent takes GET or HEAD, not DELETE")
	wantError(t, without.post("ListWorkspaceFiles", map[string]any{}), 404, actions.CodeInvalidAction, `"ListWorkspaceFiles"`)
}
