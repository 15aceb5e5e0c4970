package actions_test

import (
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
)

type messagesData struct {
	SessionId   string
	Messages    []messageRow
	LatestSeqId int64
	HasMore     bool
	NextCursor  *int64
}

type messageRow struct {
	MessageId, Role, InvocationId, ResponseId, RunStatus string
	Content                                              struct{ Text string }
	SeqId, StartSeqId                                    int64
	Reasoning                                            []struct{ Text string }
	ToolEvents                                           []blockRow
	Blocks                                               []blockRow
	Attachments                                          []struct {
		Name, Mime, Url string
		IsImage         bool `json:"is_image"`
	}
}

type blockRow struct {
	Type, Content, Name, Status, ToolCallId, ApprovalRequestId string
	Args, Result                                               any
	SeqId                                                      int64
}

func (e *env) messages(body map[string]any) messagesData {
	e.t.Helper()
	var d messagesData
	e.must("ListSessionMessages", body, &d)
	return d
}

func roles(ms []messageRow) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Role[:1])
	}
	return b.String()
}

func TestListSessionMessagesTurns(t *testing.T) {
	e := newEnv(t)
	first := e.run(map[string]any{"Messages": userMessages("hello there")})
	sid := first.SessionID
	e.run(map[string]any{"SessionId": sid, "Messages": userMessages("use the tool on paris")})
	ask := e.run(map[string]any{"SessionId": sid, "Messages": userMessages("please approve deleting notes.txt")})
	var approvalID string
	for _, o := range ask.Output {
		if o.Type == "mcp_approval_request" {
			approvalID = o.ID
		}
	}
	if ask.Status != "incomplete" || approvalID == "" {
		t.Fatalf("approval turn %+v", ask)
	}
	e.run(map[string]any{"SessionId": sid, "PreviousResponseId": ask.ID,
		"ResponsesInput": []map[string]any{{"type": "mcp_approval_response", "approval_request_id": approvalID, "approve": true}}})

	d := e.messages(map[string]any{"SessionId": sid, "IncludeReasoning": true, "IncludeToolEvents": true})
	if got := roles(d.Messages); got != "uauaua"+"a" {
		t.Fatalf("roles %s: %+v", got, d.Messages)
	}
	if d.HasMore || d.NextCursor != nil || d.SessionId != sid {
		t.Errorf("page %+v", d)
	}
	m := d.Messages
	if m[0].Content.Text != "hello there" || m[1].Content.Text != "Echo: hello there" || m[1].ResponseId != first.ID {
		t.Errorf("first turn %+v %+v", m[0], m[1])
	}
	if len(m[1].Reasoning) != 1 || m[1].Blocks[0].Type != "thinking" || m[1].Blocks[1].Type != "text" {
		t.Errorf("first turn blocks %+v", m[1].Blocks)
	}
	// The tool turn: a tool block with its result, then the text.
	if b := m[3].Blocks; len(b) != 2 || b[0].Type != "tool" || b[0].Name != "lookup" || b[0].Status != "completed" || b[0].Result == nil || b[1].Type != "text" {
		t.Errorf("tool turn blocks %+v", m[3].Blocks)
	}
	// Event order: the approval turn has its text, the guarded call (decided: approved)
	// and the approval; the call runs in the resume turn, whose tool block has its
	// arguments and result, before the answer.
	b := m[5].Blocks
	if len(b) != 3 || b[0].Type != "text" || b[1].Type != "tool" || b[1].Status != "approved" || b[1].Result != nil ||
		b[2].Type != "approval" || b[2].Status != "approved" || b[2].ApprovalRequestId != approvalID {
		t.Errorf("approval turn blocks %+v", b)
	}
	if m[5].RunStatus != "interrupted" || m[5].ResponseId != ask.ID {
		t.Errorf("approval turn %+v", m[5])
	}
	if m[6].Content.Text != "Approved: deleted notes.txt." || m[6].Role != "assistant" {
		t.Errorf("resume turn %+v", m[6])
	}
	if r := m[6].Blocks; len(r) != 2 || r[0].Type != "tool" || r[0].Name != "delete_file" || r[0].Status != "completed" ||
		r[0].Result == nil || r[0].ToolCallId != b[1].ToolCallId || r[0].Args == nil || r[1].Type != "text" {
		t.Errorf("resume turn blocks %+v", r)
	}
	for _, msg := range m {
		if msg.MessageId == "" || msg.SeqId < msg.StartSeqId || msg.InvocationId == "" {
			t.Errorf("message %+v", msg)
		}
	}
	if d.LatestSeqId != e.lastSeq(sid) {
		t.Errorf("LatestSeqId %d, want %d", d.LatestSeqId, e.lastSeq(sid))
	}

	// Without the flags: no reasoning, no tool events, text only.
	d = e.messages(map[string]any{"SessionId": sid})
	for _, msg := range d.Messages {
		if len(msg.Reasoning) > 0 || len(msg.ToolEvents) > 0 {
			t.Errorf("unrequested detail in %+v", msg)
		}
		for _, b := range msg.Blocks {
			if b.Type != "text" {
				t.Errorf("unrequested block %+v", b)
			}
		}
	}
}

