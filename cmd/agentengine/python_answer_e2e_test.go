package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestPythonAnswersOnce serves testdata/pyfinalize: a specialist subgraph streams the
// answer, then finalize_answer writes it again as an AIMessage of its own. Every surface
// must carry the answer once: Responses (streamed and not: one message item), Chat
// Completions, the ADK web API's /run and the action API's RunAgent.
func TestPythonAnswersOnce(t *testing.T) {
	dir := copyPyProject(t, "testdata/pyfinalize", "")
	s := startPython(t, dir)
	const (
		model    = "pyfinalize"
		question = "what is the weather in city=Paris"
		answer   = "Done. get_weather returned: sunny and 21 C in Paris."
	)
	once := func(t *testing.T, surface, got string) {
		t.Helper()
		if got != answer {
			t.Errorf("%s: %q, want the answer once: %q\n%s", surface, got, answer, s.logs)
		}
	}
	messageTexts := func(output []any) []string {
		var texts []string
		for _, it := range output {
			item, _ := it.(map[string]any)
			if item["type"] != "message" {
				continue
			}
			content, _ := item["content"].([]any)
			for _, c := range content {
				part, _ := c.(map[string]any)
				if text, ok := part["text"].(string); ok {
					texts = append(texts, text)
				}
			}
		}
		return texts
	}

	t.Run("responses streamed", func(t *testing.T) {
		tr := streamTurn(t, s.url, map[string]any{"model": model, "input": question}, nil)
		once(t, "output_text deltas", tr.text)
		output, _ := tr.response["output"].([]any)
		if texts := messageTexts(output); len(texts) != 1 || texts[0] != answer {
			t.Errorf("message items %q, want one with %q", texts, answer)
		}
		if tr.callNamed("get_weather") == nil {
			t.Errorf("no get_weather call in %v", tr.calls)
		}
	})
	t.Run("responses", func(t *testing.T) {
		r := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": model, "input": question}))
		once(t, "output_text", str(r["output_text"]))
		output, _ := r["output"].([]any)
		if texts := messageTexts(output); len(texts) != 1 || texts[0] != answer {
			t.Errorf("message items %q, want one with %q", texts, answer)
		}
	})
	t.Run("chat completions", func(t *testing.T) {
		r := decode(t, post(t, s.url+"/v1/chat/completions", map[string]any{
			"model": model, "messages": []any{map[string]any{"role": "user", "content": question}},
		}))
		choices, _ := r["choices"].([]any)
		if len(choices) != 1 {
			t.Fatalf("choices %v", r)
		}
		msg, _ := choices[0].(map[string]any)["message"].(map[string]any)
		once(t, "message content", str(msg["content"]))
	})
	t.Run("adk run", func(t *testing.T) {
		resp := post(t, s.url+"/apps/"+model+"/users/u1/sessions", map[string]any{})
		sid := str(decode(t, resp)["id"])
		resp = post(t, s.url+"/run", map[string]any{
			"appName": model, "userId": "u1", "sessionId": sid,
			"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": question}}},
		})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/run: %d", resp.StatusCode)
		}
		events := decodeList(t, resp)
		var text strings.Builder
		for _, ev := range events {
			if partial, _ := ev["partial"].(bool); partial {
				continue
			}
			content, _ := ev["content"].(map[string]any)
			if content["role"] != "model" {
				continue
			}
			parts, _ := content["parts"].([]any)
			for _, p := range parts {
				part, _ := p.(map[string]any)
				if txt, ok := part["text"].(string); ok && part["thought"] != true {
					text.WriteString(txt)
				}
			}
		}
		once(t, "model text parts", text.String())
	})
	t.Run("action RunAgent", func(t *testing.T) {
		r := decode(t, post(t, s.url+"/agentengine/api/v1/RunAgent", map[string]any{
			"AgentId":  model,
			"Messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": question}}}},
		}))
		data, _ := r["Data"].(map[string]any)
		once(t, "Data.output_text", str(data["output_text"]))
		output, _ := data["output"].([]any)
		if texts := messageTexts(output); len(texts) != 1 {
			t.Errorf("message items %q, want one", texts)
		}
		chat := decode(t, post(t, s.url+"/agentengine/api/v1/RunAgent", map[string]any{
			"AgentId": model, "ApiFormat": "chat_completions",
			"Messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": question}}}},
		}))
		data, _ = chat["Data"].(map[string]any)
		choices, _ := data["choices"].([]any)
		if len(choices) != 1 {
			t.Fatalf("chat format: %v", chat)
		}
		msg, _ := choices[0].(map[string]any)["message"].(map[string]any)
		once(t, "chat format content", str(msg["content"]))
	})
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func decodeList(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var l []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPythonInputHookKeepsTheConversation serves testdata/pyinputhook: create_agent with
// a ksadk_prepare_state that returns only {"input": text}. A continued conversation
// (previous_response_id, a Chat Completions session_id) must reach the model with the
// earlier turns and the new message.
func TestPythonInputHookKeepsTheConversation(t *testing.T) {
	dir := copyPyProject(t, "testdata/pyinputhook", "")
	s := startPython(t, dir)
	const model = "pyinputhook"

	first := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": model, "input": "my name is Ada"}))
	if got, want := str(first["output_text"]), "1 user messages: my name is Ada; 0 answers"; got != want {
		t.Fatalf("first turn: %q, want %q\n%s", got, want, s.logs)
	}
	second := decode(t, post(t, s.url+"/v1/responses", map[string]any{
		"model": model, "input": "what is my name?", "previous_response_id": first["id"],
	}))
	if got, want := str(second["output_text"]), "2 user messages: my name is Ada | what is my name?; 1 answers"; got != want {
		t.Errorf("previous_response_id: the model received %q, want %q\n%s", got, want, s.logs)
	}

	chat := func(text string) string {
		r := decode(t, post(t, s.url+"/v1/chat/completions", map[string]any{
			"model": model, "session_id": "hook-session",
			"messages": []any{map[string]any{"role": "user", "content": text}},
		}))
		choices, _ := r["choices"].([]any)
		if len(choices) != 1 {
			t.Fatalf("chat: %v", r)
		}
		msg, _ := choices[0].(map[string]any)["message"].(map[string]any)
		return str(msg["content"])
	}
	chat("I live in Paris")
	if got, want := chat("where do I live?"), "2 user messages: I live in Paris | where do I live?; 1 answers"; got != want {
		t.Errorf("session_id: the model received %q, want %q\n%s", got, want, s.logs)
	}
}
