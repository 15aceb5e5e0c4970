package host

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentengine/agentengine/host/internal/history"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/wire"
)

// buildRunRequest assembles the runner payload and session context (KsADK's fields) for a turn whose
// opening events start at turnSeq; history is the projection of what came before it.
func (rt *Runtime) buildRunRequest(ctx context.Context, sess *session.Session, state *session.State, req TurnRequest, resumes []pendingApproval, turnSeq int64, files []turnFile, caps *runnerv1.Capabilities) (*runnerv1.RunRequest, error) {
	key := sess.Key
	// Earlier conversation items a stateless client sent with this turn come last.
	hist, refs, err := rt.hist.ForTurn(ctx, sess, turnSeq,
		session.ItemMessages(req.Input.Items, turnSeq), rt.compaction.MaxHistoryBytes, !req.private())
	if err != nil {
		return nil, err
	}
	if state == nil { // not read with the run's start
		st, err := rt.store.State(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("load state: %w", err)
		}
		state = &st
	}

	in := req.Input
	p := wire.Payload{
		InputContent:     nonNilBlocks(in.Content),
		InputItems:       in.Items,
		Model:            cmp.Or(req.Model, req.App),
		ModelMetadata:    req.ModelMetadata,
		ModelOptions:     req.ModelOptions,
		Instructions:     req.Instructions,
		Metadata:         req.Metadata,
		ToolApprovalMode: req.ToolApprovalMode,
		SessionID:        key.ID,
		InvocationID:     req.InvocationID,
		ContinueFrom:     req.ContinueFrom,
	}
	// Seed 003: current_* are this turn's files only; attachments/attachment_results are
	// the effective context, restored from the session when this turn has no files.
	p.CurrentAttachments, p.CurrentAttachmentResults = fileFields(files)
	p.HasCurrentFiles = len(files) > 0
	effective := files
	if len(files) == 0 {
		effective = rt.filesOfRefs(ctx, refs)
	}
	p.Attachments, p.AttachmentResults = fileFields(effective)
	isResume := len(resumes) > 0
	if isResume {
		p.Resumes = make([]wire.Resume, len(resumes))
		raws := make([]json.RawMessage, len(resumes))
		for i, r := range resumes {
			p.Resumes[i] = wire.Resume{
				ApprovalRequestID: r.itemID, Approve: r.resume.Approve, Reason: r.resume.Reason,
				Output: r.resume.Output, CallID: r.data.CallID, Name: r.data.Name,
				Arguments: r.data.Arguments, Detail: r.data.Detail,
			}
			raws[i] = r.resume.Raw
		}
		p.Resume = &p.Resumes[0]
		if len(resumes) == 1 {
			p.Input = raws[0]
		} else {
			p.Input = session.MustJSON(raws)
		}
	} else if !caps.GetExpandsPayload() {
		p.Input = session.MustJSON(in.Text()) // else the runner derives it from the content
	}
	sc := wire.SessionContext{
		PlatformContext: wire.PlatformContext{
			AgentID: req.App, AppName: req.App, UserID: key.User, AccountID: req.AccountID, SessionID: key.ID, InvocationID: req.InvocationID,
		},
		KBContext:     json.RawMessage("null"),
		MemoryContext: json.RawMessage("null"),
		IsResume:      isResume,
		State:         state.Merged(),
		StateTiers:    *state,
	}
	// The history is encoded once (mostly cached) and spliced in. A runner that expands
	// the payload gets the input once and the history once; others get the derived
	// fields and the history in the session context too.
	pw, sessionHist := payloadWire{Payload: p, Input: p.Input}, (*history.Encoded)(nil)
	if !caps.GetExpandsPayload() {
		pw.InputMessages = wire.InputMessagesOf(in.Items, in.Content)
		pw.InputParts = wire.InputPartsOf(in.Content)
		sessionHist = hist
	}
	payload, err := withHistory(pw, hist)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	sctx, err := withHistory(sessionContextWire{SessionContext: sc}, sessionHist)
	if err != nil {
		return nil, fmt.Errorf("encode session context: %w", err)
	}
	rr := &runnerv1.RunRequest{
		AppName: req.App, UserId: key.User, SessionId: key.ID, InvocationId: req.InvocationID,
		PayloadJson: payload, SessionContextJson: sctx,
	}
	// Runners that keep checkpoints with the host get the session's on every turn: the
	// process serving this turn may be new (a restart, another process of the pool).
	// Checkpoints come with events, so a session's first turn has none to read.
	if caps.GetCheckpoints() && turnSeq > 1 {
		cps, err := rt.store.Checkpoints(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("load checkpoints: %w", err)
		}
		rr.Checkpoints = checkpointsToProto(cps)
	}
	if caps.GetArtifacts() {
		if rr.Artifacts, err = rt.runArtifacts(ctx, key, RunArtifactBudget); err != nil {
			return nil, fmt.Errorf("load artifacts: %w", err)
		}
	}
	return rr, nil
}

