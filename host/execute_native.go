package host

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentengine/agentengine/host/workspace"
	"github.com/agentengine/agentengine/session"
)

// NativeWorkspaceFile is the native event kind of a file the agent wrote or deleted:
// {"path", "content", "encoding" ("utf-8" or "base64"), "deleted"}.
const NativeWorkspaceFile = "workspace.file"

// NativeEventMeta is the native event kind of a framework's own fields of the items that
// follow it (a JSON object, e.g. ADK's author, usageMetadata, finishReason): the host
// stores it with each of them, under the item data's "meta" key, until the next one. A
// surface that speaks the framework's wire format (ADK web) writes them back.
const NativeEventMeta = "event.meta"

// maxEventMeta bounds what a runner may attach to each item.
const maxEventMeta = 16 << 10

// carriesMeta reports the item types that carry the event meta; a state delta's data is
// the delta itself and cannot.
func carriesMeta(typ string) bool {
	switch typ {
	case session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall, session.TypeToolResult, session.TypeApprovalRequest:
		return true
	}
	return false
}

// eventMeta keeps an event.meta for the items that follow; a bad one is dropped (and the
// items go without), as it is the framework's detail, not the transcript.
func (ts *turnState) eventMeta(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > maxEventMeta || len(data) < 2 || data[0] != '{' || !json.Valid(data) {
		ts.rt.log.Warn("dropped an event.meta that is not a JSON object (or is too large)", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "bytes", len(data))
		ts.meta = nil
		return
	}
	ts.meta = append(json.RawMessage(nil), data...)
}

// withMeta adds "meta": meta to the JSON object data.
func withMeta(data, meta json.RawMessage) json.RawMessage {
	d := bytes.TrimSpace(data)
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return data
	}
	out := make([]byte, 0, len(d)+len(meta)+10)
	out = append(out, d[:len(d)-1]...)
	if len(bytes.TrimSpace(d[1:len(d)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"meta":`...)
	out = append(out, meta...)
	return append(out, '}')
}

// workspaceFile applies a workspace.file event to the workspace of the run's user (the
// agent's shared one unless it is per user). A bad event is logged, not fatal: the file
// is the agent's side output, the run goes on.
func (ts *turnState) workspaceFile(ctx context.Context, data []byte) {
	if ts.ag.Workspace == nil {
		return
	}
	w, err := ts.ag.Workspace.For(ts.r.Key.User)
	if err != nil {
		ts.logger().Warn("could not open the user's workspace", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "error", err)
		return
	}
	var f struct {
		Path     string  `json:"path"`
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
		Deleted  bool    `json:"deleted"`
	}
	err = json.Unmarshal(data, &f)
	// Agents' virtual filesystems (DeepAgents) root their paths at "/": the workspace.
	f.Path = strings.TrimLeft(f.Path, "/")
	switch {
	case err != nil:
	case f.Deleted:
		err = w.Delete(f.Path)
		if errors.Is(err, workspace.ErrNotFound) {
			err = nil
		}
	default:
		var body []byte
		if f.Content != nil {
			body = []byte(*f.Content)
		}
		if f.Encoding == "base64" {
			body, err = base64.StdEncoding.DecodeString(string(body))
		}
		if err == nil {
			_, err = w.Write(context.WithoutCancel(ctx), f.Path, bytes.NewReader(body))
		}
	}
	if err != nil {
		ts.logger().Warn("could not apply the agent's workspace file", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "path", f.Path, "error", err)
	}
}