func (e *env) lastSeq(sessionID string) int64 {
	e.t.Helper()
	var d sessionData
	e.must("GetSession", map[string]any{"SessionId": sessionID}, &d)
	return d.Session.LatestSeqId
}

func TestListSessionMessagesPaging(t *testing.T) {
	e := newEnv(t)
	sid := e.run(map[string]any{"Messages": userMessages("turn one")}).SessionID
	for _, text := range []string{"turn two", "turn three", "turn four"} {
		e.run(map[string]any{"SessionId": sid, "Messages": userMessages(text)})
	}
	// Limit 3 cannot hold two turns of two messages: a page never splits a turn.
	var pages [][]messageRow
	body := map[string]any{"SessionId": sid, "Limit": 3}
	for {
		d := e.messages(body)
		pages = append(pages, d.Messages)
		if !d.HasMore {
			if d.NextCursor != nil {
				t.Errorf("last page has a cursor")
			}
			break
		}
		if d.NextCursor == nil || len(pages) > 5 {
			t.Fatalf("page %d: %+v", len(pages), d)
		}
		body["BeforeSeqId"] = *d.NextCursor
	}
	if len(pages) != 4 {
		t.Fatalf("%d pages", len(pages))
	}
	for i, want := range []string{"turn four", "turn three", "turn two", "turn one"} {
		p := pages[i]
		if len(p) != 2 || p[0].Content.Text != want || p[1].Content.Text != "Echo: "+want || p[0].InvocationId != p[1].InvocationId {
			t.Errorf("page %d: %+v", i, p)
		}
	}
	// Limit 4 holds two turns.
	d := e.messages(map[string]any{"SessionId": sid, "Limit": 4})
	if len(d.Messages) != 4 || d.Messages[0].Content.Text != "turn three" || !d.HasMore {
		t.Errorf("limit 4: %+v", d)
	}

	// Forward from a cursor: the turns after it, whole.
	latest := d.LatestSeqId
	e.run(map[string]any{"SessionId": sid, "Messages": userMessages("turn five")})
	f := e.messages(map[string]any{"SessionId": sid, "AfterSeqId": latest})
	if roles(f.Messages) != "ua" || f.Messages[0].Content.Text != "turn five" || f.HasMore || f.LatestSeqId != e.lastSeq(sid) {
		t.Errorf("forward: %+v", f)
	}
	// A cursor inside a turn still gets the whole turn.
	f = e.messages(map[string]any{"SessionId": sid, "AfterSeqId": latest + 2})
	if roles(f.Messages) != "ua" || f.Messages[0].Content.Text != "turn five" {
		t.Errorf("forward from inside a turn: %+v", f)
	}
	f = e.messages(map[string]any{"SessionId": sid, "AfterSeqId": 0, "Limit": 2})
	if roles(f.Messages) != "ua" || f.Messages[0].Content.Text != "turn one" || !f.HasMore {
		t.Errorf("forward from the start: %+v", f)
	}

	for _, tc := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"SessionId": sid, "Limit": 0}, 400, actions.CodeInvalidParameter},
		{map[string]any{"SessionId": sid, "Limit": 201}, 400, actions.CodeInvalidParameter},
		{map[string]any{"SessionId": sid, "AfterSeqId": -2}, 400, actions.CodeInvalidParameter},
		{map[string]any{"SessionId": sid, "IncludeToolEvents": "yes"}, 400, actions.CodeInvalidParameter},
		{map[string]any{"SessionId": sid, "UserId": "mallory"}, 404, actions.CodeNotFound},
		{map[string]any{}, 400, actions.CodeMissingParameter},
	} {
		wantError(t, e.post("ListSessionMessages", tc.body), tc.status, tc.code)
	}
}

func TestListSessionMessagesAttachments(t *testing.T) {
	e := newEnv(t)
	input := []map[string]any{{"role": "user", "content": []map[string]any{
		{"type": "input_text", "text": "look at this"},
		{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
		{"type": "input_file", "filename": "notes.txt", "file_url": "ksadk-upload://0123456789abcdef"},
	}}}
	sid := e.run(map[string]any{"ResponsesInput": input}).SessionID
	d := e.messages(map[string]any{"SessionId": sid})
	a := d.Messages[0].Attachments
	if len(a) != 2 || !a[0].IsImage || a[0].Mime != "image/png" || a[1].Name != "notes.txt" ||
		a[1].Url != actions.Prefix+"AttachmentContent?FileUri=ksadk-upload%3A%2F%2F0123456789abcdef" {
		t.Errorf("attachments %+v", a)
	}
	d = e.messages(map[string]any{"SessionId": sid, "IncludeAttachments": false})
	if len(d.Messages[0].Attachments) != 0 {
		t.Errorf("unrequested attachments %+v", d.Messages[0].Attachments)
	}
}
