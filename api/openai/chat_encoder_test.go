package openai

import (
	"bytes"
	"testing"

	"github.com/agentengine/agentengine/host"
)

func chatTranscript(evs []host.Event, opts chatOptions) []byte {
	var b bytes.Buffer
	enc := newChatEncoder("chatcmpl-test", "echo", "sess_test", testTime.Unix(), opts, true)
	write := func(lines [][]byte) {
		for _, l := range lines {
			b.WriteString("data: ")
			b.Write(l)
			b.WriteString("\n\n")
		}
	}
	write(enc.Start())
	for _, ev := range evs {
		write(enc.Add(ev))
		if enc.Ended() {
			b.WriteString("data: [DONE]\n\n")
			break
		}
	}
	return b.Bytes()
}

func chatResult(evs []host.Event) (chatCompletion, *apiError) {
	enc := newChatEncoder("chatcmpl-test", "echo", "sess_test", testTime.Unix(), chatOptions{}, false)
	for _, ev := range evs {
		enc.Add(ev)
	}
	return enc.Completion()
}

// checkChatStream asserts openai-wire.md §3.2 and returns the accumulated content,
// tool calls and finish reason (or the in-band error).
func checkChatStream(t *testing.T, evs []wireEvent) (content string, calls []map[string]any, finish string, errObj map[string]any) {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Raw != "[DONE]" {
		t.Fatalf("chat stream does not end with [DONE]")
	}
	var id string
	for i, ev := range evs[:len(evs)-1] {
		if ev.Name != "" {
			t.Errorf("chunk %d has an event: line", i)
		}
		if e, ok := ev.Data["error"]; ok {
			if i != len(evs)-2 {
				t.Errorf("error chunk is not last")
			}
			errObj, _ = e.(map[string]any)
			continue
		}
		if ev.Data["object"] != "chat.completion.chunk" {
			t.Errorf("chunk %d object %v", i, ev.Data["object"])
		}
		if id == "" {
			id = str(ev.Data["id"])
		} else if str(ev.Data["id"]) != id {
			t.Errorf("chunk %d id changed", i)
		}
		choices, _ := ev.Data["choices"].([]any)
		if len(choices) == 0 {
			if ev.Data["usage"] == nil {
				t.Errorf("chunk %d has no choices and no usage", i)
			}
			continue
		}
		ch := choices[0].(map[string]any)
		delta := ch["delta"].(map[string]any)
		if role, ok := delta["role"]; ok != (i == 0) || (ok && role != "assistant") {
			t.Errorf("chunk %d: role %v (role must be sent once, first)", i, role)
		}
		content += str(delta["content"])
		if tcs, ok := delta["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				m := tc.(map[string]any)
				if num(m["index"]) != len(calls) || str(m["id"]) == "" || m["type"] != "function" {
					t.Errorf("tool call delta %v", m)
				}
				calls = append(calls, m)
			}
		}
		if fr, ok := ch["finish_reason"].(string); ok {
			finish = fr
		}
	}
	return
}

func TestChatStreamGolden(t *testing.T) {
	want := map[string]struct{ finish, content string }{
		"text":     {"stop", "Echo: hi"},
		"tool":     {"stop", "Found it."},
		"approval": {"stop", "I need approval.\n\n" + approvalText("delete_file", `{"path":"notes.txt"}`, "apr_3")},
		"failure":  {"", "Partial"},
	}
	for name, evs := range scenarios() {
		w, ok := want[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			tr := chatTranscript(evs, chatOptions{IncludeUsage: true})
			golden(t, "chat_stream_"+name+".sse", tr)
			content, calls, finish, errObj := checkChatStream(t, parseSSE(t, tr))
			if content != w.content || finish != w.finish {
				t.Errorf("content %q finish %q; want %q %q", content, finish, w.content, w.finish)
			}
			cc, aerr := chatResult(evs)
			if name == "failure" {
				if errObj == nil || aerr == nil || aerr.Status != 500 {
					t.Fatalf("failure: stream error %v, object error %v", errObj, aerr)
				}
				return
			}
			if aerr != nil {
				t.Fatal(aerr)
			}
			golden(t, "chat_object_"+name+".json", indent(cc))
			msg := cc.Choices[0].Message
			if got := ""; msg.Content != nil {
				got = *msg.Content
				if got != content {
					t.Errorf("object content %q, stream %q", got, content)
				}
			}
			if len(msg.ToolCalls) != len(calls) || cc.Choices[0].FinishReason != finish {
				t.Errorf("object tool calls %d finish %s; stream %d %s", len(msg.ToolCalls), cc.Choices[0].FinishReason, len(calls), finish)
			}
		})
	}
}

