package host

import (
	"fmt"
	"testing"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// BenchmarkRunRequestLongHistory measures building a turn's run request on a session of
// 10,000 events (2,000 turns of five), its history cached as between turns: what the
// turn costs the host for the history it sends. One op is one request.
func BenchmarkRunRequestLongHistory(b *testing.B) {
	ctx := b.Context()
	st := memory.New()
	rt, err := New(Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	key := session.Key{App: "a", User: "u", ID: "s"}
	if _, err := st.CreateSession(ctx, key); err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		inv := fmt.Sprint("inv_", i)
		text := func(typ, author, s string) session.NewEvent {
			data := session.MustJSON(session.AssistantMessageData{Text: s})
			if typ == session.TypeUserMessage {
				data = session.MustJSON(session.UserMessageData{Text: s})
			}
			return session.NewEvent{InvocationID: inv, Type: typ, Author: author, ItemID: typ[:4] + inv, Data: data}
		}
		status := func(s string) session.NewEvent {
			return session.NewEvent{InvocationID: inv, Type: session.TypeRunStatus, Author: "agent",
				Data: session.MustJSON(session.RunStatusData{Status: s})}
		}
		if _, err := st.Append(ctx, key, text(session.TypeUserMessage, "user", "hello there"), status(session.StatusInProgress),
			text(session.TypeReasoning, "agent", "thinking"), text(session.TypeAssistantMessage, "agent", "echo: hello there"),
			status(session.StatusCompleted)); err != nil {
			b.Fatal(err)
		}
	}
	sess, err := st.GetSession(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	state := session.State{App: map[string]any{}, User: map[string]any{}, Session: map[string]any{}}
	req := TurnRequest{App: "a", User: "u", SessionID: key.ID, InvocationID: "inv_next",
		Input: Input{Content: []session.ContentBlock{{Type: "input_text", Text: "hello there"}}}}
	caps := &runnerv1.Capabilities{ExpandsPayload: true}
	if _, err := rt.buildRunRequest(ctx, &sess, &state, req, nil, sess.LastSeq+1, nil, caps); err != nil {
		b.Fatal(err) // fills the history cache, as the turns before would have
	}
	b.ReportAllocs()
	for b.Loop() {
		rr, err := rt.buildRunRequest(ctx, &sess, &state, req, nil, sess.LastSeq+1, nil, caps)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(rr.GetPayloadJson())))
	}
}
