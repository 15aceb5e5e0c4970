package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/agentengine/agentengine/session"
)

// StateBudget bounds the encoded (JSON) size of each state tier. Every tier travels with
// every turn to the runner, and app: state with every turn of every user of the agent:
// without a bound one write could make a session, a user or an agent unusable.
type StateBudget struct {
	// App bounds an agent's app: tier, Session one session's own tier and User a user's
	// user: tier (per agent). 0: DefaultStateTierBytes; negative: no bound.
	App, User, Session int64
}

// DefaultStateTierBytes is each tier's default budget.
const DefaultStateTierBytes = 4 << 20

func (b StateBudget) withDefaults() StateBudget {
	for _, v := range []*int64{&b.App, &b.User, &b.Session} {
		if *v == 0 {
			*v = DefaultStateTierBytes
		}
	}
	return b
}

// stateLocks orders the budget check and the write of state deltas per agent (the app:
// tier's scope) within this process, so that two writes cannot both pass the check
// against the same state. Replicas sharing a store can still race each other, by at
// most one write each: the budget is a bound on growth, not a byte-exact quota.
type stateLocks struct {
	mu    sync.Mutex
	byApp map[string]*sync.Mutex
}

func (l *stateLocks) lock(app string) func() {
	l.mu.Lock()
	if l.byApp == nil {
		l.byApp = map[string]*sync.Mutex{}
	}
	m, ok := l.byApp[app]
	if !ok {
		m = &sync.Mutex{}
		l.byApp[app] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// hasStateDelta reports whether any event writes state.
func hasStateDelta(evs []session.NewEvent) bool {
	for _, e := range evs {
		if len(e.StateDelta) > 0 {
			return true
		}
	}
	return false
}

// checkStateBudget refuses state deltas that would grow a tier of key's session past its
// budget (ErrStateTooLarge). A write that shrinks a tier, or leaves it as large, passes
// even over the budget (a lowered budget, state written before there was one), so that
// state can always be cleaned up. isNew says the session is not stored yet (its write
// creates it), which saves reading its state. Call it under rt.stateLocks for key.App, up
// to the write.
func (rt *Runtime) checkStateBudget(ctx context.Context, key session.Key, isNew bool, evs []session.NewEvent) error {
	var app, user, sess []map[string]any
	for _, e := range evs {
		if len(e.StateDelta) == 0 {
			continue
		}
		a, u, s, err := session.SplitStateDelta(e.StateDelta)
		if err != nil {
			return clientErr(ErrInvalidInput, "stateDelta", "the state delta is not a JSON object")
		}
		app, user, sess = appendNonNil(app, a), appendNonNil(user, u), appendNonNil(sess, s)
	}
	if app == nil && user == nil && sess == nil {
		return nil
	}
	var (
		st  session.State
		err error
	)
	if !isNew {
		st, err = rt.store.State(ctx, key)
	}
	if isNew || errors.Is(err, session.ErrNotFound) {
		// A session its write creates starts with an empty session tier.
		st, err = rt.store.NewSessionState(ctx, key.App, key.User)
	}
	if err != nil {
		return fmt.Errorf("read state for its budget: %w", err)
	}
	b := rt.stateBudget
	for _, t := range []struct {
		name   string
		cur    map[string]any
		deltas []map[string]any
		limit  int64
		fix    string
	}{
		{"app", st.App, app, b.App, `"app:"`},
		{"user", st.User, user, b.User, `"user:"`},
		{"session", st.Session, sess, b.Session, "unprefixed"},
	} {
		if t.deltas == nil || t.limit < 0 {
			continue
		}
		before, after, err := tierSizes(t.cur, t.deltas)
		if err != nil {
			return clientErr(ErrInvalidInput, "stateDelta", "the state delta cannot be stored: %v", err)
		}
		if after > before && after > t.limit {
			return &ClientError{Kind: ErrStateTooLarge, Param: "stateDelta", Message: fmt.Sprintf(
				"the %s state would take %d bytes, over its budget of %d bytes; nothing was written (remove %s keys by setting them to null to make room)",
				t.name, after, t.limit, t.fix)}
		}
	}
	return nil
}

func appendNonNil(list []map[string]any, m map[string]any) []map[string]any {
	if m == nil {
		return list
	}
	return append(list, m)
}

// tierSizes is a tier's encoded size before and after the deltas.
func tierSizes(cur map[string]any, deltas []map[string]any) (before, after int64, err error) {
	b, err := json.Marshal(cur)
	if err != nil {
		return 0, 0, err
	}
	next := maps.Clone(cur)
	for _, d := range deltas {
		next = session.ApplyDelta(next, d)
	}
	a, err := json.Marshal(next)
	if err != nil {
		return 0, 0, err
	}
	return int64(len(b)), int64(len(a)), nil
}