func TestChatStreamWithoutUsage(t *testing.T) {
	tr := chatTranscript(scenarios()["text"], chatOptions{})
	for _, ev := range parseSSE(t, tr) {
		if ev.Raw == "[DONE]" {
			continue
		}
		if choices, _ := ev.Data["choices"].([]any); len(choices) == 0 {
			t.Errorf("empty-choices chunk sent without include_usage")
		}
		if _, ok := ev.Data["usage"]; ok {
			t.Errorf("usage sent without include_usage")
		}
	}
}

func TestChatMultipleMessages(t *testing.T) {
	evs := (&journal{}).opening().
		text("msg_1", "One.").stored("assistant_message", "msg_1", map[string]string{"text": "One."}).
		stored("tool_call", "fc_1", map[string]string{"call_id": "c", "name": "n", "arguments": "{}"}).
		stored("assistant_message", "msg_2", map[string]string{"text": "Two."}).
		end("completed", nil, nil)
	content, _, _, _ := checkChatStream(t, parseSSE(t, chatTranscript(evs, chatOptions{})))
	cc, _ := chatResult(evs)
	if content != "One.\n\nTwo." || *cc.Choices[0].Message.Content != content {
		t.Errorf("stream %q object %q", content, *cc.Choices[0].Message.Content)
	}
}

func TestChatReasoningExtension(t *testing.T) {
	evs := scenarios()["text"]
	with := chatTranscript(evs, chatOptions{Reasoning: true})
	without := chatTranscript(evs, chatOptions{})
	if !bytes.Contains(with, []byte(`"reasoning_content":"Thinking "`)) || bytes.Contains(without, []byte("reasoning_content")) {
		t.Errorf("reasoning_content must appear only with the extension")
	}
}

func TestChatCancelled(t *testing.T) {
	_, aerr := chatResult(scenarios()["cancelled"])
	if aerr == nil || aerr.Code != "run_cancelled" {
		t.Fatalf("cancelled run: %v", aerr)
	}
}

// The KsADK switch keeps approval requests as tool_calls.
func TestChatApprovalKsadkGolden(t *testing.T) {
	evs := scenarios()["approval"]
	tr := chatTranscript(evs, chatOptions{IncludeUsage: true, Ksadk: true})
	golden(t, "chat_stream_approval_ksadk.sse", tr)
	content, calls, finish, _ := checkChatStream(t, parseSSE(t, tr))
	if content != "I need approval." || finish != "tool_calls" || len(calls) != 1 || str(calls[0]["id"]) != "call_3" {
		t.Errorf("content %q finish %q calls %v", content, finish, calls)
	}
}

func TestChatVerdict(t *testing.T) {
	for in, want := range map[string]struct {
		approve bool
		reason  string
		ok      bool
	}{
		"approve": {true, "", true}, " Approved.": {true, "", true}, "yes": {true, "", true},
		"reject: keep it": {false, "keep it", true}, "no thanks": {false, "thanks", true}, "deny": {false, "", true},
		"approve deleting notes.txt": {true, "deleting notes.txt", true}, "hello": {false, "", false}, "": {false, "", false},
	} {
		a, r, ok := chatVerdict(in)
		if a != want.approve || r != want.reason || ok != want.ok {
			t.Errorf("chatVerdict(%q) = %v %q %v", in, a, r, ok)
		}
	}
}
