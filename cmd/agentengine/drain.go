package main

import (
	"context"
	"errors"
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
// clients) and waits for the connections to close. A value on force (a second Ctrl-C)
// cuts the wait short: the runs still in progress end interrupted now, their streams get
// a moment to carry that, and the connections are closed. It reports whether it was forced.
func drain(log hclog.Logger, srv *http.Server, rt *host.Runtime, timeout time.Duration, force <-chan struct{}) (forced bool) {
	// Shutdown closes the listeners and idle connections now and waits for the active
	// ones, whose streams end with their runs.
	sctx, cancel := context.WithTimeout(context.Background(), timeout+15*time.Second)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("connections still open at exit", "error", err)
		}
	}()

	dctx, dcancel := context.WithTimeout(context.Background(), timeout)
	idle := make(chan error, 1)
	go func() { idle <- rt.Idle(dctx) }()
	select {
	case err := <-idle:
		if err != nil {
			log.Warn("runs still in progress after the drain timeout; interrupting them", "timeout", timeout)
		}
	case <-force:
		forced = true
	}
	dcancel()
	wait := 10 * time.Second
	if forced {
		wait = forcedRunsWait
	}
	cctx, ccancel := context.WithTimeout(context.Background(), wait)
	if err := rt.Close(cctx); err != nil {
		log.Warn("runs did not end in time", "error", err)
	}
	ccancel()
	if forced {
		// The streams of the runs just ended carry their terminal event; then the rest go.
		select {
		case <-shut:
		case <-time.After(forcedStreamsWait):
			_ = srv.Close()
			<-shut
		}
		return true
	}
	<-shut
	return false
}

// After a second Ctrl-C: how long the runs in progress get to record their interrupted
// end, and their streams to carry it, before the process exits.
const (
	forcedRunsWait    = 3 * time.Second
	forcedStreamsWait = time.Second
)
