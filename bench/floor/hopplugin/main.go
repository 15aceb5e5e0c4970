// Command hopplugin is the runner of the go-plugin hop floor: the smallest go-plugin
// gRPC runner that streams the same events as an echo-go turn (a native event, two
// reasoning deltas, the text deltas, message done, usage), without the pluginsdk's
// request decoding or emitter. model_options {"deltas": N, "delay_ms": D} shape the reply
// as they do for echo-go. The bench floor starts it through host/runnerproc.
package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

func main() {
	if hs := runnerplugin.Handshake(); os.Getenv(hs.MagicCookieKey) != hs.MagicCookieValue {
		os.Stderr.WriteString("hopplugin is started by the bench floor (bench/cmd/floor), not by hand\n")
		os.Exit(1)
	}
	if ppid := os.Getppid(); ppid > 1 {
		go watchParent(ppid)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: runnerplugin.Handshake(),
		Plugins:         plugin.PluginSet{runnerplugin.Name: &grpcPlugin{}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}

// watchParent exits once the floor process is gone.
func watchParent(ppid int) {
	for range time.Tick(time.Second) {
		if os.Getppid() != ppid {
			os.Exit(0)
		}
	}
}

type grpcPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	runnerv1.RegisterRunnerServer(s, server{})
	return nil
}

func (grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return runnerv1.NewRunnerClient(c), nil
}

type server struct {
	runnerv1.UnimplementedRunnerServer
}

func (server) Describe(context.Context, *runnerv1.DescribeRequest) (*runnerv1.DescribeResponse, error) {
	return &runnerv1.DescribeResponse{
		ProtocolVersion: runnerplugin.Protocol(), Framework: "go", AgentName: "hop",
		Capabilities: &runnerv1.Capabilities{},
	}, nil
}

type payload struct {
	Input        string `json:"input"`
	ModelOptions struct {
		Deltas  int `json:"deltas"`
		DelayMS int `json:"delay_ms"`
	} `json:"model_options"`
}

func (server) Run(req *runnerv1.RunRequest, st grpc.ServerStreamingServer[runnerv1.RunEvent]) error {
	var p payload
	_ = json.Unmarshal(req.PayloadJson, &p)
	if p.Input == "" {
		p.Input = "(empty input)"
	}
	ctx := st.Context()
	delay := time.Duration(p.ModelOptions.DelayMS) * time.Millisecond
	pause := func() error {
		if delay <= 0 {
			return ctx.Err()
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	opts, _ := json.Marshal(p.ModelOptions)
	if err := st.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Native{Native: &runnerv1.Native{Framework: "go", Kind: "echo.options", DataJson: opts}}}); err != nil {
		return err
	}
	for _, r := range []string{"Thinking about: ", p.Input} {
		if err := pause(); err != nil {
			return err
		}
		if err := st.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ReasoningDelta{ReasoningDelta: &runnerv1.ReasoningDelta{Text: r}}}); err != nil {
			return err
		}
	}
	deltas := shape(strings.Fields("Echo: "+p.Input), p.ModelOptions.Deltas)
	var full strings.Builder
	for _, d := range deltas {
		if err := pause(); err != nil {
			return err
		}
		full.WriteString(d)
		if err := st.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: d}}}); err != nil {
			return err
		}
	}
	if err := st.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_MessageDone{MessageDone: &runnerv1.MessageDone{Text: full.String()}}}); err != nil {
		return err
	}
	return st.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Usage{Usage: &runnerv1.Usage{
		InputTokens: int64(len(strings.Fields(p.Input))), OutputTokens: int64(len(deltas)), ReasoningTokens: 4,
	}}})
}

// shape returns n deltas (one per word when n <= 0), cycling over the words; every
// delta but the last ends with a space.
func shape(words []string, n int) []string {
	if n <= 0 {
		n = len(words)
	}
	out := make([]string, n)
	for i := range out {
		w := words[i%len(words)]
		if i < n-1 {
			w += " "
		}
		out[i] = w
	}
	return out
}
