package adkweb

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"testing"
)

// adkExport is a session as `adk api_server` (google-adk 2.13) returned it for
// examples/adk-assistant: the file ADK's dev UI exports and imports.
const adkExport = "../../cmd/agentengine/testdata/adk_api_server/session.json"

// withoutIDs drops what an import does not keep: event ids (call ids stay), times
// (ADK's dev UI sets them to the import's) and the app's name.
func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			switch k {
			case "timestamp", "lastUpdateTime", "appName":
				continue
			case "id":
				if _, event := x["invocationId"]; event {
					continue
				}
			}
			out[k] = withoutIDs(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = withoutIDs(x[i])
		}
		return out
	}
	return v
}

// TestImportedADKSessionExportsAsItWasImported: a session exported by ADK, imported
// through POST .../sessions {events, state} (as ADK's dev UI imports), is read back with
// the same events, field by field, and the same state.
func TestImportedADKSessionExportsAsItWasImported(t *testing.T) {
	b, err := os.ReadFile(adkExport)
	if err != nil {
		t.Fatal(err)
	}
	var exported []map[string]any
	if err := json.Unmarshal(b, &exported); err != nil {
		t.Fatal(err)
	}
	src := exported[0]
	e := newEnv(t)
	body, _ := json.Marshal(map[string]any{"events": src["events"], "state": src["state"]})
	created := e.obj("POST", "/apps/echo/users/u1/sessions", string(body), http.StatusOK)
	got := e.obj("GET", "/apps/echo/users/u1/sessions/"+str(created["id"]), "", http.StatusOK)
	// The import is answered with the session's events, as ADK answers.
	if w, g := withoutIDs(got["events"]), withoutIDs(created["events"]); !reflect.DeepEqual(w, g) {
		t.Errorf("the import's answer differs from the session:\n%v\n%v", g, w)
	}
	if w, g := withoutIDs(src["events"]), withoutIDs(got["events"]); !reflect.DeepEqual(w, g) {
		for _, d := range diffs(w, g, "$") {
			t.Error(d)
		}
	}
	if !reflect.DeepEqual(got["state"], src["state"]) {
		t.Errorf("state %v, want %v", got["state"], src["state"])
	}
	// The invocations stay ADK's.
	if inv := got["events"].([]any)[0].(map[string]any)["invocationId"]; inv != src["events"].([]any)[0].(map[string]any)["invocationId"] {
		t.Errorf("invocation %v", inv)
	}
}

func TestImportErrors(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"events":{}}`, 422},
		{`{"events":[1]}`, 422},
		{`{"events":[{"author":"a","content":{"parts":[{"executableCode":{"code":"1"}}]}}]}`, 400},
		{`{"events":[{"author":"a","content":{"parts":[{"text":5}]}}]}`, 422},
	} {
		if status, _, b := e.do("POST", "/apps/echo/users/u1/sessions", tc.body); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, status, b, tc.status)
		}
	}
	if l := e.json("GET", "/apps/echo/users/u1/sessions", "", http.StatusOK).([]any); len(l) != 0 {
		t.Errorf("failed imports left sessions: %v", l)
	}
}

// diffs lists where a and b differ, by path.
func diffs(a, b any, path string) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out []string
		for k := range am {
			out = append(out, diffs(am[k], bm[k], path+"."+k)...)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				out = append(out, diffs(nil, bm[k], path+"."+k)...)
			}
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, diffs(al[i], bl[i], path+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return []string{path + ": want " + string(aj) + ", got " + string(bj)}
}
