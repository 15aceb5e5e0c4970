package main

import (
	"context"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
)

// defaultDrainTimeout is how long a stopping server lets runs in progress finish.
const defaultDrainTimeout = 30 * time.Second

// drain stops a server gracefully (SIGTERM, Ctrl-C): it stops accepting connections at
// once, lets the runs in progress finish for up to timeout, then ends the rest
// interrupted (each with its one terminal event, which their streams carry to the
// clients) and waits for the connections to close.
func drain(log hclog.Logger, srv *http.Server, rt *host.Runtime, timeout time.Duration) {
	// Shutdown closes the listeners and idle connections now and waits for the active
	// ones, whose streams end with their runs.
	sctx, cancel := context.WithTimeout(context.Background(), timeout+15*time.Second)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("connections still open at exit", "error", err)
		}
	}()

	dctx, dcancel := context.WithTimeout(context.Background(), timeout)
	if err := rt.Idle(dctx); err != nil {
		log.Warn("runs still in progress after the drain timeout; interrupting them", "timeout", timeout)
	}
	dcancel()
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := rt.Close(cctx); err != nil {
		log.Warn("runs did not end in time", "error", err)
	}
	ccancel()
	<-shut
}
