// Command stubborn is a test runner that ignores GRPCController.Shutdown and SIGTERM and
// starts a child that inherits its stderr and sleeps: go-plugin's Kill alone would wait
// for that child forever. The child's pid is written to $STUBBORN_PIDFILE.
package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// server is the runner service itself: pluginsdk.Serve would shut down on Shutdown.
type server struct {
	runnerv1.UnimplementedRunnerServer
}

func (server) Describe(context.Context, *runnerv1.DescribeRequest) (*runnerv1.DescribeResponse, error) {
	return &runnerv1.DescribeResponse{ProtocolVersion: runnerplugin.Protocol(), Framework: "go", AgentName: "stubborn"}, nil
}

func (server) Run(_ *runnerv1.RunRequest, stream grpc.ServerStreamingServer[runnerv1.RunEvent]) error {
	return stream.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: "still here"}}})
}

// ignoreShutdown answers Shutdown without running it, so the server keeps serving.
func ignoreShutdown(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if info.FullMethod == "/plugin.GRPCController/Shutdown" {
		return &emptypb.Empty{}, nil
	}
	return h(ctx, req)
}

func main() {
	signal.Ignore(syscall.SIGTERM)
	if os.Getenv("STUBBORN_CHILD") == "1" {
		for {
			time.Sleep(time.Hour) // select{} would be a detected deadlock
		}
	}
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	child := exec.Command(self)
	child.Env = append(os.Environ(), "STUBBORN_CHILD=1")
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		panic(err)
	}
	if f := os.Getenv("STUBBORN_PIDFILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: runnerplugin.Handshake(),
		Plugins:         plugin.PluginSet{runnerplugin.Name: &runnerplugin.Plugin{Service: server{}}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.UnaryInterceptor(ignoreShutdown))...)
		},
	})
}
