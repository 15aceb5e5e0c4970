package sqlite

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentengine/agentengine/session"
)

// Answered before the commit. A run that nobody but its caller can read until it ends
// (session.Run.Unobserved, in a session its start creates) needs its start's seqs at
// once but not its durability until its end: the writer answers such a start as soon as
// it has run, and leaves the transaction open when the batch held nothing else. The next
// batch that holds any other write (the run's own end at the latest) commits it with
// that write, so a turn nobody follows costs one commit, not two, and the store still
// assigns every seq itself. A read of a session with such a start pending commits it
// first (Store.settle), so that what was answered is what every reader sees.
//
// The open transaction is bounded: it is committed carryWindow after its first early
// answer, or once it holds maxCarried of them. When it fails to commit, the ops answered
// early are run again (replayed) at the start of the next transaction, with the time
// they first ran: each wrote a session of its own that nothing else could write, so the
// replay stores what was answered. After maxReplays failed commits they are given up.

const (
	carryWindow = 5 * time.Millisecond
	maxCarried  = maxBatchOps
	maxReplays  = 3
)

// carry is the writer's record of the ops answered before their commit.
type carry struct {
	// Used by the writer's goroutine only.
	open     *wtx  // the transaction left open, nil when none
	ops      []*op // answered, not yet committed, in the order they ran
	timer    *time.Timer
	failures int           // commits failed since ops were first carried
	window   time.Duration // carryWindow; tests that count transactions lengthen it

	// pending counts the carried ops of each session, for reads from other goroutines.
	mu      sync.Mutex
	pending map[session.Key]int
	n       atomic.Int32
}

func (c *carry) init() {
	c.pending = map[session.Key]int{}
	c.window = carryWindow
	c.timer = time.NewTimer(time.Hour)
	c.timer.Stop()
}

// due fires when the carried ops are to be committed; nil (never) when there are none.
func (c *carry) due() <-chan time.Time {
	if len(c.ops) == 0 {
		return nil
	}
	return c.timer.C
}

// room tells whether n more ops may be carried.
func (c *carry) room(n int) bool { return len(c.ops)+n <= maxCarried }

// add carries o: marked pending before its caller is answered.
func (c *carry) add(o *op) {
	if len(c.ops) == 0 {
		c.timer.Reset(c.window)
	}
	c.ops = append(c.ops, o)
	c.mu.Lock()
	c.pending[o.key]++
	c.mu.Unlock()
	c.n.Add(1)
}

// drop forgets the carried ops keep does not keep (every op when keep is nil): they are
// committed, or given up.
func (c *carry) drop(keep func(*op) bool) {
	kept := c.ops[:0]
	c.mu.Lock()
	for _, o := range c.ops {
		if keep != nil && keep(o) {
			kept = append(kept, o)
			continue
		}
		if c.pending[o.key]--; c.pending[o.key] <= 0 {
			delete(c.pending, o.key)
		}
		c.n.Add(-1)
	}
	c.mu.Unlock()
	clear(c.ops[len(kept):])
	c.ops = kept
	if len(c.ops) == 0 {
		c.timer.Stop()
		c.failures = 0
	}
}

// committed forgets every carried op: they are stored.
func (c *carry) committed() { c.drop(nil) }

// isPending tells whether a start of the session was answered and is not committed yet.
func (c *carry) isPending(key session.Key) bool {
	if c.n.Load() == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[key] > 0
}

// answerEarly carries the batch's ops (all of them ran and may be answered early) and
// answers them.
func (w *writer) answerEarly() {
	for j, o := range w.batch {
		if w.errs[j] != nil {
			continue // failed: answered with its error after the batch
		}
		w.carry.add(o)
		o.done <- nil
		w.answered[j] = true
	}
}

// replayCarried runs the carried ops again in t, a transaction that follows one that
// was rolled back: failed to commit them (counted), or held an op that failed without a
// savepoint (runOnce; not counted). An op that now fails by itself is given up, as are
// all of them after maxReplays failed commits; an error aborts t.
func (w *writer) replayCarried(t *wtx, counted bool) error {
	if len(w.carry.ops) == 0 {
		return nil
	}
	if counted {
		if w.carry.failures++; w.carry.failures > maxReplays {
			w.carry.drop(nil)
			return nil
		}
	}
	t.replaying = true
	defer func() { t.replaying = false }()
	var lost map[*op]bool
	for _, o := range w.carry.ops {
		err, abort := t.runOp(o, false, o.now)
		if abort != nil {
			return abort
		}
		if err != nil {
			if lost == nil {
				lost = map[*op]bool{}
			}
			lost[o] = true
		}
	}
	if lost != nil {
		w.carry.drop(func(o *op) bool { return !lost[o] })
	}
	return nil
}

// commitCarried commits the carried ops now: their window has passed, or the store
// closes. When that fails they stay carried and are tried again a window later.
func (w *writer) commitCarried() {
	t := w.carry.open
	if t == nil {
		if len(w.carry.ops) == 0 {
			return
		}
		var err error
		if t, err = w.begin(); err != nil {
			w.carry.timer.Reset(w.carry.window)
			return
		}
		if err := w.replayCarried(t, true); err != nil || len(w.carry.ops) == 0 {
			w.rollback()
			if err != nil {
				w.carry.timer.Reset(w.carry.window)
			}
			return
		}
	}
	if err := w.commit(t); err != nil {
		w.carry.timer.Reset(w.carry.window)
	}
}

// settle commits a pending early-answered start of key (any session's when key is nil)
// before a read, so that a reader sees what the writer has answered.
func (w *writer) settle(ctx context.Context, key *session.Key) error {
	if w.carry.n.Load() == 0 {
		return nil
	}
	if key != nil && !w.carry.isPending(*key) {
		return nil
	}
	// An op that writes nothing is not answered early: its batch commits.
	return w.do(ctx, 0, func(*wtx, time.Time) error { return nil })
}

// mayAnswerEarly is called by a running op whose caller may be answered before the
// commit: the op created its session, which nothing else can write until it ends.
func (t *wtx) mayAnswerEarly() { t.early = true }
