package langgraph

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("event id %q is not a number", s)
	}
	return n
}

func TestInfoAndAssistants(t *testing.T) {
	e := newEnv(t)
	if ok := e.obj("GET", "/ok", "", http.StatusOK); ok["ok"] != true {
		t.Fatalf("/ok: %v", ok)
	}
	if info := e.obj("GET", "/info", "", http.StatusOK); info["version"] != "test" {
		t.Fatalf("/info: %v", info)
	}
	all := e.list("POST", "/assistants/search", `{}`, http.StatusOK)
	if len(all) != 2 {
		t.Fatalf("assistants: %v (the go agent is no assistant)", all)
	}
	a := all[0].(map[string]any)
	if a["assistant_id"] != "echo" || a["graph_id"] != "echo" || a["description"] != "echoes" || a["version"] != float64(1) {
		t.Fatalf("assistant: %v", a)
	}
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`{"graph_id":"slow"}`, []string{"slow"}},
		{`{"name":"SLO"}`, []string{"slow"}},
		{`{"limit":1,"offset":1}`, []string{"slow"}},
		{`{"sort_order":"desc"}`, []string{"slow", "echo"}},
		{`{"metadata":{"created_by":"system"}}`, []string{"echo", "slow"}},
		{`{"metadata":{"x":1}}`, nil},
	} {
		var got []string
		for _, a := range e.list("POST", "/assistants/search", tc.body, http.StatusOK) {
			got = append(got, str(a.(map[string]any)["assistant_id"]))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("search %s: %v, want %v", tc.body, got, tc.want)
		}
	}
	if n := e.json("POST", "/assistants/count", `{"graph_id":"echo"}`, http.StatusOK); n != float64(1) {
		t.Fatalf("count: %v", n)
	}
	if g := e.obj("GET", "/assistants/echo", "", http.StatusOK); g["assistant_id"] != "echo" {
		t.Fatalf("get: %v", g)
	}
	if s := e.obj("GET", "/assistants/echo/schemas", "", http.StatusOK); s["graph_id"] != "echo" {
		t.Fatalf("schemas: %v", s)
	}
	e.fail("GET", "/assistants/other", "", http.StatusNotFound, "Assistant other not found")
	// A runner that cannot describe its graph (this one is Go): LangGraph's 422 naming why;
	// its schemas are unknown (null). The Python bridges' answers: the langgraph-sdk tests.
	e.fail("GET", "/assistants/echo/graph", "", http.StatusUnprocessableEntity, "does not offer langgraph.graph")
	e.fail("GET", "/assistants/echo/graph?xray=0", "", http.StatusUnprocessableEntity, "Invalid xray value")
	e.fail("GET", "/assistants/echo/graph?xray=yes", "", http.StatusUnprocessableEntity, "Invalid xray value")
	e.fail("GET", "/assistants/nope/subgraphs/x", "", http.StatusNotFound, "Assistant nope not found")
	if s := e.obj("GET", "/assistants/echo/schemas", "", http.StatusOK); s["state_schema"] != nil || len(s) != 6 {
		t.Fatalf("schemas of a runner without them: %v", s)
	}
	e.fail("POST", "/assistants/search", `{"limit":0}`, http.StatusUnprocessableEntity, "limit")
	e.fail("POST", "/assistants/search", `{"limit":`, http.StatusUnprocessableEntity, "not valid")
	e.fail("GET", "/threads/x/nothing", "", http.StatusNotFound, "no route")
}

