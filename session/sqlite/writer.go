package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Group commit. Every write request (an op) is queued for one writer goroutine, which
// owns the only write connection. The writer takes every op queued at that moment (up
// to a bound) and runs them in one BEGIN IMMEDIATE … COMMIT; a failing op rolls back
// alone and gets its own error (the batch runs again with a SAVEPOINT an op once one
// has failed, see runOnce). An op's caller returns only after the commit. The writer never waits for more ops to
// arrive when no other turn is in flight: a lone op runs at once, in a transaction of
// its own. When other turns are in flight (their starts carried, see below), a batch
// about to commit first lets the ready goroutines run once and takes what they queued
// (gather): the commit's pages, which every turn rewrites, are then written once for
// more turns.
//
// The writer caches session rows (writer.rows): a row is written once per transaction,
// before COMMIT, however many ops changed it, and read only when not cached. Within a
// transaction that is safe because the transaction holds the file's write lock. Across
// transactions it is safe because the cache is dropped whenever another connection (a
// second Store or process on the file) may have committed, which PRAGMA data_version
// tells after BEGIN IMMEDIATE, and whenever a transaction of ours is rolled back.
//
// One kind of op may be answered before its commit (carry.go): the start of a run
// nobody else can read until it ends. A batch of only such ops leaves its transaction
// open, and the next batch (the run's end, at the latest) commits it.

// Batch bounds: enough to amortize a commit over many turns, small enough that one
// transaction's work (and the wait of its first op) stays short.
const (
	maxBatchOps   = 64
	maxBatchBytes = 1 << 20
)

// maxCachedRows bounds the session row cache; it is emptied when it grows past that.
const maxCachedRows = 1024

// op states: the writer takes a queued op, or its caller abandons it when its context
// ends first; exactly one of the two wins.
const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

// op is one write request.
type op struct {
	ctx   context.Context
	fn    func(t *wtx, now time.Time) error
	size  int // bytes it writes, roughly, for maxBatchBytes
	state atomic.Int32
	done  chan error // buffered: the writer never blocks on a reply

	// early: the caller may be answered before the commit when fn says so
	// (wtx.mayAnswerEarly); key is then the session it wrote, and now its time, for a
	// replay (carry.go).
	early bool
	key   session.Key
	now   time.Time
}

// A closed store is unavailable to its callers, as a database that went away is.
var errClosed = fmt.Errorf("sqlite session store is closed: %w", session.ErrUnavailable)

// writer is the single write path: the queue and the goroutine that drains it.
type writer struct {
	st    *wstatements
	clock *core.Clock

	mu     sync.Mutex
	queue  []*op
	closed bool

	wake chan struct{} // capacity 1: there may be queued ops
	stop chan struct{} // closed by close
	exit chan struct{} // closed when the loop has returned

	// Used by the loop goroutine only.
	batch       []*op
	errs        []error
	rows        map[session.Key]*crow // committed session rows
	dataVersion int64                 // PRAGMA data_version when rows were last valid
	txn         uint64                // numbers transactions, for crow.txn
	answered    []bool                // per op of the batch: answered before the commit

	carry carry  // ops answered before their commit, and their open transaction
	yield func() // runtime.Gosched; gather calls it before taking more ops
}

func newWriter(st *wstatements, clock *core.Clock) *writer {
	w := &writer{st: st, clock: clock, rows: map[session.Key]*crow{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), exit: make(chan struct{}),
		yield: runtime.Gosched}
	w.carry.init()
	go w.loop()
	return w
}

// do runs fn in the writer and waits for its outcome. An op whose ctx ends while it is
// queued is never run, and do returns ctx.Err(); once the writer has taken it, do
// waits for the commit so that the error it returns says what was stored.
func (w *writer) do(ctx context.Context, size int, fn func(t *wtx, now time.Time) error) error {
	return w.doOp(ctx, &op{fn: fn, size: size})
}

