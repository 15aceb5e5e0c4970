package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// listIDs lists a conversation's items (all of them, asc) and returns their ids and
// objects.
func listItems(t *testing.T, e *env, id string, headers ...string) []map[string]any {
	t.Helper()
	l := e.json("GET", "/v1/conversations/"+id+"/items?order=asc&limit=100", "", 200, headers...)
	if l["object"] != "list" || l["has_more"] != false {
		t.Fatalf("item list %v", l)
	}
	var out []map[string]any
	for _, d := range l["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itemSummary(items []map[string]any) string {
	var parts []string
	for _, it := range items {
		s := str(it["type"])
		if r := str(it["role"]); r != "" {
			s += ":" + r
		}
		if c, ok := it["content"].([]any); ok && len(c) > 0 {
			s += ":" + str(c[0].(map[string]any)["text"])
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

func inputTokens(r map[string]any) float64 {
	return r["usage"].(map[string]any)["input_tokens"].(float64)
}

func TestConversationsContinueAndList(t *testing.T) {
	e := newEnv(t, Config{})
	conv := e.json("POST", "/v1/conversations", `{"metadata":{"topic":"demo"},"items":[{"type":"message","role":"user","content":"alpha beta"},{"role":"assistant","content":[{"type":"output_text","text":"Echo: alpha beta"}]}]}`, 200)
	id := str(conv["id"])
	if !strings.HasPrefix(id, "conv_") || conv["object"] != "conversation" || conv["created_at"].(float64) <= 0 ||
		conv["metadata"].(map[string]any)["topic"] != "demo" || len(conv) != 4 {
		t.Fatalf("conversation %v", conv)
	}
	// The echo agent counts the words of history and input in input_tokens: the items
	// the conversation was created with are history (2 + 3), then the input (1).
	r1 := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":"gamma"}`, id), 200)
	if inputTokens(r1) != 6 || r1["conversation"].(map[string]any)["id"] != id {
		t.Fatalf("first turn: %v %v", r1["usage"], r1["conversation"])
	}
	// The model may be left out: the conversation names its agent.
	r2 := e.json("POST", "/v1/responses", fmt.Sprintf(`{"conversation":{"id":%q},"input":"delta"}`, id), 200)
	if inputTokens(r2) != 9 || r2["output_text"] != "Echo: delta" {
		t.Fatalf("second turn: %v %v", r2["usage"], r2["output_text"])
	}
	items := listItems(t, e, id)
	want := "message:user:alpha beta | message:assistant:Echo: alpha beta | message:user:gamma | reasoning | message:assistant:Echo: gamma | message:user:delta | reasoning | message:assistant:Echo: delta"
	if got := itemSummary(items); got != want {
		t.Fatalf("items\n got %s\nwant %s", got, want)
	}
	// A turn's output items are listed as the response returned them.
	for i, want := range append(r1["output"].([]any)[:2:2], r2["output"].([]any)...) {
		at := []int{3, 4, 6, 7}[i]
		if b, _ := json.Marshal(want); string(b) != string(mustJSON(t, items[at])) {
			t.Errorf("item %d: %v, response output %v", at, items[at], want)
		}
	}
	seen := map[string]bool{}
	for _, it := range items {
		if seen[str(it["id"])] || str(it["id"]) == "" {
			t.Errorf("item id %q repeated or empty", it["id"])
		}
		seen[str(it["id"])] = true
	}

	// Paging: newest first by default, limit and after.
	page := e.json("GET", "/v1/conversations/"+id+"/items?limit=5", "", 200)
	data := page["data"].([]any)
	if len(data) != 5 || page["has_more"] != true || page["first_id"] != items[7]["id"] || page["last_id"] != items[3]["id"] {
		t.Fatalf("first page %v", page)
	}
	rest := e.json("GET", "/v1/conversations/"+id+"/items?limit=5&after="+str(page["last_id"]), "", 200)
	if d := rest["data"].([]any); len(d) != 3 || rest["has_more"] != false || rest["last_id"] != items[0]["id"] {
		t.Fatalf("second page %v", rest)
	}
	e.json("GET", "/v1/conversations/"+id+"/items?include=message.output_text.logprobs", "", 200)

	// One item; deleting it answers with the conversation and takes it out of the
	// list and of the history the next turn sees (2 words fewer).
	first := str(items[0]["id"])
	got := e.json("GET", "/v1/conversations/"+id+"/items/"+first, "", 200)
	if got["id"] != first || got["role"] != "user" {
		t.Fatalf("item %v", got)
	}
	del := e.json("DELETE", "/v1/conversations/"+id+"/items/"+first, "", 200)
	if del["id"] != id || del["object"] != "conversation" {
		t.Fatalf("item delete answer %v", del)
	}
	if n := len(listItems(t, e, id)); n != len(items)-1 {
		t.Fatalf("%d items after delete", n)
	}
	e.apiErr("GET", "/v1/conversations/"+id+"/items/"+first, "", 404, "not_found")
	r3 := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":"epsilon"}`, id), 200)
	// The second turn's count plus "Echo: delta" (2) and "epsilon" (1), less the
	// deleted "alpha beta" (2).
	if inputTokens(r3) != inputTokens(r2)+2+1-2 {
		t.Errorf("third turn input_tokens %v: deleted item still in history (second turn %v)", inputTokens(r3), inputTokens(r2))
	}

	// Items added between turns are history too.
	added := e.json("POST", "/v1/conversations/"+id+"/items", `{"items":[{"type":"message","role":"user","content":[{"type":"input_text","text":"zeta eta"}]}]}`, 200)
	ad := added["data"].([]any)
	if len(ad) != 1 || added["first_id"] != ad[0].(map[string]any)["id"] || !strings.HasPrefix(str(added["first_id"]), "msg_") {
		t.Fatalf("added %v", added)
	}
	r4 := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":"theta"}`, id), 200)
	if inputTokens(r4) != inputTokens(r3)+2+2+1 { // "Echo: epsilon", "zeta eta", "theta"
		t.Errorf("fourth turn input_tokens %v after %v", inputTokens(r4), inputTokens(r3))
	}

	// Metadata is replaced by an update.
	up := e.json("POST", "/v1/conversations/"+id, `{"metadata":{"stage":"two"}}`, 200)
	if m := up["metadata"].(map[string]any); len(m) != 1 || m["stage"] != "two" {
		t.Fatalf("update %v", up)
	}
	if m := e.json("GET", "/v1/conversations/"+id, "", 200)["metadata"].(map[string]any); m["stage"] != "two" || m["topic"] != nil {
		t.Fatalf("metadata after update %v", m)
	}

	// Delete: gone for every call.
	d := e.json("DELETE", "/v1/conversations/"+id, "", 200)
	if d["id"] != id || d["object"] != "conversation.deleted" || d["deleted"] != true {
		t.Fatalf("delete %v", d)
	}
	e.apiErr("GET", "/v1/conversations/"+id, "", 404, "not_found")
	e.apiErr("GET", "/v1/conversations/"+id+"/items", "", 404, "not_found")
	e.apiErr("DELETE", "/v1/conversations/"+id, "", 404, "not_found")
}

func TestConversationsToolAndApprovalItems(t *testing.T) {
	e := newEnv(t, Config{})
	id := str(e.json("POST", "/v1/conversations", ``, 200)["id"])
	r := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":"use the tool on paris"}`, id), 200)
	ask := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":"please approve deleting notes.txt"}`, id), 200)
	apr := str(outputItem(ask, "mcp_approval_request")["id"])
	res := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":[{"type":"mcp_approval_response","approval_request_id":%q,"approve":true}]}`, id, apr), 200)
	items := listItems(t, e, id)
	var types []string
	for _, it := range items {
		types = append(types, str(it["type"]))
	}
	want := "message,mcp_call,message,message,message,mcp_approval_request,mcp_approval_response,mcp_call,message"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("item types\n got %s\nwant %s", got, want)
	}
	if items[1]["id"] != outputItem(r, "mcp_call")["id"] || items[5]["id"] != apr || items[6]["approval_request_id"] != apr ||
		items[7]["id"] != outputItem(res, "mcp_call")["id"] || items[7]["approval_request_id"] != apr {
		t.Errorf("items %v", items)
	}
	// The wire shapes, ids and times normalised.
	_, _, b := e.do("GET", "/v1/conversations/"+id+"/items?order=asc", "")
	golden(t, "conversation_items.json", indentRaw(t, normalise(b)))
	// The user messages are listed with the ids the responses' input items have.
	in := e.json("GET", "/v1/responses/"+str(r["id"])+"/input_items", "", 200)["data"].([]any)
	if items[0]["id"] != in[0].(map[string]any)["id"] {
		t.Errorf("user message id %v, input item %v", items[0]["id"], in[0])
	}
	// Deleting a server-side tool call drops its call and its result from history.
	e.json("DELETE", "/v1/conversations/"+id+"/items/"+str(items[1]["id"]), "", 200)
	if n := len(listItems(t, e, id)); n != len(items)-1 {
		t.Errorf("%d items after deleting the call", n)
	}
}

// An agent SDK's conversation session stores every item of a run, as the response gave
// it: reasoning and MCP items too. They are listed back as they came; history gets the
// messages.
func TestConversationsKeepEveryItemKind(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.json("POST", "/v1/responses", `{"model":"echo","input":"use the tool on paris"}`, 200)
	out, _ := json.Marshal(r["output"])
	id := str(e.json("POST", "/v1/conversations", ``, 200)["id"])
	added := e.json("POST", "/v1/conversations/"+id+"/items", `{"items":[{"type":"message","role":"user","content":"use the tool on paris"}]}`, 200)
	if len(added["data"].([]any)) != 1 {
		t.Fatalf("added %v", added)
	}
	added = e.json("POST", "/v1/conversations/"+id+"/items", `{"items":`+string(out)+`}`, 200)
	if got := len(added["data"].([]any)); got != len(r["output"].([]any)) {
		t.Fatalf("added %d of %d items: %v", got, len(r["output"].([]any)), added)
	}
	items := listItems(t, e, id)
	for i, o := range r["output"].([]any) {
		want := o.(map[string]any)
		got := items[i+1]
		if got["id"] != want["id"] || got["type"] != want["type"] {
			t.Errorf("item %d: %v, added %v", i+1, got, want)
		}
	}
	// The next turn's history: the user message and the answer (echo counts 5 + 11
	// words), then its own input.
	next := e.json("POST", "/v1/responses", fmt.Sprintf(`{"conversation":%q,"input":"again"}`, id), 200)
	if inputTokens(next) != 5+11+1 {
		t.Errorf("input_tokens %v", inputTokens(next))
	}
}

func TestConversationsTenantsAndAgents(t *testing.T) {
	e := newEnv(t, Config{})
	id := str(e.json("POST", "/v1/conversations", `{}`, 200, HeaderUser, "alice")["id"])
	e.json("GET", "/v1/conversations/"+id, "", 200, HeaderUser, "alice")
	for _, p := range []struct{ method, path, body string }{
		{"GET", "/v1/conversations/" + id, ""},
		{"POST", "/v1/conversations/" + id, `{"metadata":{}}`},
		{"DELETE", "/v1/conversations/" + id, ""},
		{"GET", "/v1/conversations/" + id + "/items", ""},
		{"POST", "/v1/conversations/" + id + "/items", `{"items":[{"role":"user","content":"x"}]}`},
	} {
		e.apiErr(p.method, p.path, p.body, 404, "not_found", HeaderUser, "bob")
	}
	e.json("GET", "/v1/conversations/"+id, "", 200, HeaderUser, "alice")
	// A conversation belongs to the agent it was created with: the first hosted one,
	// or the one the create request names in model.
	other := str(e.json("POST", "/v1/conversations", `{"model":"echo2"}`, 200)["id"])
	e.apiErr("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":%q,"input":"x"}`, other), 400, "invalid_value")
	if r := e.json("POST", "/v1/responses", fmt.Sprintf(`{"conversation":%q,"input":"x"}`, other), 200); r["model"] != "echo2" {
		t.Errorf("model %v", r["model"])
	}
	e.apiErr("POST", "/v1/conversations", `{"model":"nope"}`, 404, "model_not_found")
}

func TestConversationsErrors(t *testing.T) {
	e := newEnv(t, Config{})
	id := str(e.json("POST", "/v1/conversations", `{}`, 200)["id"])
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code, param              string
	}{
		{"metadata type", "POST", "/v1/conversations", `{"metadata":{"a":1}}`, 400, "invalid_type", "metadata.a"},
		{"items type", "POST", "/v1/conversations", `{"items":{}}`, 400, "invalid_type", "items"},
		{"system item", "POST", "/v1/conversations", `{"items":[{"role":"system","content":"x"}]}`, 400, "unsupported_value", "items[0].role"},
		{"item reference", "POST", "/v1/conversations", `{"items":[{"type":"item_reference","id":"msg_x"}]}`, 400, "unsupported_value", "items[0].type"},
		{"not json", "POST", "/v1/conversations", `{`, 400, "invalid_json", ""},
		{"update without metadata", "POST", "/v1/conversations/" + id, `{}`, 400, "missing_required_parameter", "metadata"},
		{"items required", "POST", "/v1/conversations/" + id + "/items", `{}`, 400, "missing_required_parameter", "items"},
		{"limit", "GET", "/v1/conversations/" + id + "/items?limit=0", "", 400, "invalid_value", "limit"},
		{"order", "GET", "/v1/conversations/" + id + "/items?order=up", "", 400, "invalid_value", "order"},
		{"after", "GET", "/v1/conversations/" + id + "/items?after=msg_none", "", 400, "invalid_value", "after"},
		{"include", "GET", "/v1/conversations/" + id + "/items?include=everything", "", 400, "unsupported_value", "include"},
		{"unknown conversation", "GET", "/v1/conversations/conv_none", "", 404, "not_found", "conversation_id"},
		{"unknown item", "DELETE", "/v1/conversations/" + id + "/items/msg_none", "", 404, "not_found", "item_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := e.apiErr(c.method, c.path, c.body, c.status, c.code)
			if c.param != "" && obj["param"] != c.param {
				t.Errorf("param %v, want %s (%v)", obj["param"], c.param, obj["message"])
			}
		})
	}
	// A conversation takes at most 20 items per request.
	many := strings.Repeat(`{"role":"user","content":"x"},`, 21)
	e.apiErr("POST", "/v1/conversations", `{"items":[`+many[:len(many)-1]+`]}`, 400, "invalid_value")
	if status, _, _ := e.do(http.MethodGet, "/v1/conversations/"+id, ""); status != 200 {
		t.Errorf("conversation gone after bad requests: %d", status)
	}
}
