package host_test

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/host"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// rawRunner records the requests the host sends and can hide that the runner expands
// payloads, as a runner built with an older SDK would.
type rawRunner struct {
	runnerv1.RunnerClient
	noExpand bool
	mu       sync.Mutex
	reqs     []*runnerv1.RunRequest
}

func (r *rawRunner) Describe(ctx context.Context, in *runnerv1.DescribeRequest, opts ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	d, err := r.RunnerClient.Describe(ctx, in, opts...)
	if err == nil && r.noExpand {
		d.Capabilities.ExpandsPayload = false
	}
	return d, err
}

func (r *rawRunner) Run(ctx context.Context, in *runnerv1.RunRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, in)
	r.mu.Unlock()
	return r.RunnerClient.Run(ctx, in, opts...)
}

func keysOf(t *testing.T, doc []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A runner that expands payloads gets the input once and the history once; one that
// does not gets the derived fields and the history twice; the agent code sees the same
// documents either way.
func TestRunRequestIsCompactForARunnerThatExpandsIt(t *testing.T) {
	seen := map[bool]*runnerPayloads{}
	for _, noExpand := range []bool{false, true} {
		f := &fixture{store: memory.New(), agent: &scripted{started: make(chan struct{}, 1)}}
		raw := &rawRunner{RunnerClient: serve(t, f.agent), noExpand: noExpand}
		f.rt = startRuntime(t, host.Config{Store: f.store, Agents: []host.Agent{{Name: "scripted", Runner: raw}}})
		r, _ := f.turn(t, host.TurnRequest{Input: text("one")})
		in := host.Input{Content: []session.ContentBlock{{Type: "input_text", Text: "two"},
			{Type: "input_image", ImageURL: "data:image/png;base64,AAAA", Filename: "a.png"}},
			Items: []json.RawMessage{json.RawMessage(`{"type":"function_call_output","call_id":"c0","output":"x"}`)}}
		f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: in})

		last := raw.reqs[len(raw.reqs)-1]
		payload, sctx := keysOf(t, last.PayloadJson), keysOf(t, last.SessionContextJson)
		_, hasMsgs := payload["input_messages"]
		_, hasParts := payload["input_parts"]
		_, hasHist := sctx["history"]
		_, hasInput := payload["input"]
		if full := noExpand; hasMsgs != full || hasParts != full || hasHist != full || hasInput != full {
			t.Errorf("noExpand=%t: input %t, input_messages %t, input_parts %t, session history %t", noExpand, hasInput, hasMsgs, hasParts, hasHist)
		}
		req := f.agent.last()
		if len(req.Payload.InputMessages) != 2 || len(req.Payload.InputParts) != 2 || len(req.Context.History) != 3 { // the first exchange, then the client's item
			t.Errorf("noExpand=%t: the agent saw %d input messages, %d parts, %d history messages", noExpand,
				len(req.Payload.InputMessages), len(req.Payload.InputParts), len(req.Context.History))
		}
		if req.Payload.InputText() != "two" {
			t.Errorf("noExpand=%t: the agent saw input %s", noExpand, req.Payload.Input)
		}
		seen[noExpand] = &runnerPayloads{req.Payload.Input, req.Payload.InputMessages, req.Payload.InputParts, req.Context.History}
	}
	if !reflect.DeepEqual(seen[false], seen[true]) {
		t.Errorf("the agent saw different documents:\n%+v\n%+v", seen[false], seen[true])
	}
}

type runnerPayloads struct {
	input       json.RawMessage
	msgs, parts []json.RawMessage
	history     []session.Message
}

// batchStream replays fixed runner messages.
type batchStream struct {
	grpc.ClientStream
	msgs []*runnerv1.RunEvent
}

func (s *batchStream) Recv() (*runnerv1.RunEvent, error) {
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	ev := s.msgs[0]
	s.msgs = s.msgs[1:]
	return ev, nil
}

// batchRunner answers every run with one text delta, then the rest of the turn as one
// batch message, as the Python SDK sends what it deferred.
type batchRunner struct{ runnerv1.RunnerClient }

func (batchRunner) Run(context.Context, *runnerv1.RunRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	text := func(s string) *runnerv1.RunEvent {
		return &runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: s}}}
	}
	batch := &runnerv1.RunEventBatch{Events: []*runnerv1.RunEvent{
		text("world"),
		{Event: &runnerv1.RunEvent_MessageDone{MessageDone: &runnerv1.MessageDone{}}},
		{Event: &runnerv1.RunEvent_Usage{Usage: &runnerv1.Usage{InputTokens: 2, OutputTokens: 5}}},
	}}
	return &batchStream{msgs: []*runnerv1.RunEvent{text("hello "), {Event: &runnerv1.RunEvent_Batch{Batch: batch}}}}, nil
}

func TestABatchMessageIsHandledEventByEvent(t *testing.T) {
	f := &fixture{store: memory.New(), agent: &scripted{}}
	f.rt = startRuntime(t, host.Config{Store: f.store, Agents: []host.Agent{{Name: "scripted", Runner: batchRunner{serve(t, f.agent)}}}})
	_, evs := f.turn(t, host.TurnRequest{Input: text("hi")})
	var answer string
	for _, e := range evs {
		if e.Kind == host.KindStored && e.Stored.Type == session.TypeAssistantMessage {
			var d session.AssistantMessageData
			if err := json.Unmarshal(e.Stored.Data, &d); err != nil {
				t.Fatal(err)
			}
			answer = d.Text
		}
	}
	if st := terminal(t, evs); answer != "hello world" || st.Status != session.StatusCompleted || st.Usage == nil || st.Usage.OutputTokens != 5 {
		t.Errorf("answer %q, terminal %+v", answer, st)
	}
}
