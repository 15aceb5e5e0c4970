// Package inprocess serves a pluginsdk.Runner on an in-memory gRPC connection, for tests
// (and single-binary setups) that want a runner without a subprocess. It is a package of
// its own so that the in-memory transport (grpc's bufconn) is linked only into what uses
// it, never into the host or a runner binary.
package inprocess

import (
	"context"
	"net"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/internal/service"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// bufconnSize is the in-memory pipe's buffer.
const bufconnSize = 1 << 20

// Serve serves r in this process and returns a client for it: the same gRPC service a
// runner subprocess exposes (plus go-plugin's "plugin" health service), with the same
// message limits, without a subprocess. The returned function stops the server and
// closes the client.
func Serve(r pluginsdk.Runner) (runnerv1.RunnerClient, func()) {
	lis := bufconn.Listen(bufconnSize)
	if r == nil {
		panic("inprocess: nil Runner")
	}
	srv := grpc.NewServer(runnerplugin.ServerOptions()...)
	runnerv1.RegisterRunnerServer(srv, service.New(r))
	hs := health.NewServer()
	hs.SetServingStatus(plugin.GRPCServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()

	conn, err := grpc.NewClient("passthrough:///agentengine-inprocess", append(runnerplugin.DialOptions(),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	)...)
	if err != nil {
		// NewClient only fails on invalid options or target, both fixed here.
		panic("inprocess: " + err.Error())
	}
	return runnerv1.NewRunnerClient(conn), func() {
		_ = conn.Close()
		srv.Stop()
		_ = lis.Close()
	}
}
