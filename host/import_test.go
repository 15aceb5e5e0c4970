package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func TestImportEvents(t *testing.T) {
	ctx := context.Background()
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "meta", Runner: serve(t, metaAgent{})}}})
	s, err := rt.CreateSession(ctx, session.Key{App: "meta", User: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	user := session.MustJSON(session.NewUserMessageData("hi", nil))
	for name, ev := range map[string]session.NewEvent{
		"a type runs write":  {Type: session.TypeRunStatus, InvocationID: "i1", Author: "meta", Data: session.MustJSON(session.RunStatusData{Status: session.StatusCompleted})},
		"no invocation":      {Type: session.TypeUserMessage, Author: "user", Data: user},
		"an approval answer": {Type: session.TypeApprovalResponse, InvocationID: "i1", Author: "user", Data: session.MustJSON(session.ApprovalResponseData{ApprovalRequestID: "a"})},
	} {
		if _, err := rt.ImportEvents(ctx, s.Key, ev); !errors.Is(err, host.ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
	evs, err := rt.ImportEvents(ctx, s.Key,
		session.NewEvent{Type: session.TypeUserMessage, InvocationID: "i1", Author: "user", Data: user},
		session.NewEvent{Type: session.TypeAssistantMessage, InvocationID: "i1", Author: "meta", Data: session.MustJSON(session.AssistantMessageData{Text: "hello"})},
	)
	if err != nil || len(evs) != 2 || evs[1].Type != session.TypeAssistantMessage || evs[1].InvocationID != "i1" {
		t.Fatalf("import = %+v, %v", evs, err)
	}
	if _, err := rt.ImportEvents(ctx, session.Key{App: "meta", User: "u1", ID: "nope"}, session.NewEvent{Type: session.TypeUserMessage, InvocationID: "i", Author: "user", Data: user}); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("into a missing session: %v", err)
	}
}