func TestThreads(t *testing.T) {
	e := newEnv(t)
	th := e.obj("POST", "/threads", `{"thread_id":"t1","metadata":{"topic":"a","n":1}}`, http.StatusOK)
	if th["thread_id"] != "t1" || th["status"] != "idle" {
		t.Fatalf("created: %v", th)
	}
	meta := th["metadata"].(map[string]any)
	if meta["topic"] != "a" || meta["n"] != float64(1) || meta["graph_id"] != "echo" {
		t.Fatalf("metadata: %v", meta)
	}
	e.fail("POST", "/threads", `{"thread_id":"t1"}`, http.StatusConflict, "already exists")
	if again := e.obj("POST", "/threads", `{"thread_id":"t1","if_exists":"do_nothing"}`, http.StatusOK); again["thread_id"] != "t1" {
		t.Fatalf("do_nothing: %v", again)
	}
	e.fail("POST", "/threads", `{"if_exists":"maybe"}`, http.StatusUnprocessableEntity, "if_exists")
	e.fail("POST", "/threads", `{"metadata":{"graph_id":"nope"}}`, http.StatusNotFound, "Assistant nope not found")
	slow := e.obj("POST", "/threads", `{"metadata":{"graph_id":"slow","topic":"b"}}`, http.StatusOK)
	if slow["metadata"].(map[string]any)["graph_id"] != "slow" || str(slow["thread_id"]) == "" {
		t.Fatalf("slow thread: %v", slow)
	}

	p := e.obj("PATCH", "/threads/t1", `{"metadata":{"topic":"c"}}`, http.StatusOK)
	if m := p["metadata"].(map[string]any); m["topic"] != "c" || m["n"] != float64(1) {
		t.Fatalf("patched: %v", m)
	}
	if g := e.obj("GET", "/threads/t1", "", http.StatusOK); g["metadata"].(map[string]any)["topic"] != "c" {
		t.Fatalf("get after patch: %v", g)
	}

	ids := func(body string) []string {
		var out []string
		for _, x := range e.list("POST", "/threads/search", body, http.StatusOK) {
			out = append(out, str(x.(map[string]any)["thread_id"]))
		}
		return out
	}
	if got := ids(`{"metadata":{"topic":"c"}}`); !reflect.DeepEqual(got, []string{"t1"}) {
		t.Fatalf("search by metadata: %v", got)
	}
	if got := ids(`{"status":"idle"}`); len(got) != 2 {
		t.Fatalf("search by status: %v", got)
	}
	if got := ids(`{"status":"busy"}`); len(got) != 0 {
		t.Fatalf("search busy: %v", got)
	}
	if got := ids(`{"ids":["t1"]}`); !reflect.DeepEqual(got, []string{"t1"}) {
		t.Fatalf("search ids: %v", got)
	}
	if n := e.json("POST", "/threads/count", `{"metadata":{"topic":"b"}}`, http.StatusOK); n != float64(1) {
		t.Fatalf("count: %v", n)
	}
	e.fail("POST", "/threads/search", `{"status":"sleepy"}`, http.StatusUnprocessableEntity, "status")

	e.json("DELETE", "/threads/t1", "", http.StatusNoContent)
	e.fail("GET", "/threads/t1", "", http.StatusNotFound, "Thread with ID t1 not found")
	e.fail("DELETE", "/threads/t1", "", http.StatusNotFound, "not found")
}

