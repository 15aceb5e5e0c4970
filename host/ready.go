package host

import (
	"context"
	"errors"

	"github.com/agentengine/agentengine/session"
)

// readyProbeApp and readyProbeUser name the sessions Ready writes, each deleted at once.
const (
	readyProbeApp  = "agentengine:ready"
	readyProbeUser = "agentengine:ready"
)

// startable is implemented by runners that can tell, without starting a process,
// whether a run could get one (runnerproc.Supervisor, runnerpool.Pool).
type startable interface {
	Startable() error
}

// Ready reports whether the runtime can take turns: the session store takes a write
// (a probe session is created and deleted), no agent is marked unavailable, and every
// agent's runner can start (none is waiting out the backoff after failed starts). Liveness needs no check: a process that
// answers is alive. The error is a ClientError; the cause is logged.
func (rt *Runtime) Ready(ctx context.Context) error {
	key := session.Key{App: readyProbeApp, User: readyProbeUser, ID: newID("probe_")}
	_, err := rt.store.CreateSession(ctx, key)
	if err == nil {
		err = rt.store.DeleteSession(ctx, key)
	}
	if err != nil {
		rt.log.Warn("not ready: the session store does not take writes", "error", err)
		return clientErr(ErrUnavailable, "", "the session store does not take writes")
	}
	if bad := rt.Unavailable(); len(bad) > 0 {
		return unavailableErr(bad[0].Name, bad[0].Error)
	}
	for _, a := range rt.Agents() { // in order: the same agent is named every time
		s, ok := rt.agents[a.Name].Runner.(startable)
		if !ok {
			continue
		}
		if err := s.Startable(); err != nil {
			var u interface{ Unresponsive() bool }
			if errors.As(err, &u) && u.Unresponsive() {
				rt.log.Warn("not ready: an agent's runner stopped responding", "agent", a.Name, "error", err)
				return clientErr(ErrUnavailable, "", "the runner of agent %q stopped responding and is being replaced", a.Name)
			}
			rt.log.Warn("not ready: an agent's runner cannot start", "agent", a.Name, "error", err)
			return clientErr(ErrUnavailable, "", "the runner of agent %q cannot start at the moment (it failed and is waiting to retry)", a.Name)
		}
	}
	return nil
}
