package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// TestChatFlagsStreamOrHoldBack checks what the terminal has shown at the moment each
// event of a run arrives: streamed text is on screen before the answer is complete,
// --no-stream holds it back until then, and reasoning shows only with --show-thinking.
func TestChatFlagsStreamOrHoldBack(t *testing.T) {
	stored := func(typ string, data any) host.Event {
		return host.Event{Kind: host.KindStored, Stored: &session.Event{Type: typ, Data: session.MustJSON(data)}}
	}
	events := []host.Event{
		{Kind: host.KindReasoningDelta, Text: "Thinking about: "},
		{Kind: host.KindReasoningDelta, Text: "hi"},
		stored(session.TypeReasoning, session.ReasoningData{Text: "Thinking about: hi"}),
		{Kind: host.KindTextDelta, Text: "Echo:"},
		{Kind: host.KindTextDelta, Text: " hi"},
		stored(session.TypeAssistantMessage, session.AssistantMessageData{Text: "Echo: hi"}),
		stored(session.TypeRunStatus, session.RunStatusData{Status: session.StatusCompleted}),
	}
	cases := []struct {
		name string
		opt  chatOptions
		// shownBefore[i] must be on screen when event i is requested.
		shownBefore map[int]string
		hiddenUntil map[int]string
		final       string
	}{
		{"streaming, thinking hidden", chatOptions{},
			map[int]string{5: "Echo: hi"}, map[int]string{6: "Thinking"}, "Echo: hi\n"},
		{"--show-thinking", chatOptions{showThinking: true},
			map[int]string{2: "(thinking) Thinking about: hi", 5: "Echo: hi"}, nil, "(thinking) Thinking about: hi\nEcho: hi\n"},
		{"--no-stream", chatOptions{noStream: true},
			nil, map[int]string{5: "Echo", 6: "Thinking"}, "Echo: hi\n"},
		{"--no-stream --show-thinking", chatOptions{noStream: true, showThinking: true},
			map[int]string{3: "(thinking) Thinking about: hi\n"}, map[int]string{2: "Thinking", 5: "Echo"}, "(thinking) Thinking about: hi\nEcho: hi\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			i := 0
			next := func(context.Context) (host.Event, error) {
				if want, ok := c.shownBefore[i]; ok && !strings.Contains(out.String(), want) {
					t.Errorf("before event %d the screen lacks %q: %q", i, want, out.String())
				}
				if hidden, ok := c.hiddenUntil[i]; ok && strings.Contains(out.String(), hidden) {
					t.Errorf("before event %d the screen already has %q: %q", i, hidden, out.String())
				}
				if i == len(events) {
					return host.Event{}, io.EOF
				}
				i++
				return events[i-1], nil
			}
			if _, err := printEvents(t.Context(), next, &out, c.opt); err != nil {
				t.Fatal(err)
			}
			if out.String() != c.final {
				t.Fatalf("screen %q, want %q", out.String(), c.final)
			}
		})
	}
}

func TestFlagsRunnerEnv(t *testing.T) {
	cases := []struct {
		flags ksadkRunFlags
		want  map[string]string
	}{
		{ksadkRunFlags{}, nil},
		{ksadkRunFlags{model: "m"}, map[string]string{"OPENAI_MODEL_NAME": "m", "MODEL_NAME": "m"}},
		{ksadkRunFlags{noTrace: true}, map[string]string{"LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}},
		{ksadkRunFlags{noAltScreen: true, showThinking: true, noStream: true}, nil},
	}
	for _, c := range cases {
		got := c.flags.runnerEnv()
		if len(got) != len(c.want) {
			t.Fatalf("%+v: env %v, want %v", c.flags, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Fatalf("%+v: %s=%q, want %q", c.flags, k, got[k], v)
			}
		}
	}
}

func TestFlagsParse(t *testing.T) {
	cases := []struct {
		args []string
		ok   bool
	}{
		{[]string{"run", "--model", "m", "--no-trace", "--no-alt-screen", "--show-thinking", "--no-stream", "-i", "-p", "9", "--help"}, true},
		{[]string{"web", "DIR", "-p", "9000", "--model", "m", "--no-open", "--host", "127.0.0.1", "--no-trace", "--help"}, true},
		{[]string{"web", "--show-thinking", "--help"}, false}, // a chat flag: web has no chat
		{[]string{"web", "a", "b"}, false},
		{[]string{"replay", "--after-seq-id", "3", "--before-seq-id", "9", "--format", "json", "--help"}, true},
		{[]string{"replay", "--after-seq-id", "x", "--help"}, false},
		{[]string{"init", "--from-agent", "x.py", "--help"}, true},
	}
	for _, c := range cases {
		var out bytes.Buffer
		root := newRootCmd(&out, &out, strings.NewReader(""))
		root.SetArgs(c.args)
		err := root.Execute()
		if (err == nil) != c.ok {
			t.Fatalf("%v: err %v, want ok=%v\n%s", c.args, err, c.ok, out.String())
		}
	}
}

func TestWebStoreAndURL(t *testing.T) {
	lookup := func(env map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	}
	if got := webStore(nil, lookup(nil)); got.backend != "local" {
		t.Fatalf("no session vars: %+v, want the local store", got)
	}
	for _, k := range []string{"KSADK_SESSION_BACKEND", "AGENTENGINE_SESSION_BACKEND", "KSADK_STM_PATH", "KSADK_STM_DB_PATH", "KSADK_SESSION_DSN"} {
		if got := webStore(nil, lookup(map[string]string{k: "x"})); got != (storeFlags{}) {
			t.Fatalf("%s set: %+v, want the shell's choice", k, got)
		}
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8123}
	for host, want := range map[string]string{
		"127.0.0.1": "http://localhost:8123/", "0.0.0.0": "http://localhost:8123/", "::": "http://localhost:8123/",
		"localhost": "http://localhost:8123/", "192.168.1.5": "http://192.168.1.5:8123/",
	} {
		if got := webURL(host, addr); got != want {
			t.Fatalf("webURL(%s) = %s, want %s", host, got, want)
		}
	}
}