func TestThreadsAreTheCallersOwn(t *testing.T) {
	e := newEnv(t)
	alice, bob := []string{userHeader, "alice"}, []string{userHeader, "bob"}
	tid := e.thread(`{"metadata":{"k":"v"}}`, alice...)
	e.json("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "hi"), http.StatusOK, alice...)
	e.fail("GET", "/threads/"+tid, "", http.StatusNotFound, "not found", bob...)
	e.fail("GET", "/threads/"+tid+"/state", "", http.StatusNotFound, "not found", bob...)
	e.fail("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "hi"), http.StatusNotFound, "not found", bob...)
	e.fail("GET", "/threads/"+tid+"/runs", "", http.StatusNotFound, "not found", bob...)
	e.fail("PATCH", "/threads/"+tid, `{"metadata":{"k":"x"}}`, http.StatusNotFound, "not found", bob...)
	e.fail("DELETE", "/threads/"+tid, "", http.StatusNotFound, "not found", bob...)
	if l := e.list("POST", "/threads/search", `{}`, http.StatusOK, bob...); len(l) != 0 {
		t.Fatalf("bob sees %v", l)
	}
	// Bob may use the same thread id: it is another thread.
	if got := e.obj("POST", "/threads", `{"thread_id":"`+tid+`"}`, http.StatusOK, bob...); got["thread_id"] != tid || got["values"] != nil {
		t.Fatalf("bob's thread: %v", got)
	}
	if l := e.list("POST", "/threads/search", `{}`, http.StatusOK, alice...); len(l) != 1 {
		t.Fatalf("alice sees %v", l)
	}
}

func TestWaitAndStateAcrossRuns(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	v := e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "hello there"), http.StatusOK)
	if got := messages(t, v); !reflect.DeepEqual(got, [][2]string{{"human", "hello there"}, {"ai", "Echo: hello there"}}) {
		t.Fatalf("first run values: %v", got)
	}
	// The second run sees the first: the echo agent reports the history it received.
	v = e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "history"), http.StatusOK)
	got := messages(t, v)
	if len(got) != 4 || !strings.Contains(got[3][1], "History: 2 messages. First user message: hello there") {
		t.Fatalf("second run values: %v", got)
	}
	st := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	if len(messages(t, st["values"])) != 4 || len(st["next"].([]any)) != 0 || len(st["interrupts"].([]any)) != 0 {
		t.Fatalf("state: %v", st)
	}
	cp := st["checkpoint"].(map[string]any)
	parent := st["parent_checkpoint"].(map[string]any)
	hist := e.list("POST", "/threads/"+tid+"/history", `{}`, http.StatusOK)
	if len(hist) != 2 {
		t.Fatalf("history: %d states", len(hist))
	}
	h0, h1 := hist[0].(map[string]any), hist[1].(map[string]any)
	if h0["checkpoint"].(map[string]any)["checkpoint_id"] != cp["checkpoint_id"] || h1["checkpoint"].(map[string]any)["checkpoint_id"] != parent["checkpoint_id"] {
		t.Fatalf("history order: %v / %v", h0["checkpoint"], h1["checkpoint"])
	}
	if len(messages(t, h1["values"])) != 2 {
		t.Fatalf("older state: %v", h1["values"])
	}
	if l := e.list("POST", "/threads/"+tid+"/history", `{"limit":1}`, http.StatusOK); len(l) != 1 {
		t.Fatalf("history limit: %d", len(l))
	}
	before := `{"before":{"checkpoint_id":"` + str(cp["checkpoint_id"]) + `"}}`
	if l := e.list("POST", "/threads/"+tid+"/history", before, http.StatusOK); len(l) != 1 || l[0].(map[string]any)["checkpoint"].(map[string]any)["checkpoint_id"] != parent["checkpoint_id"] {
		t.Fatalf("history before: %v", l)
	}
	at := e.obj("GET", "/threads/"+tid+"/state/"+str(parent["checkpoint_id"]), "", http.StatusOK)
	if len(messages(t, at["values"])) != 2 {
		t.Fatalf("state at the first run: %v", at)
	}
	e.fail("GET", "/threads/"+tid+"/state/nope", "", http.StatusNotFound, "Checkpoint nope not found")
	byBody := e.obj("POST", "/threads/"+tid+"/state/checkpoint", `{"checkpoint":{"checkpoint_id":"`+str(parent["checkpoint_id"])+`"}}`, http.StatusOK)
	if !reflect.DeepEqual(byBody, at) {
		t.Fatalf("state by checkpoint body: %v", byBody)
	}
	if latest := e.obj("POST", "/threads/"+tid+"/state/checkpoint", `{"checkpoint":{"checkpoint_ns":""}}`, http.StatusOK); !reflect.DeepEqual(latest, st) {
		t.Fatalf("state of a checkpoint without id: %v", latest)
	}

	runs := e.list("GET", "/threads/"+tid+"/runs", "", http.StatusOK)
	if len(runs) != 2 {
		t.Fatalf("runs: %v", runs)
	}
	r0 := runs[0].(map[string]any)
	if r0["status"] != "success" || r0["thread_id"] != tid || r0["assistant_id"] != "echo" || r0["run_id"] != cp["checkpoint_id"] {
		t.Fatalf("latest run: %v", r0)
	}
	if g := e.obj("GET", "/threads/"+tid+"/runs/"+str(r0["run_id"]), "", http.StatusOK); g["status"] != "success" {
		t.Fatalf("get run: %v", g)
	}
	e.fail("GET", "/threads/"+tid+"/runs/run_nope", "", http.StatusNotFound, "Run with ID run_nope not found")
}

