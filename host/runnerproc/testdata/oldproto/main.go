// Command oldproto is a test runner that speaks another runner protocol version than the
// host: its Describe reports version "0".
package main

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

type server struct {
	runnerv1.UnimplementedRunnerServer
}

func (server) Describe(context.Context, *runnerv1.DescribeRequest) (*runnerv1.DescribeResponse, error) {
	return &runnerv1.DescribeResponse{ProtocolVersion: "0", Framework: "go", AgentName: "oldproto"}, nil
}

type grpcPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	runnerv1.RegisterRunnerServer(s, server{})
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: runnerplugin.Handshake(),
		Plugins:         plugin.PluginSet{runnerplugin.Name: grpcPlugin{}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