// payloadWire and sessionContextWire leave the history out (the outer field shadows the
// embedded struct's and is empty): withHistory splices the encoded history in, which
// spares encoding/json from re-validating a large RawMessage twice per turn.
type payloadWire struct {
	wire.Payload
	History json.RawMessage `json:"history,omitempty"`
	// Input is left out (nil) for a runner that expands the payload, except on resumes.
	Input json.RawMessage `json:"input,omitempty"`
	// Derived fields, left out for a runner that expands the payload (wire.Expand).
	InputMessages []json.RawMessage `json:"input_messages,omitempty"`
	InputParts    []json.RawMessage `json:"input_parts,omitempty"`
}

type sessionContextWire struct {
	wire.SessionContext
	History json.RawMessage `json:"history,omitempty"`
}

// withHistory encodes doc, a JSON object, with "history": hist as its first member (none
// when hist is nil), into one buffer sized for the history: the history's elements are
// copied once, and doc is encoded straight after them (the object's "{" becomes the
// separator), so a large input is not copied once more to splice the two either.
func withHistory(doc any, hist *history.Encoded) ([]byte, error) {
	if hist == nil {
		return json.Marshal(doc) // no history member
	}
	const prefix = `{"history":`
	out := make([]byte, 0, len(prefix)+hist.Len()+docRoom)
	out = hist.AppendTo(append(out, prefix...))
	start := len(out)
	buf := bytes.NewBuffer(out)
	if err := json.NewEncoder(buf).Encode(doc); err != nil { // escapes HTML, as json.Marshal
		return nil, err
	}
	out = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(out)-start == 2 { // an empty object: nothing follows the history
		return append(out[:start], '}'), nil
	}
	out[start] = ','
	return out, nil
}

// docRoom is the room withHistory leaves after the history for the rest of the
// document: a turn's input, options and state fit in it, unless large.
const docRoom = 4 << 10

func checkpointsToProto(cps []session.Checkpoint) []*runnerv1.Checkpoint {
	if len(cps) == 0 {
		return nil
	}
	out := make([]*runnerv1.Checkpoint, len(cps))
	for i, c := range cps {
		pc := &runnerv1.Checkpoint{ThreadId: c.ThreadID, Namespace: c.Namespace, CheckpointId: c.ID, ParentId: c.ParentID, Data: c.Data}
		for _, w := range c.Writes {
			pc.Writes = append(pc.Writes, &runnerv1.CheckpointWrite{
				ThreadId: w.ThreadID, Namespace: w.Namespace, CheckpointId: w.CheckpointID, TaskId: w.TaskID,
				Index: w.Index, Channel: w.Channel, TaskPath: w.TaskPath, Data: w.Data,
			})
		}
		out[i] = pc
	}
	return out
}

func nonNilBlocks(b []session.ContentBlock) []session.ContentBlock {
	if b == nil {
		return []session.ContentBlock{}
	}
	return b
}