func TestStreamModes(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	e.json("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "first"), http.StatusOK)
	h, evs := e.stream("POST", "/threads/"+tid+"/runs/stream",
		runBody("echo", "use the tool on paris", `"stream_mode":["values","messages-tuple","updates"]`))
	if evs[0].Event != "metadata" || str(evs[0].Data.(map[string]any)["run_id"]) == "" {
		t.Fatalf("first event: %v", evs[0])
	}
	rid := str(evs[0].Data.(map[string]any)["run_id"])
	if loc := h.Get("Content-Location"); loc != "/threads/"+tid+"/runs/"+rid {
		t.Fatalf("Content-Location %q", loc)
	}
	if loc := h.Get("Location"); loc != "/threads/"+tid+"/runs/"+rid+"/stream" {
		t.Fatalf("Location %q", loc)
	}
	// The stream ends after the run's last part (LangGraph sends no closing event).
	if last := evs[len(evs)-1]; last.Event != "values" {
		t.Fatalf("last event: %v", last)
	}
	var values []any
	var text strings.Builder
	var sawToolMsg, sawArgs bool
	for _, ev := range evs[1:] {
		if ev.ID == "" {
			t.Fatalf("event without id: %v", ev)
		}
		switch ev.Event {
		case "values":
			values = append(values, ev.Data)
		case "messages":
			pair := ev.Data.([]any)
			msg, meta := pair[0].(map[string]any), pair[1].(map[string]any)
			if meta["run_id"] != rid || meta["thread_id"] != tid {
				t.Fatalf("message metadata: %v", meta)
			}
			switch msg["type"] {
			case "AIMessageChunk":
				text.WriteString(str(msg["content"]))
				if len(msg["tool_call_chunks"].([]any)) > 0 {
					sawArgs = true
				}
			case "tool":
				sawToolMsg = msg["tool_call_id"] != nil
			default:
				t.Fatalf("message type %v", msg["type"])
			}
		default:
			t.Fatalf("unexpected event %q (updates come from the LangGraph bridge only)", ev.Event)
		}
	}
	if !sawToolMsg || !sawArgs || !strings.Contains(text.String(), "paris") {
		t.Fatalf("messages: tool message %v, args %v, text %q", sawToolMsg, sawArgs, text.String())
	}
	// values start from the thread's state and grow with each message.
	first, final := messages(t, values[0]), messages(t, values[len(values)-1])
	if len(first) != 3 || first[2] != [2]string{"human", "use the tool on paris"} {
		t.Fatalf("first values: %v", first)
	}
	if len(final) != 6 || final[3][0] != "ai" || final[4][0] != "tool" || final[5][0] != "ai" {
		t.Fatalf("final values: %v", final)
	}
	fv := values[len(values)-1].(map[string]any)["messages"].([]any)
	calls := fv[3].(map[string]any)["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["name"] != "lookup" || calls[0].(map[string]any)["args"].(map[string]any)["query"] != "paris" {
		t.Fatalf("tool call: %v", calls)
	}
	// The thread's state names the messages as the stream did.
	st := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	if !reflect.DeepEqual(st["values"], values[len(values)-1]) {
		t.Fatalf("state %v\n!= last values %v", st["values"], values[len(values)-1])
	}

	// The legacy messages mode: metadata, partials and the complete message.
	_, evs = e.stream("POST", "/threads/"+tid+"/runs/stream", runBody("echo", "again", `"stream_mode":"messages"`))
	got := strings.Join(names(evs), ",")
	if !strings.HasPrefix(got, "metadata,messages/metadata,messages/partial") || !strings.HasSuffix(got, "messages/partial,messages/complete") {
		t.Fatalf("messages mode events: %s", got)
	}
	if partial := evs[len(evs)-2].Data.([]any)[0].(map[string]any); partial["content"] != "Echo: again" || partial["type"] != "ai" {
		t.Fatalf("last partial: %v", partial)
	}
	done := evs[len(evs)-1].Data.([]any)[0].(map[string]any)
	if done["content"] != "Echo: again" || done["type"] != "ai" {
		t.Fatalf("complete message: %v", done)
	}

	e.fail("POST", "/threads/"+tid+"/runs/stream", runBody("echo", "x", `"stream_mode":"feelings"`), http.StatusUnprocessableEntity, `stream_mode "feelings" is not offered`)
}

func TestStreamOfFailedRunEndsWithError(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	_, evs := e.stream("POST", "/threads/"+tid+"/runs/stream", runBody("echo", "fail"))
	last := evs[len(evs)-1]
	if last.Event != "error" || str(last.Data.(map[string]any)["message"]) == "" {
		t.Fatalf("last event: %v", last)
	}
	th := e.obj("GET", "/threads/"+tid, "", http.StatusOK)
	if th["status"] != "error" || str(th["error"].(map[string]any)["message"]) == "" {
		t.Fatalf("thread: %v", th)
	}
	v := e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "fail"), http.StatusOK)
	if _, ok := v["__error__"].(map[string]any); !ok {
		t.Fatalf("wait of a failed run: %v", v)
	}
}

