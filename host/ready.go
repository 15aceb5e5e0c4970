package host

import (
	"context"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// readyProbeApp and readyProbeUser name the sessions Ready writes, each deleted at once.
const (
	readyProbeApp  = "agentengine:ready"
	readyProbeUser = "agentengine:ready"
)

// Ready reports whether the runtime can take turns: the session store takes a write
// (a probe session is created and deleted). Liveness needs no check: a process that
// answers is alive.
func (rt *Runtime) Ready(ctx context.Context) error {
	key := session.Key{App: readyProbeApp, User: readyProbeUser, ID: newID("probe_")}
	if _, err := rt.store.CreateSession(ctx, key); err != nil {
		return fmt.Errorf("session store does not take writes: %w", err)
	}
	if err := rt.store.DeleteSession(ctx, key); err != nil {
		return fmt.Errorf("session store does not take writes: %w", err)
	}
	return nil
}