// doOp queues o and waits for its outcome, as do.
func (w *writer) doOp(ctx context.Context, o *op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.ctx, o.done = ctx, make(chan error, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	w.queue = append(w.queue, o)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	select {
	case err := <-o.done:
		return err
	case <-ctx.Done():
		if o.state.CompareAndSwap(opQueued, opAbandoned) {
			return ctx.Err()
		}
		return <-o.done
	}
}

// close fails the queued ops, lets a running batch finish and stops the loop.
func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	queued := w.queue
	w.queue = nil
	w.mu.Unlock()
	for _, o := range queued {
		if o.state.CompareAndSwap(opQueued, opTaken) {
			o.done <- errClosed
		}
	}
	close(w.stop)
	<-w.exit
}

func (w *writer) loop() {
	defer close(w.exit)
	for {
		select {
		case <-w.wake:
		case <-w.carry.due():
			w.commitCarried()
			continue
		case <-w.stop:
			w.commitCarried()
			return
		}
		for w.take() {
			w.run()
		}
	}
}

// take moves the ops queued now, within the batch bounds, into w.batch.
func (w *writer) take() bool {
	clear(w.batch)
	w.batch = w.batch[:0]
	return w.takeMore()
}

// takeMore appends the ops queued now to w.batch, within the batch bounds; it tells
// whether it took any.
func (w *writer) takeMore() bool {
	bytes, had := 0, len(w.batch)
	for _, o := range w.batch {
		bytes += o.size
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	for ; i < len(w.queue); i++ {
		o := w.queue[i]
		if len(w.batch) > 0 && (len(w.batch) == maxBatchOps || bytes+o.size > maxBatchBytes) {
			break
		}
		if !o.state.CompareAndSwap(opQueued, opTaken) {
			continue // abandoned: its caller has returned
		}
		w.batch = append(w.batch, o)
		bytes += o.size
	}
	n := copy(w.queue, w.queue[i:])
	clear(w.queue[n:])
	w.queue = w.queue[:n]
	return len(w.batch) > had
}

// run executes w.batch and replies to every op in it. SQLITE_BUSY can only come from
// another process or Store on the same file outliving the busy timeout; the batch is
// then retried a few times, since nothing of it is stored.
func (w *writer) run() {
	const attempts = 3
	if cap(w.errs) < len(w.batch) {
		w.errs = make([]error, len(w.batch))
		w.answered = make([]bool, len(w.batch))
	}
	w.errs = w.errs[:len(w.batch)]
	w.answered = w.answered[:len(w.batch)]
	clear(w.answered)
	for i := 1; ; i++ {
		clear(w.errs)
		err := w.runOnce()
		if err == nil {
			break
		}
		if i < attempts && isBusy(err) {
			time.Sleep(time.Duration(i) * 10 * time.Millisecond)
			continue
		}
		// Nothing is stored: an op that did not fail by itself fails with the batch.
		for j := range w.errs {
			if w.errs[j] == nil {
				w.errs[j] = err
			}
		}
		break
	}
	for j, o := range w.batch {
		if !w.answered[j] {
			o.done <- w.errs[j]
		}
	}
}

// runOnce runs the batch in one transaction, the open one if ops answered early left
// one (after replaying them when it was rolled back). It returns an error when nothing
// was committed; w.errs holds each op's own outcome. A batch whose every op may be
// answered before the commit is answered at once and its transaction left open.
//
// The ops run without savepoints first: a failing op is rare, and a savepoint and its
// release are two statements an op. When one fails, the transaction is rolled back and
// the batch runs again with each op in a savepoint of its own, so that the failing one
// rolls back alone (the ops answered early are replayed first, as after a failed
// commit).
func (w *writer) runOnce() error {
	err := w.runTx(false)
	if !errors.Is(err, errIsolate) {
		return err
	}
	clear(w.errs)
	return w.runTx(true)
}

// errIsolate is runTx's outcome when an op run without a savepoint failed: the
// transaction is rolled back, to be run again with a savepoint an op.
var errIsolate = errors.New("an op failed: run the batch again, each op in a savepoint")

// runTx runs the batch in one transaction (see runOnce); isolate runs each op in a
// savepoint, for a batch run again after one of its ops failed.
func (w *writer) runTx(isolate bool) error {
	t := w.carry.open
	if t == nil {
		var err error
		if t, err = w.begin(); err != nil {
			return err
		}
		// A replay after a failed op is not a failed commit (replayCarried counts those).
		if err := w.replayCarried(t, !isolate); err != nil {
			w.rollback()
			return err
		}
	}
	// A lone op in a transaction of its own is never run again: when it fails, the
	// transaction is rolled back and that is its outcome.
	lone := len(w.batch) == 1 && len(w.carry.ops) == 0
	ok, early := 0, 0
	for from, gathers := 0, 0; ; gathers++ {
		for j := from; j < len(w.batch); j++ {
			o := w.batch[j]
			if err := o.ctx.Err(); err != nil {
				w.errs[j] = err // ended while queued: not run
				continue
			}
			t.early = false
			now := w.clock.Now()
			err, abort := t.runOp(o, !isolate, now)
			if abort != nil {
				// The others fail with the cause, not with this op's own error.
				w.errs[j] = fmt.Errorf("%w (%w)", err, abort)
				w.abandonOpen()
				return abort
			}
			if err != nil {
				w.errs[j] = err
				if !isolate {
					w.abandonOpen()
					if lone && len(w.batch) == 1 {
						return err
					}
					return errIsolate
				}
				continue
			}
			ok++
			if o.early && t.early {
				o.now = now
				early++
			}
		}
		// About to commit: ops queued meanwhile by other turns in flight join this
		// transaction (gather).
		if ok == 0 || (early == ok && w.carry.room(early)) || gathers == maxGathers {
			break
		}
		if from = len(w.batch); !w.gather() {
			break
		}
	}
	if ok == 0 && len(w.carry.ops) == 0 {
		w.abandonOpen()
		return nil
	}
	if ok > 0 && early == ok && w.carry.room(early) {
		w.carry.open = t
		w.answerEarly()
		return nil
	}
	if ok == 0 {
		w.carry.open = t // nothing of this batch to commit; the carried ops wait on
		return nil
	}
	return w.commit(t)
}

// maxGathers bounds how often one transaction waits for more ops (gather).
const maxGathers = 2

// gather lets the goroutines that are ready run once before a commit, when turns other
// than the batch's are in flight (their starts carried in this transaction), and takes
// the ops they queued into the batch: a commit's cost is mostly its pages, which the
// ops of many turns share. It tells whether it took any. With no other turn in flight
// (one client), nothing waits.
func (w *writer) gather() bool {
	if len(w.batch) >= maxBatchOps || !w.othersInFlight() {
		return false
	}
	w.yield()
	had := len(w.batch)
	if !w.takeMore() {
		return false
	}
	for range len(w.batch) - had {
		w.errs = append(w.errs, nil)
		w.answered = append(w.answered, false)
	}
	return true
}

// othersInFlight tells whether a carried start belongs to a session no op of the batch
// writes: a turn whose end is still to come.
func (w *writer) othersInFlight() bool {
	for _, c := range w.carry.ops {
		if !slices.ContainsFunc(w.batch, func(o *op) bool { return o.key == c.key }) {
			return true
		}
	}
	return false
}

// begin starts a write transaction, dropping the row cache when another connection
// has committed since the last one.
func (w *writer) begin() (*wtx, error) {
	if _, err := w.st.begin.Exec(); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	var version int64
	if err := w.st.dataVersion.QueryRow().Scan(&version); err != nil {
		w.rollback()
		return nil, fmt.Errorf("data version: %w", err)
	}
	if version != w.dataVersion {
		clear(w.rows) // another connection has committed: cached rows may be stale
		w.dataVersion = version
	}
	w.txn++
	return &wtx{w: w, rows: w.rows, txn: w.txn}, nil
}

// commit writes t's session rows and commits; on failure it rolls back, and the ops
// answered early are replayed by the next transaction.
func (w *writer) commit(t *wtx) error {
	w.carry.open = nil
	if err := t.flush(); err != nil {
		w.rollback()
		return err
	}
	if _, err := w.st.commit.Exec(); err != nil {
		w.rollback()
		return fmt.Errorf("commit: %w", err)
	}
	t.committed()
	w.carry.committed()
	return nil
}

// abandonOpen rolls the transaction back; ops answered early in it are replayed by
// the next one.
func (w *writer) abandonOpen() {
	w.carry.open = nil
	w.rollback()
}

func (w *writer) rollback() {
	// Fails only when SQLite has already rolled the transaction back by itself; there
	// is nothing left to undo then.
	_, _ = w.st.rollback.Exec()
	clear(w.rows) // they may hold what was just rolled back
}

// wtx is the state of one batch transaction: the session rows it has read, and the
// undo log of the op being run.
type wtx struct {
	w     *writer
	rows  map[session.Key]*crow
	txn   uint64
	order []*crow // rows used in this transaction, in first-use order
	undo  []undo
	// early is set by the running op when its caller may be answered before the
	// commit (answerEarly); replaying is set while ops answered so are run again.
	early, replaying bool
}

// crow is a cached session row with the changes not yet written.
type crow struct {
	row
	// state is the decoded session state once loaded in this transaction (nil until
	// then); stateJSON is its encoding, set when an op changed it.
	state     map[string]any
	stateJSON *string
	dirty     bool   // the summary columns need writing
	gone      bool   // deleted in this transaction
	txn       uint64 // the transaction that last put it in wtx.order
}

// undo restores one cache entry if the op that first touched it fails.
type undo struct {
	key  session.Key
	ptr  *crow // nil: the key was not cached before the op
	prev crow
}

// runOp runs o's fn inside a savepoint (unless bare); on failure it rolls the
// savepoint (when there is one) and the row cache back to where they were. err is the
// op's own outcome; abort is set when the transaction cannot go on (a savepoint
// statement failed).
func (t *wtx) runOp(o *op, bare bool, now time.Time) (err, abort error) {
	t.undo = t.undo[:0]
	if !bare {
		if _, err := t.w.st.savepoint.Exec(); err != nil {
			return errBatchAborted, fmt.Errorf("savepoint: %w", err)
		}
	}
	if err = o.fn(t, now); err == nil {
		if !bare {
			if _, err := t.w.st.release.Exec(); err != nil {
				return errBatchAborted, fmt.Errorf("release savepoint: %w", err)
			}
		}
		return nil, nil
	}
	for i := len(t.undo) - 1; i >= 0; i-- {
		u := t.undo[i]
		if u.ptr == nil {
			delete(t.rows, u.key)
			continue
		}
		txn := u.ptr.txn // the row stays listed in t.order
		*u.ptr = u.prev
		u.ptr.txn = txn
		t.rows[u.key] = u.ptr
	}
	if !bare {
		if _, rerr := t.w.st.rollbackTo.Exec(); rerr != nil {
			return err, fmt.Errorf("roll back a failed write: %w", rerr)
		}
		if _, rerr := t.w.st.release.Exec(); rerr != nil {
			return err, fmt.Errorf("release the savepoint of a failed write: %w", rerr)
		}
	}
	return err, nil
}

// errBatchAborted is the outcome of an op whose own savepoint could not be set or
// released: the transaction, with the op, is rolled back.
var errBatchAborted = errors.New("write transaction aborted")

// touch records key's cache entry before the running op first changes it.
func (t *wtx) touch(key session.Key) {
	for _, u := range t.undo {
		if u.key == key {
			return
		}
	}
	c := t.rows[key]
	u := undo{key: key, ptr: c}
	if c != nil {
		u.prev = *c
	}
	t.undo = append(t.undo, u)
}

// session returns the session's row for the running op to read and change; changes
// are written by flush.
func (t *wtx) session(key session.Key) (*crow, error) {
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	t.touch(key)
	if c, ok := t.rows[key]; ok {
		if c.gone {
			return nil, fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
		}
		t.use(c)
		return c, nil
	}
	r, err := lookup(context.Background(), t.w.st.session, key)
	if err != nil {
		return nil, err
	}
	return t.put(key, &crow{row: r}), nil
}

// cached tells whether key's row is in the cache (its session exists, or was deleted in
// this transaction).
func (t *wtx) cached(key session.Key) bool {
	_, ok := t.rows[key]
	return ok
}

// createSession inserts an empty session created at created; ErrExists if the key is
// taken.
func (t *wtx) createSession(key session.Key, created time.Time) (*crow, error) {
	res, err := t.w.st.insertSession.Exec(key.App, key.User, key.ID, ns(created), ns(created))
	if isUnique(err) {
		return nil, fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("create session %q: %w", key.ID, err)
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("create session %q: %w", key.ID, err)
	}
	// Cached, so that a later request of the batch needs no lookup.
	t.touch(key)
	return t.put(key, &crow{row: row{pk: pk, sess: session.Session{Key: key, CreatedAt: created, UpdatedAt: created}}}), nil
}

// createStarted inserts a session created at created that holds the summary of its
// first events ps (plain ones), stored at now: one insert where createSession and
// appendEvents would insert the row empty and flush would update it. It returns the
// events, seqs assigned, for the caller to insert once it may (after the run they
// belong to); ErrExists if the key is taken.
func (t *wtx) createStarted(key session.Key, created time.Time, ps []core.Pending, now time.Time) (*crow, []session.Event, error) {
	evs, err := core.Assign(ps, key.ID, 0, now)
	if err != nil {
		return nil, nil, err
	}
	m := session.Session{Key: key, CreatedAt: created, UpdatedAt: created}
	core.Summarize(&m, false, ps, evs, now)
	res, err := t.w.st.insertStarted.Exec(key.App, key.User, key.ID, m.Title, m.FirstPrompt, m.LastPrompt, m.LastSeq,
		m.CheckpointSeq, m.ActiveInvocationID, m.ActiveRunStatus, ns(m.CreatedAt), ns(m.UpdatedAt))
	if isUnique(err) {
		return nil, nil, fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("create session %q: %w", key.ID, err)
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return nil, nil, fmt.Errorf("create session %q: %w", key.ID, err)
	}
	t.touch(key)
	return t.put(key, &crow{row: row{pk: pk, sess: m}}), evs, nil
}

// put caches a row the running op has created (or read); the caller has touched key.
func (t *wtx) put(key session.Key, c *crow) *crow {
	t.rows[key] = c
	t.use(c)
	return c
}

// use lists c among the rows of this transaction, once.
func (t *wtx) use(c *crow) {
	if c.txn != t.txn {
		c.txn = t.txn
		t.order = append(t.order, c)
	}
}

// committed makes the cached rows what is now stored: clean, and without the decoded
// state, which can be large and is read again when needed.
func (t *wtx) committed() {
	for _, c := range t.order {
		if c.gone {
			if t.rows[c.sess.Key] == c {
				delete(t.rows, c.sess.Key)
			}
			continue
		}
		c.dirty, c.state, c.stateJSON = false, nil, nil
	}
	if len(t.rows) > maxCachedRows {
		clear(t.rows)
	}
}

// sessionState returns c's decoded state, reading it on first use.
func (t *wtx) sessionState(c *crow) (map[string]any, error) {
	if c.state != nil {
		return c.state, nil
	}
	m, err := readTier(t.w.st.sessionState.QueryRow(c.pk))
	if err != nil {
		return nil, err
	}
	c.state = m
	return m, nil
}

// flush writes the changed session rows.
func (t *wtx) flush() error {
	for _, c := range t.order {
		if c.gone || !c.dirty || t.rows[c.sess.Key] != c {
			continue
		}
		m := &c.sess
		var state any
		if c.stateJSON != nil {
			state = *c.stateJSON
		}
		if _, err := t.w.st.updateSession.Exec(m.Title, c.renamed, m.FirstPrompt, m.LastPrompt, m.LastSeq,
			m.CheckpointSeq, m.ActiveInvocationID, m.ActiveRunStatus, ns(m.UpdatedAt), state, c.pk); err != nil {
			return fmt.Errorf("update session %q: %w", m.ID, err)
		}
	}
	return nil
}