func TestInterruptAndResume(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	v := e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "please approve deleting notes.txt"), http.StatusOK)
	ints, ok := v["__interrupt__"].([]any)
	if !ok || len(ints) != 1 || str(ints[0].(map[string]any)["id"]) == "" {
		t.Fatalf("wait: %v", v)
	}
	th := e.obj("GET", "/threads/"+tid, "", http.StatusOK)
	if th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 1 {
		t.Fatalf("thread: %v", th)
	}
	st := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	if len(st["interrupts"].([]any)) != 1 || len(st["tasks"].([]any)) != 1 {
		t.Fatalf("state: %v", st)
	}
	if got := e.list("POST", "/threads/search", `{"status":"interrupted"}`, http.StatusOK); len(got) != 1 {
		t.Fatalf("search interrupted: %v", got)
	}
	e.fail("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","command":{"goto":"x"}}`, http.StatusUnprocessableEntity, "goto")

	// Streaming the resume: updates carry nothing from a Go agent, values the outcome.
	_, evs := e.stream("POST", "/threads/"+tid+"/runs/stream", `{"assistant_id":"echo","command":{"resume":{"approve":true}},"stream_mode":["values","updates"]}`)
	final := messages(t, evs[len(evs)-1].Data)
	if final[len(final)-1] != [2]string{"ai", "Approved: deleted notes.txt."} {
		t.Fatalf("resumed: %v", final)
	}
	if th := e.obj("GET", "/threads/"+tid, "", http.StatusOK); th["status"] != "idle" || len(th["interrupts"].(map[string]any)) != 0 {
		t.Fatalf("thread after resume: %v", th)
	}
	e.fail("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","command":{"resume":true}}`, http.StatusConflict, "no pending interrupt")

	// A rejection, then updates show the interrupt.
	_, evs = e.stream("POST", "/threads/"+tid+"/runs/stream", runBody("echo", "please approve deleting a.txt", `"stream_mode":"updates"`))
	var sawInterrupt bool
	for _, ev := range evs {
		if ev.Event == "updates" {
			_, sawInterrupt = ev.Data.(map[string]any)["__interrupt__"]
		}
	}
	if !sawInterrupt {
		t.Fatalf("interrupting stream: %v", names(evs))
	}
	if th := e.obj("GET", "/threads/"+tid, "", http.StatusOK); th["status"] != "interrupted" {
		t.Fatalf("thread: %v", th["status"])
	}
	v = e.obj("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","command":{"resume":{"approve":false,"reason":"no"}}}`, http.StatusOK)
	if v["__interrupt__"] != nil {
		t.Fatalf("resumed run still interrupted: %v", v)
	}
	got := messages(t, v)
	if got[len(got)-1] != [2]string{"ai", "Rejected: kept a.txt."} {
		t.Fatalf("rejected: %v", got)
	}
}

func TestBackgroundRunJoinAndCancel(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{"metadata":{"graph_id":"slow"}}`)
	r := e.obj("POST", "/threads/"+tid+"/runs", runBody("slow", "hello", `"metadata":{"m":1}`), http.StatusOK)
	rid := str(r["run_id"])
	if r["status"] != "running" || r["metadata"].(map[string]any)["m"] != float64(1) {
		t.Fatalf("created: %v", r)
	}
	e.waitStatus(tid, "busy")
	// reject is the default strategy on a busy thread.
	e.fail("POST", "/threads/"+tid+"/runs", runBody("slow", "again"), http.StatusConflict, "already running")
	// A dropped stream is joined again from the event after the last one it saw. (Its
	// ids are the run's event indexes: an event this stream mode does not show, such
	// as a stored snapshot of the message so far, leaves a gap; the whole stream below
	// shows that nothing was skipped.)
	path := "/threads/" + tid + "/runs/" + rid + "/stream?stream_mode=messages-tuple"
	evs := e.streamUntil(path, 3)
	lastID := evs[len(evs)-1].ID
	joined := e.streamUntil(path, 2, "Last-Event-ID", lastID)
	if joined[0].Event != "messages" || atoi(t, joined[0].ID) <= atoi(t, lastID) {
		t.Fatalf("rejoined stream after %s: %v", lastID, joined[0])
	}
	e.json("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", "", http.StatusNoContent)
	// Joined without Last-Event-ID, the stream starts at the run's start.
	_, whole := e.stream("GET", path, "")
	if whole[0].Event != "metadata" || !reflect.DeepEqual(whole[1:len(evs)], evs[1:]) || !reflect.DeepEqual(whole[len(evs):len(evs)+len(joined)], joined) {
		t.Fatalf("whole stream %v\ndoes not hold %v then %v", whole, evs, joined)
	}
	if g := e.obj("GET", "/threads/"+tid+"/runs/"+rid, "", http.StatusOK); g["status"] != "interrupted" {
		t.Fatalf("cancelled run: %v", g)
	}
	if th := e.obj("GET", "/threads/"+tid, "", http.StatusOK); th["status"] != "idle" {
		t.Fatalf("thread after cancel: %v", th["status"])
	}
	e.fail("POST", "/threads/"+tid+"/runs/"+rid+"/cancel", "", http.StatusConflict, "not in progress")
	e.fail("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?action=rollback", "", http.StatusConflict, "not in progress")
	e.fail("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?action=undo", "", http.StatusUnprocessableEntity, "action must be")

	// interrupt: the running run is cancelled and the new one runs.
	r1 := e.obj("POST", "/threads/"+tid+"/runs", runBody("slow", "one"), http.StatusOK)
	r2 := e.obj("POST", "/threads/"+tid+"/runs", runBody("slow", "two", `"multitask_strategy":"interrupt"`), http.StatusOK)
	if g := e.obj("GET", "/threads/"+tid+"/runs/"+str(r1["run_id"]), "", http.StatusOK); g["status"] != "interrupted" {
		t.Fatalf("interrupted run: %v", g)
	}
	// enqueue: waits for the run in progress, which is cancelled meanwhile.
	done := make(chan map[string]any)
	go func() {
		status, _, b := e.do("POST", "/threads/"+tid+"/runs", runBody("slow", "three", `"multitask_strategy":"enqueue"`))
		done <- map[string]any{"status": status, "body": string(b)}
	}()
	e.json("POST", "/threads/"+tid+"/runs/"+str(r2["run_id"])+"/cancel", "", http.StatusNoContent)
	got := <-done
	if got["status"] != http.StatusOK {
		t.Fatalf("enqueued: %v", got)
	}
	var three map[string]any
	if err := json.Unmarshal([]byte(got["body"].(string)), &three); err != nil {
		t.Fatal(err)
	}
	// rollback: the running run is cancelled and removed from the thread (its runs, its
	// checkpoints, its messages); the new one runs.
	e.waitStatus(tid, "busy")
	r4 := e.obj("POST", "/threads/"+tid+"/runs", runBody("slow", "four", `"multitask_strategy":"rollback"`), http.StatusOK)
	e.fail("GET", "/threads/"+tid+"/runs/"+str(three["run_id"]), "", http.StatusNotFound, "not found")
	runs := e.list("GET", "/threads/"+tid+"/runs?limit=10", "", http.StatusOK)
	if len(runs) != 4 || runs[0].(map[string]any)["run_id"] != r4["run_id"] {
		t.Fatalf("runs: %v", runs)
	}
	if l := e.list("GET", "/threads/"+tid+"/runs?status=running", "", http.StatusOK); len(l) != 1 {
		t.Fatalf("running runs: %v", l)
	}
	// cancel with action=rollback: the thread is as it was before the run.
	e.json("POST", "/threads/"+tid+"/runs/"+str(r4["run_id"])+"/cancel?action=rollback&wait=1", "", http.StatusNoContent)
	if runs := e.list("GET", "/threads/"+tid+"/runs?limit=10", "", http.StatusOK); len(runs) != 3 {
		t.Fatalf("runs after a rollback: %v", runs)
	}
	st := e.obj("GET", "/threads/"+tid+"/state", "", http.StatusOK)
	for _, m := range messages(t, st["values"]) {
		if strings.Contains(m[1], "three") || strings.Contains(m[1], "four") {
			t.Fatalf("a rolled back run's message is in the thread: %v", st["values"])
		}
	}
	if hist := e.list("POST", "/threads/"+tid+"/history", `{}`, http.StatusOK); len(hist) != 3 {
		t.Fatalf("history after rollbacks: %d states", len(hist))
	}
	if th := e.obj("GET", "/threads/"+tid, "", http.StatusOK); th["status"] != "idle" {
		t.Fatalf("thread after a rollback: %v", th["status"])
	}
}

