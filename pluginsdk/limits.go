package pluginsdk

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/wire"
)

// MaxMessageBytes is the largest gRPC message either side of the runner protocol sends or
// accepts (the Python SDK uses the same number); see wire.MaxMessageBytes.
const MaxMessageBytes = wire.MaxMessageBytes

// GRPCDialOptions are the host side's client options (see plugin.ClientConfig).
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes))}
}

// GRPCServerOptions are a runner's gRPC server options: the protocol's message limits
// (go-plugin's default server keeps gRPC's 4 MiB receive limit).
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes)}
}

// grpcServer builds a runner's gRPC server with the protocol's message limits.
func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	return plugin.DefaultGRPCServer(append(opts, GRPCServerOptions()...))
}
