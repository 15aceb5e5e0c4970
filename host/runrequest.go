package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentengine/agentengine/pluginsdk"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// buildRunRequest assembles the seed-003 payload and session context for a turn whose
// opening events start at turnSeq; history is the projection of what came before it.
func (rt *Runtime) buildRunRequest(ctx context.Context, key session.Key, req TurnRequest, resumes []pendingApproval, turnSeq int64, files []turnFile) (*runnerv1.RunRequest, error) {
	hist, _, err := session.LoadHistory(ctx, rt.store, key)
	if err != nil {
		return nil, fmt.Errorf("project history: %w", err)
	}
	prior := hist[:0:0]
	for _, m := range hist {
		if m.Seq < turnSeq {
			prior = append(prior, m)
		}
	}
	// Earlier conversation items a stateless client sent with this turn come last.
	prior = append(prior, session.ItemMessages(req.Input.Items, turnSeq)...)
	if prior == nil {
		prior = []session.Message{}
	}
	state, err := rt.store.State(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load state: %w", err)
	}

	in := req.Input
	p := pluginsdk.Payload{
		History:       prior,
		InputContent:  nonNilBlocks(in.Content),
		InputMessages: inputMessages(in),
		InputParts:    inputParts(in.Content),
		Model:         req.App,
		ModelMetadata: req.ModelMetadata,
		ModelOptions:  req.ModelOptions,
		Instructions:  req.Instructions,
		Metadata:      req.Metadata,
		SessionID:     key.ID,
		InvocationID:  req.InvocationID,
	}
	// Seed 003: current_* are this turn's files only; attachments/attachment_results are
	// the effective context, restored from the session when this turn has no files.
	p.CurrentAttachments, p.CurrentAttachmentResults = fileFields(files)
	p.HasCurrentFiles = len(files) > 0
	effective := files
	if len(files) == 0 {
		if effective, err = rt.restoreFiles(ctx, key, turnSeq); err != nil {
			return nil, err
		}
	}
	p.Attachments, p.AttachmentResults = fileFields(effective)
	isResume := len(resumes) > 0
	if isResume {
		first := resumes[0]
		p.Resume = &pluginsdk.Resume{
			ApprovalRequestID: first.itemID, Approve: first.resume.Approve, Reason: first.resume.Reason,
			Output: first.resume.Output, CallID: first.data.CallID, Name: first.data.Name,
			Arguments: first.data.Arguments, Detail: first.data.Detail,
		}
		if len(resumes) == 1 {
			p.Input = first.resume.Raw
		} else {
			raws := make([]json.RawMessage, len(resumes))
			for i, r := range resumes {
				raws[i] = r.resume.Raw
			}
			p.Input = session.MustJSON(raws)
		}
	} else {
		p.Input = session.MustJSON(in.Text())
	}
	sc := pluginsdk.SessionContext{
		History: prior,
		PlatformContext: pluginsdk.PlatformContext{
			AgentID: req.App, AppName: req.App, UserID: key.User, SessionID: key.ID, InvocationID: req.InvocationID,
		},
		KBContext:     json.RawMessage("null"),
		MemoryContext: json.RawMessage("null"),
		IsResume:      isResume,
		State:         state.Merged(),
		StateTiers:    state,
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	sctx, err := json.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("encode session context: %w", err)
	}
	return &runnerv1.RunRequest{
		AppName: req.App, UserId: key.User, SessionId: key.ID, InvocationId: req.InvocationID,
		PayloadJson: payload, SessionContextJson: sctx,
	}, nil
}

func nonNilBlocks(b []session.ContentBlock) []session.ContentBlock {
	if b == nil {
		return []session.ContentBlock{}
	}
	return b
}

// inputMessages is the current input as Responses-style items: any other items as sent,
// then one user message with the content blocks.
func inputMessages(in Input) []json.RawMessage {
	// Earlier items of a client's transcript come before the message they lead up to.
	out := append([]json.RawMessage{}, in.Items...)
	if len(in.Content) > 0 {
		out = append(out, session.MustJSON(map[string]any{"type": "message", "role": "user", "content": in.Content}))
	}
	return out
}

// inputParts is the legacy normalized parts list of seed 001.
func inputParts(blocks []session.ContentBlock) []json.RawMessage {
	out := []json.RawMessage{}
	for _, b := range blocks {
		switch b.Type {
		case "input_text":
			out = append(out, session.MustJSON(map[string]any{"text": b.Text}))
		case "input_image":
			out = append(out, session.MustJSON(partOf(b.ImageURL, b.Filename)))
		case "input_file":
			src := b.FileData
			if src == "" {
				src = b.FileURL
			}
			out = append(out, session.MustJSON(partOf(src, b.Filename)))
		}
	}
	return out
}

func partOf(url, name string) map[string]any {
	if mime, data, ok := splitDataURL(url); ok {
		return map[string]any{"inline_data": map[string]any{"mime_type": mime, "data": data, "display_name": name}}
	}
	return map[string]any{"file_data": map[string]any{"file_uri": url, "display_name": name}}
}

// splitDataURL splits "data:<mime>;base64,<data>".
func splitDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mime, _, _ = strings.Cut(meta, ";")
	return mime, data, true
}