// streamUntil GETs a stream, reads its first n events with ids, then drops the connection.
func (e *env) streamUntil(path string, n int, headers ...string) []sseEvent {
	e.t.Helper()
	return e.streamUntilWith("GET", path, "", n, headers...)
}

// streamUntilWith sends a request whose answer is a stream and drops the connection after
// its first n events with ids.
func (e *env) streamUntilWith(method, path, body string, n int, headers ...string) []sseEvent {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf []byte
	chunk := make([]byte, 4096)
	for {
		k, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:k]...)
		evs := parseSSE(e.t, buf[:strings.LastIndex(string(buf), "\n\n")+2])
		withID := 0
		for _, ev := range evs {
			if ev.ID != "" {
				withID++
			}
		}
		if withID >= n {
			return evs
		}
		if err != nil {
			e.t.Fatalf("stream ended after %d events: %v", len(evs), err)
		}
	}
}

func TestStatelessRuns(t *testing.T) {
	e := newEnv(t)
	v := e.obj("POST", "/runs/wait", runBody("echo", "stateless"), http.StatusOK)
	if got := messages(t, v); len(got) != 2 || got[1][1] != "Echo: stateless" {
		t.Fatalf("stateless wait: %v", got)
	}
	h, evs := e.stream("POST", "/runs/stream", runBody("echo", "streamed", `"stream_mode":"values"`))
	if h.Get("Location") != "" || evs[len(evs)-1].Event != "values" {
		t.Fatalf("stateless stream: %v %v", h, names(evs))
	}
	// Their threads go when they end.
	deadline := 0
	for len(e.list("POST", "/threads/search", `{}`, http.StatusOK)) != 0 {
		if deadline++; deadline > 500 {
			t.Fatal("stateless threads are not deleted")
		}
		e.waitBriefly()
	}
	e.fail("POST", "/runs/wait", `{"assistant_id":"echo","command":{"resume":1}}`, http.StatusUnprocessableEntity, "no interrupt")
}

