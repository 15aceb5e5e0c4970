package pluginsdk

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Size limits of the runner protocol. They derive from one number, the host's default
// request body limit, so that whatever the HTTP surfaces accept fits through the runner
// transport: a RunRequest carries the input up to four times (content, messages, parts and
// the client's own items) plus the session's history, which the host keeps within
// HistoryBudgetBytes.
const (
	// MaxRequestBytes is the host's default HTTP request body limit (32 MiB).
	MaxRequestBytes = 32 << 20
	// HistoryBudgetBytes is the default byte budget of the history sent with a turn;
	// older messages beyond it are truncated with a marker.
	HistoryBudgetBytes = 16 << 20
	// MaxMessageBytes is the largest gRPC message either side of the runner protocol
	// sends or accepts (the Python SDK uses the same number). gRPC's own default, 4 MiB,
	// would fail inputs over about 1 MiB.
	MaxMessageBytes = 4*MaxRequestBytes + HistoryBudgetBytes + 16<<20
)

// GRPCDialOptions are the host side's client options (see plugin.ClientConfig).
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes))}
}

// grpcServer builds a runner's gRPC server with the protocol's message limits (go-plugin's
// default server keeps gRPC's 4 MiB receive limit).
func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	return plugin.DefaultGRPCServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes)))
}
