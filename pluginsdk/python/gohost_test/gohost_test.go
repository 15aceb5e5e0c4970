// Package gohost_test proves that the real hashicorp/go-plugin host accepts a runner built
// with the Python SDK (pluginsdk/python): handshake, dispense, Describe, a streamed Run,
// stdio forwarding and a quick Kill through GRPCController.
//
// It needs python3 (or $AGENTENGINE_PYTHON) with the SDK installed:
//
//	pip install -c pluginsdk/python/constraints.txt -e pluginsdk/python
package gohost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/pluginsdk"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// runnerPlugin is the host half of the plugin: only GRPCClient matters for a Python runner.
type runnerPlugin struct {
	plugin.NetRPCUnsupportedPlugin
}

func (runnerPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }

func (runnerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return runnerv1.NewRunnerClient(c), nil
}

// lockedBuffer is written by go-plugin's stdio goroutine while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("AGENTENGINE_PYTHON")
	if py == "" {
		py = "python3"
	}
	out, err := exec.Command(py, "-c", "import grpc, agentengine_runner.testing.demo").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("the Python runner SDK is not importable with %s (%v):\n%s\n"+
			"install it: pip install -c pluginsdk/python/constraints.txt -e pluginsdk/python",
			py, err, out)
		// .ci/run installs it: in CI a missing SDK is a failure, not a skip.
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

func TestGoPluginHostRunsPythonRunner(t *testing.T) {
	py := python(t)
	// Short socket dir: unix socket paths are limited to ~104 bytes.
	sockDir, err := os.MkdirTemp("/tmp", "aeg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })

	cmd := exec.Command(py, "-m", "agentengine_runner.testing.demo")
	cmd.Env = append(os.Environ(), "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  runnerplugin.Handshake(),
		Plugins:          plugin.PluginSet{runnerplugin.Name: runnerPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     60 * time.Second,
		// Off: go-plugin must not parse plugin stderr itself (a non-string @message
		// panics it: go-plugin issue #38); we keep the raw lines instead.
		Logger:     hclog.New(&hclog.LoggerOptions{Level: hclog.Off, Output: io.Discard}),
		Stderr:     stderr,
		SyncStdout: stdout,
		SyncStderr: stderr,
	})
	t.Cleanup(client.Kill)
	defer func() {
		if t.Failed() {
			t.Logf("runner stderr:\n%s", stderr.String())
		}
	}()

	start := time.Now()
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start runner: %v", err)
	}
	raw, err := rpc.Dispense(runnerplugin.Name)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	t.Logf("spawn+handshake+dial+dispense: %v", time.Since(start))
	rc := raw.(runnerv1.RunnerClient)
	if err := rpc.Ping(); err != nil {
		t.Fatalf("ping (health %q): %v", plugin.GRPCServiceName, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := rc.Describe(ctx, &runnerv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if d.GetProtocolVersion() != runnerplugin.Protocol() || d.GetFramework() != "langgraph" || d.GetAgentName() != "demo" ||
		!d.GetCapabilities().GetResume() || !d.GetCapabilities().GetSummarize() {
		t.Fatalf("describe = %v", d)
	}

	events := run(ctx, t, rc, "all", nil)
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, kindOf(ev))
	}
	want := "reasoning_delta text_delta message_done tool_call_delta tool_call tool_result " +
		"approval_request state_delta usage native message_done"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("event kinds:\n got %s\nwant %s", got, want)
	}
	if tc := events[4].GetToolCall(); tc.GetName() != "search" || tc.GetArguments() != `{"q": "go"}` {
		t.Fatalf("tool call = %v", tc)
	}

	// Python print() reaches the host through GRPCStdio.
	run(ctx, t, rc, "print", nil)
	testutil.Eventually(t, 5*time.Second, func() error {
		if got := stdout.String(); !strings.Contains(got, "hello from user code") {
			return fmt.Errorf("print() output has not reached SyncStdout (got %q)", got)
		}
		return nil
	})

	// Throughput of a simple stream (informational).
	const n = 5000
	t0 := time.Now()
	if got := len(run(ctx, t, rc, "count", map[string]any{"n": n, "size": 16})); got != n+1 {
		t.Fatalf("count stream: %d events", got)
	}
	t.Logf("stream of %d text deltas: %v (%.0f events/s)", n, time.Since(t0), n/time.Since(t0).Seconds())

	// An exception in the runner is an Error event, and the runner keeps serving.
	if ev := run(ctx, t, rc, "raise", nil); len(ev) != 1 || ev[0].GetError().GetMessage() != "ValueError: boom" {
		t.Fatalf("raise: %v", ev)
	}

	t0 = time.Now()
	client.Kill()
	elapsed := time.Since(t0)
	t.Logf("Kill: %v", elapsed)
	if !client.Exited() {
		t.Fatal("runner still running after Kill")
	}
	// Without GRPCController/Shutdown, Kill waits 2 s and then SIGKILLs.
	if elapsed > 1500*time.Millisecond {
		t.Fatalf("Kill took %v: graceful Shutdown did not work", elapsed)
	}
}

func run(ctx context.Context, t *testing.T, rc runnerv1.RunnerClient, input string, extra map[string]any) []*runnerv1.RunEvent {
	t.Helper()
	payload := map[string]any{"input": input}
	for k, v := range extra {
		payload[k] = v
	}
	pj, _ := json.Marshal(payload)
	sc, _ := json.Marshal(pluginsdk.SessionContext{
		PlatformContext: pluginsdk.PlatformContext{AgentID: "a", UserID: "u", SessionID: "s", InvocationID: "i"},
	})
	stream, err := rc.Run(ctx, &runnerv1.RunRequest{
		AppName: "app", UserId: "u", SessionId: "s", InvocationId: "i",
		PayloadJson: pj, SessionContextJson: sc,
	})
	if err != nil {
		t.Fatalf("run %s: %v", input, err)
	}
	var events []*runnerv1.RunEvent
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return events
		}
		if err != nil {
			t.Fatalf("run %s: recv: %v", input, err)
		}
		events = append(events, ev.Events()...)
	}
}

func kindOf(ev *runnerv1.RunEvent) string {
	switch ev.GetEvent().(type) {
	case *runnerv1.RunEvent_TextDelta:
		return "text_delta"
	case *runnerv1.RunEvent_MessageDone:
		return "message_done"
	case *runnerv1.RunEvent_ReasoningDelta:
		return "reasoning_delta"
	case *runnerv1.RunEvent_ToolCallDelta:
		return "tool_call_delta"
	case *runnerv1.RunEvent_ToolCall:
		return "tool_call"
	case *runnerv1.RunEvent_ToolResult:
		return "tool_result"
	case *runnerv1.RunEvent_ApprovalRequest:
		return "approval_request"
	case *runnerv1.RunEvent_StateDelta:
		return "state_delta"
	case *runnerv1.RunEvent_Usage:
		return "usage"
	case *runnerv1.RunEvent_Error:
		return "error"
	case *runnerv1.RunEvent_Native:
		return "native"
	}
	return "unknown"
}