func TestRunErrors(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	path := "/threads/" + tid + "/runs/wait"
	for _, tc := range []struct {
		body   string
		status int
		says   string
	}{
		{`{"input":{"messages":[]}}`, 422, "assistant_id is required"},
		{runBody("nope", "x"), 404, "Assistant nope not found"},
		{runBody("other", "x"), 404, "Assistant other not found"},
		{runBody("slow", "x"), 409, "belongs to assistant echo"},
		{`{"assistant_id":"echo"}`, 422, "input or command.resume is required"},
		{`{"assistant_id":"echo","input":{"messages":[{"role":"assistant","content":"x"}]}}`, 422, "no user message"},
		{`{"assistant_id":"echo","input":{"other":1}}`, 422, "text keys"},
		{`{"assistant_id":"echo","input":{"messages":[]},"command":{"resume":1}}`, 409, "no pending interrupt"},
		{`{"assistant_id":"echo","command":{"update":{"a":1}}}`, 422, "with command.resume only"},
		{`{"assistant_id":"echo","command":{"goto":"x"}}`, 422, "with command.resume only"},
		{runBody("echo", "x", `"interrupt_before":"a"`), 422, "interrupt_before must be"},
		{runBody("echo", "x", `"interrupt_after":[]`), 422, "interrupt_after must be"},
		{runBody("echo", "x", `"checkpoint_id":"c"`), 404, "Checkpoint c not found"},
		{runBody("echo", "x", `"checkpoint_id":"c","checkpoint":{"checkpoint_id":"d"}`), 422, "differ"},
		{`{"assistant_id":"echo","command":{"resume":1},"checkpoint_id":"c"}`, 422, "takes input"},
		{`{"assistant_id":"echo","checkpoint_id":"c"}`, 404, "Checkpoint c not found"},
		{runBody("echo", "x", `"multitask_strategy":"sometimes"`), 422, "multitask_strategy"},
		{runBody("echo", "x", `"config":{"configurable":5}`), 422, "config.configurable must be an object"},
		{runBody("echo", "x", `"stream_mode":5`), 422, "stream_mode"},
		{`{"assistant_id":`, 422, "not valid"},
	} {
		e.fail("POST", path, tc.body, tc.status, tc.says)
	}
	e.fail("POST", "/threads/nope/runs/wait", runBody("echo", "x"), http.StatusNotFound, "Thread with ID nope not found")
	// if_not_exists=create makes the thread.
	v := e.obj("POST", "/threads/made/runs/wait", runBody("echo", "made", `"if_not_exists":"create"`), http.StatusOK)
	if len(messages(t, v)) != 2 {
		t.Fatalf("created on run: %v", v)
	}
	if g := e.obj("GET", "/threads/made", "", http.StatusOK); g["status"] != "idle" {
		t.Fatalf("made: %v", g)
	}
	// The user message keeps the id the client gave it.
	v = e.obj("POST", path, `{"assistant_id":"echo","input":{"messages":[{"type":"human","content":"with id","id":"my-msg-1"}]}}`, http.StatusOK)
	list := v["messages"].([]any)
	if mine := list[len(list)-2].(map[string]any); mine["id"] != "my-msg-1" || mine["content"] != "with id" {
		t.Fatalf("client's message: %v", mine)
	}
	// Plain-text and OpenAI-style content inputs.
	for i, in := range []string{`"plain"`, `{"messages":[{"type":"human","content":[{"type":"text","text":"blocks"}]}]}`, `{"question":"q"}`} {
		v := e.obj("POST", path, fmt.Sprintf(`{"assistant_id":"echo","input":%s}`, in), http.StatusOK)
		if got := messages(t, v); len(got) != 2*(i+2) {
			t.Fatalf("input %s: %v", in, got)
		}
	}
}

