// Package runnerplugin is the go-plugin and gRPC plumbing of the runner protocol that the
// host (host/runnerproc) and the Go runner SDK (pluginsdk) must agree on: the handshake,
// the plugin's name, the protocol version, the message limits and the plugin itself. It is
// internal so that none of it is part of the SDK's API: an agent author calls
// pluginsdk.Serve and never sees go-plugin.
package runnerplugin

import (
	"context"
	"errors"
	"strconv"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/internal/protolimit"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// ProtocolVersion is the runner protocol version (runner.proto, "v1"): the go-plugin
// handshake's application protocol version and, as text (Protocol), what Describe reports.
// The Python SDK's APP_PROTOCOL_VERSION is the same number.
const ProtocolVersion = 1

// Protocol is ProtocolVersion as Describe reports it.
func Protocol() string { return strconv.Itoa(ProtocolVersion) }

// Name is the key of the runner plugin in go-plugin's plugin map on both sides.
const Name = "runner"

// RunLaneEnv names the environment variable that, set to "off", makes a runner offer no
// run lane: the host then calls Run over gRPC for every run.
const RunLaneEnv = "AGENTENGINE_RUN_LANE"

// MaxMessageBytes is the largest gRPC message either side sends or accepts.
const MaxMessageBytes = protolimit.MaxMessageBytes

// Handshake is the go-plugin handshake shared by the host and every runner (Go or
// Python). The cookie is not a secret: it only tells a runner binary that the agentengine
// host started it. It is a function so that no caller can change it for everyone.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   "AGENTENGINE_RUNNER",
		MagicCookieValue: "agentengine-runner-v1",
	}
}

// DialOptions are the host side's client options (see plugin.ClientConfig).
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes))}
}

// ServerOptions are a runner's gRPC server options: the protocol's message limits
// (go-plugin's default server keeps gRPC's 4 MiB receive limit).
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes)}
}

// NewServer builds a runner's gRPC server with the protocol's message limits; it is
// plugin.ServeConfig.GRPCServer.
func NewServer(opts []grpc.ServerOption) *grpc.Server {
	return plugin.DefaultGRPCServer(append(opts, ServerOptions()...))
}

// Plugin is the go-plugin plugin for the runner protocol. In a runner, Service is set and
// GRPCServer registers it; in the host, GRPCClient returns a runnerv1.RunnerClient.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Service is the runner service; nil on the host side.
	Service runnerv1.RunnerServer
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the Runner service.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Service == nil {
		return errors.New("runnerplugin: Plugin.Service is nil")
	}
	runnerv1.RegisterRunnerServer(s, p.Service)
	return nil
}

// GRPCClient returns a runnerv1.RunnerClient on the plugin's connection.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return runnerv1.NewRunnerClient(c), nil
}
