package adkweb

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAgentGraphDrawnByTheRunner: ADK's agent graph as google-adk draws it in the agent's
// runner: the base graph (light and dark), and an event's graph with its calls
// highlighted as ADK's dev server highlights them (the agent and the tool it called, the
// tool that answered, the author of a plain answer); an event or session that does not
// exist gets {}; a bad dark_mode ADK's 422.
func TestAgentGraphDrawnByTheRunner(t *testing.T) {
	e := newADKEnv(t)
	dev := "/dev/apps/" + adkApp

	light := str(e.obj("GET", dev+"/graph", "", http.StatusOK)["dotSrc"])
	dark := str(e.obj("GET", dev+"/graph?dark_mode=true", "", http.StatusOK)["dotSrc"])
	if !strings.Contains(light, "digraph") || !strings.Contains(light, "get_weather") || !strings.Contains(light, "assistant") {
		t.Fatalf("base graph = %q", light)
	}
	if dark == light || dark == "" {
		t.Errorf("the dark graph is the light one: %q", dark)
	}

	sid := str(e.obj("POST", "/apps/"+adkApp+"/users/u1/sessions", `{}`, http.StatusOK)["id"])
	body, _ := json.Marshal(map[string]any{"appName": adkApp, "userId": "u1", "sessionId": sid,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "the weather in Paris"}}}})
	events, ok := e.json("POST", "/run", string(body), http.StatusOK).([]any)
	if !ok || len(events) == 0 {
		t.Fatalf("run answered %v", events)
	}
	graphs := map[string]string{}
	for _, raw := range events {
		ev := raw.(map[string]any)
		kind := "text"
		if parts, _ := ev["content"].(map[string]any)["parts"].([]any); len(parts) > 0 {
			p := parts[0].(map[string]any)
			if p["functionCall"] != nil {
				kind = "call"
			} else if p["functionResponse"] != nil {
				kind = "answer"
			}
		}
		for _, base := range []string{dev, "/apps/" + adkApp} { // google-adk 2.x and 1.x paths
			g := e.obj("GET", base+"/users/u1/sessions/"+sid+"/events/"+str(ev["id"])+"/graph", "", http.StatusOK)
			graphs[kind] = str(g["dotSrc"])
		}
	}
	for _, kind := range []string{"call", "answer", "text"} {
		g, ok := graphs[kind]
		if !ok || !strings.Contains(g, "digraph") {
			t.Fatalf("no %s event graph: %v", kind, graphs)
		}
		if g == light {
			t.Errorf("the %s event's graph highlights nothing: %q", kind, g)
		}
	}
	if graphs["call"] == graphs["text"] {
		t.Errorf("a call and a plain answer are highlighted alike")
	}

	for _, path := range []string{
		dev + "/users/u1/sessions/" + sid + "/events/nope/graph",
		dev + "/users/u1/sessions/gone/events/nope/graph",
	} {
		if got := e.obj("GET", path, "", http.StatusOK); len(got) != 0 {
			t.Errorf("%s = %v, want {}", path, got)
		}
	}
	status, _, b := e.do("GET", dev+"/graph?dark_mode=maybe", "")
	if status != http.StatusUnprocessableEntity || !strings.Contains(detailOf(t, "bad dark_mode", b), "bool_parsing") {
		t.Errorf("dark_mode=maybe: %d %s", status, b)
	}
}