// A client streaming values only gets a paused run's interrupt as a values part, and the
// wait of a paused run answers with the interrupts only, as LangGraph's server does.
func TestInterruptInValuesStream(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{}`)
	_, evs := e.stream("POST", "/threads/"+tid+"/runs/stream", runBody("echo", "please approve deleting b.txt"))
	last := evs[len(evs)-1]
	ints, ok := last.Data.(map[string]any)["__interrupt__"].([]any)
	if last.Event != "values" || !ok || len(ints) != 1 {
		t.Fatalf("last part: %v", last)
	}
	value := ints[0].(map[string]any)["value"].(map[string]any)
	if value["name"] != "delete_file" {
		t.Fatalf("interrupt value: %v", value)
	}
	if got := messages(t, last.Data); len(got) != 2 || got[0] != [2]string{"human", "please approve deleting b.txt"} {
		t.Fatalf("the paused run's last values are the thread's values with the interrupts: %v", got)
	}
	e.obj("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","command":{"resume":{"approve":true}}}`, http.StatusOK)
	v := e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "please approve deleting c.txt"), http.StatusOK)
	if _, ok := v["__interrupt__"]; !ok || len(v) != 2 || len(messages(t, v)) != 6 {
		t.Fatalf("wait of a paused run: %v", v)
	}
}

// on_disconnect=cancel cancels the run when its stream's client goes away; the default
// (continue) lets it run on.
func TestOnDisconnect(t *testing.T) {
	e := newEnv(t)
	tid := e.thread(`{"metadata":{"graph_id":"slow"}}`)
	evs := e.streamUntilWith("POST", "/threads/"+tid+"/runs/stream", runBody("slow", "cancel me", `"stream_mode":"messages-tuple","on_disconnect":"cancel"`), 2)
	rid := str(evs[0].Data.(map[string]any)["run_id"])
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r := e.obj("GET", "/threads/"+tid+"/runs/"+rid, "", http.StatusOK); r["status"] == "interrupted" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run goes on after its client went away")
		}
	}
	evs = e.streamUntilWith("POST", "/threads/"+tid+"/runs/stream", runBody("slow", "keep going"), 1)
	rid = str(evs[0].Data.(map[string]any)["run_id"])
	e.waitStatus(tid, "busy")
	if r := e.obj("GET", "/threads/"+tid+"/runs/"+rid, "", http.StatusOK); r["status"] != "running" {
		t.Fatalf("the run stopped with its client: %v", r)
	}
	e.json("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", "", http.StatusNoContent)
}
