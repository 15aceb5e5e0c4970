package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
)

// What replicas need of each other, over the database they share:
//
//   - a lease: a row in replicas whose heartbeat_at is renewed every third of the TTL;
//   - run ownership: StartRun records the replica in runs.owner;
//   - orphans: in-progress runs whose owner's lease has expired, handed to the host
//     (OnOrphans) after every heartbeat so that a survivor ends them;
//   - a relay: one NOTIFY channel per schema carries the owner's run events to followers
//     on every replica (Publish/Follow) and cancel requests to the owner (RequestCancel);
//     a dedicated connection LISTENs, so nothing is polled;
//   - interest: a run's events are only sent once someone follows it. Follow announces
//     the run to every replica ("f", with the run's key); from then on their Publish
//     sends it, and each hands the request to the host (OnFollow), whose replica
//     executing the run publishes it again from its start: a follower joining mid-run
//     gets all of it. Most runs are never followed from another replica and cost no
//     notifications.
//
// Notification payloads are "r<run> <message>" (relay), "s<run> <spill id>" (a relay
// message kept in relay_spill because it exceeds NOTIFY's payload limit),
// "f<run> <run key JSON>" (followed) and "c<owner> <run key JSON>" (cancel).

// maxPayload stays under NOTIFY's 8000-byte payload limit with room for the prefix.
const maxPayload = 7800

// interestTTL is how long a run stays followed (or published for) after its last
// announcement (or message): longer than any run.
const interestTTL = 24 * time.Hour

// spillTTL is how long a spilled message is kept for followers to read.
const spillTTL = 10 * time.Minute

type cluster struct {
	s       *Store
	id      string
	channel string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	follows   map[string]map[*follow]struct{}
	wanted    map[string]time.Time // runs followed somewhere, by tag: when announced
	published map[string]time.Time // runs this replica published for, by tag: when last
	onCancel  func(session.Key, string)
	onFollow  func(session.Key, string)
	onOrphans func(context.Context, []session.Run)
	listening chan struct{} // closed once LISTEN is active
}

type follow struct{ deliver func([]byte) }

func (s *Store) startCluster(ctx context.Context) error {
	id := s.cfg.replicaID
	if id == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("replica id: %w", err)
		}
		id = "replica-" + hex.EncodeToString(b[:])
	}
	var schema string
	if err := s.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	// Channels are per database, schemas are not: the schema's hash keeps the replicas
	// of different schemas apart.
	h := sha256.Sum256([]byte(schema))
	c := &cluster{s: s, id: id, channel: "agentengine_" + hex.EncodeToString(h[:6]),
		follows: map[string]map[*follow]struct{}{}, wanted: map[string]time.Time{}, published: map[string]time.Time{},
		listening: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	// Runs this replica id left in progress in an earlier life are nobody's now: the
	// survivors' (or this replica's own) recovery ends them.
	if _, err := s.pool.Exec(ctx, `UPDATE runs SET owner = '' WHERE owner = $1 AND status = 'in_progress'`, id); err != nil {
		c.cancel()
		return fmt.Errorf("cluster: %w", err)
	}
	if err := c.heartbeat(ctx); err != nil {
		c.cancel()
		return fmt.Errorf("cluster lease: %w", err)
	}
	s.cl = c
	c.wg.Add(2)
	go c.listenLoop()
	go c.leaseLoop()
	select {
	case <-c.listening:
	case <-ctx.Done():
		c.close()
		return ctx.Err()
	case <-time.After(s.cfg.connectTimeout):
		c.close()
		return errors.New("cluster: could not LISTEN for run events")
	}
	return nil
}

func (c *cluster) close() error {
	c.cancel()
	c.wg.Wait()
	// Leaving cleanly: survivors need not wait for the lease to run out.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.s.pool.Exec(ctx, `UPDATE replicas SET heartbeat_at = '-infinity' WHERE id = $1`, c.id)
	if err != nil {
		return fmt.Errorf("leave cluster: %w", err)
	}
	return nil
}

// replicaID is the owner recorded for runs started here ("" without a cluster).
func (s *Store) replicaID() string {
	if s.cl == nil {
		return ""
	}
	return s.cl.id
}

// ReplicaID names this replica.
func (s *Store) ReplicaID() string { return s.replicaID() }

func (c *cluster) heartbeat(ctx context.Context) error {
	_, err := c.s.pool.Exec(ctx, `INSERT INTO replicas (id) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, c.id)
	return err
}

func (c *cluster) leaseLoop() {
	defer c.wg.Done()
	every := c.s.cfg.leaseTTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, every)
		if err := c.heartbeat(ctx); err == nil {
			c.sweep(ctx)
		}
		cancel()
	}
}

// sweep hands orphaned runs to the host and drops what nobody needs any more.
func (c *cluster) sweep(ctx context.Context) {
	c.mu.Lock()
	h := c.onOrphans
	c.mu.Unlock()
	if h != nil {
		if runs, err := c.s.Orphaned(ctx); err == nil && len(runs) > 0 {
			h(ctx, runs)
		}
	}
	_, _ = c.s.pool.Exec(ctx, `DELETE FROM replicas WHERE heartbeat_at < now() - $1::interval`,
		strconv.FormatInt((100*c.s.cfg.leaseTTL).Milliseconds(), 10)+" milliseconds")
	c.mu.Lock()
	for _, m := range []map[string]time.Time{c.wanted, c.published} {
		for tag, at := range m {
			if time.Since(at) > interestTTL {
				delete(m, tag)
			}
		}
	}
	c.mu.Unlock()
	_, _ = c.s.pool.Exec(ctx, `DELETE FROM relay_spill WHERE created_at < now() - $1::interval`,
		strconv.FormatInt(spillTTL.Milliseconds(), 10)+" milliseconds")
}

// Orphaned lists in-progress runs no live replica owns: their owner's lease has expired
// (or they have none). It also lists this replica's own runs started more than a lease
// ago, for the host to tell which of them it no longer executes (a run whose end could
// not be recorded while the database was away). Without a cluster every in-progress run
// is one.
func (s *Store) Orphaned(ctx context.Context) ([]session.Run, error) {
	if err := s.settleAll(ctx); err != nil {
		return nil, err
	}
	if s.cl == nil {
		return s.ActiveRuns(ctx)
	}
	return s.queryRuns(ctx, `SELECT `+runCols+` FROM runs r WHERE status = 'in_progress' AND (
			(owner <> $1 AND NOT EXISTS (SELECT 1 FROM replicas p WHERE p.id = r.owner AND p.heartbeat_at > now() - $2::interval))
			OR (owner = $1 AND created_at < $3))
		ORDER BY created_at, pk`, s.cl.id, strconv.FormatInt(s.cfg.leaseTTL.Milliseconds(), 10)+" milliseconds",
		ns(time.Now().Add(-s.cfg.leaseTTL)))
}

// OnOrphans sets the handler of orphaned runs found after each heartbeat. Several
// replicas may be handed the same run; ending it is first come, first served.
func (s *Store) OnOrphans(fn func(context.Context, []session.Run)) {
	if s.cl == nil {
		return
	}
	s.cl.mu.Lock()
	s.cl.onOrphans = fn
	s.cl.mu.Unlock()
}

// OnCancel sets the handler of cancel requests for runs this replica owns.
func (s *Store) OnCancel(fn func(key session.Key, invocationID string)) {
	if s.cl == nil {
		return
	}
	s.cl.mu.Lock()
	s.cl.onCancel = fn
	s.cl.mu.Unlock()
}

// OnFollow sets the handler of follow announcements (from any replica, this one
// included) for runs this replica may execute; it runs on the listener and must not
// block.
func (s *Store) OnFollow(fn func(key session.Key, invocationID string)) {
	if s.cl == nil {
		return
	}
	s.cl.mu.Lock()
	s.cl.onFollow = fn
	s.cl.mu.Unlock()
}

// RunOwner returns the replica executing an in-progress run, "" when it is not in
// progress or nobody owns it.
func (s *Store) RunOwner(ctx context.Context, key session.Key, invocationID string) (string, error) {
	if err := s.settle(ctx, key); err != nil {
		return "", err
	}
	var owner string
	err := s.pool.QueryRow(ctx, `SELECT owner FROM runs
		WHERE session_pk = (SELECT pk FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3)
		AND invocation_id = $4 AND status = 'in_progress'`, esc(key.App), esc(key.User), esc(key.ID), esc(invocationID)).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("run owner: %w", err)
	}
	return owner, nil
}

// RequestCancel asks the replica that owns the run to cancel it. It reports false when
// the run is not in progress.
func (s *Store) RequestCancel(ctx context.Context, key session.Key, invocationID string) (bool, error) {
	if err := s.settle(ctx, key); err != nil {
		return false, err
	}
	if s.cl == nil {
		return false, nil
	}
	owner, err := s.RunOwner(ctx, key, invocationID)
	if err != nil || owner == "" {
		return false, err
	}
	b, err := json.Marshal(runMsg{Key: key, InvocationID: invocationID})
	if err != nil {
		return false, err
	}
	if err := s.notify(ctx, "c"+owner+" "+string(b)); err != nil {
		return false, err
	}
	return true, nil
}

// runMsg names a run in cancel requests and follow announcements.
type runMsg struct {
	Key          session.Key `json:"key"`
	InvocationID string      `json:"invocation_id"`
}

// runTag names a run in notifications: short, and free of the ids' characters.
func runTag(key session.Key, invocationID string) string {
	h := sha256.New()
	for _, s := range []string{key.App, key.User, key.ID, invocationID} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Publish sends msg to the run's followers on every replica (this one included), in
// the order of Publish calls that do not overlap.
func (s *Store) Publish(ctx context.Context, key session.Key, invocationID string, msg []byte) error {
	if s.cl == nil {
		return errors.New("publish: the store was opened without a cluster")
	}
	tag := runTag(key, invocationID)
	c := s.cl
	c.mu.Lock()
	c.published[tag] = time.Now()
	_, wanted := c.wanted[tag]
	c.mu.Unlock()
	if !wanted {
		return nil // nobody follows the run
	}
	if len(msg) <= maxPayload && isText(msg) {
		return s.notify(ctx, "r"+tag+" "+string(msg))
	}
	// Too large (or not text) for a payload: stored, and announced by id, in one
	// transaction so that the notification never precedes the row.
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO relay_spill (payload) VALUES ($1) RETURNING id`, msg).Scan(&id); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.cl.channel, "s"+tag+" "+strconv.FormatInt(id, 10))
		return err
	})
}

// isText: payloads must be valid text without NUL bytes.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

func (s *Store) notify(ctx context.Context, payload string) error {
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, s.cl.channel, payload); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// Follow calls deliver with every message published for the run from now on, in order,
// until stop is called; deliver(nil) says messages may have been lost (the listener
// reconnected), so the follower should catch up from the store. deliver runs on the
// listener and must not block.
func (s *Store) Follow(key session.Key, invocationID string, deliver func(msg []byte)) (stop func()) {
	if s.cl == nil {
		return func() {}
	}
	c := s.cl
	tag := runTag(key, invocationID)
	f := &follow{deliver: deliver}
	c.mu.Lock()
	if c.follows[tag] == nil {
		c.follows[tag] = map[*follow]struct{}{}
	}
	c.follows[tag][f] = struct{}{}
	c.mu.Unlock()
	// The run's key goes with the announcement so that its owner can publish it from
	// the start (ids too long for a payload leave the follower to read the store).
	ann, _ := json.Marshal(runMsg{Key: key, InvocationID: invocationID})
	go func() {
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		defer cancel()
		_ = s.notify(ctx, "f"+tag+" "+string(ann))
	}()
	return func() {
		c.mu.Lock()
		delete(c.follows[tag], f)
		if len(c.follows[tag]) == 0 {
			delete(c.follows, tag)
		}
		c.mu.Unlock()
	}
}

// listenLoop holds the LISTEN connection, reconnecting after failures.
func (c *cluster) listenLoop() {
	defer c.wg.Done()
	first := true
	for c.ctx.Err() == nil {
		err := c.listen(&first)
		if c.ctx.Err() != nil {
			return
		}
		_ = err // the connection broke: reconnect after a pause
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (c *cluster) listen(first *bool) error {
	conn, err := pgx.ConnectConfig(c.ctx, c.s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(c.ctx, `LISTEN `+pgx.Identifier{c.channel}.Sanitize()); err != nil {
		return err
	}
	if *first {
		*first = false
		close(c.listening)
	} else {
		c.resync()
	}
	for {
		n, err := conn.WaitForNotification(c.ctx)
		if err != nil {
			return err
		}
		c.dispatch(n.Payload)
	}
}

// resync tells every follower that messages may have been lost while the listener was
// reconnecting: deliver(nil).
//
// Announcements of follows may have been missed too: the runs this replica published
// for lately are treated as followed from now on.
func (c *cluster) resync() {
	c.mu.Lock()
	for tag, at := range c.published {
		if time.Since(at) < time.Hour {
			c.wanted[tag] = time.Now()
		}
	}
	var fs []*follow
	for _, m := range c.follows {
		for f := range m {
			fs = append(fs, f)
		}
	}
	c.mu.Unlock()
	for _, f := range fs {
		f.deliver(nil)
	}
}

func (c *cluster) dispatch(p string) {
	if len(p) < 2 {
		return
	}
	kind, rest := p[0], p[1:]
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return
	}
	head, body := rest[:sp], rest[sp+1:]
	switch kind {
	case 'c':
		if head != c.id {
			return
		}
		var m runMsg
		if json.Unmarshal([]byte(body), &m) != nil {
			return
		}
		c.mu.Lock()
		fn := c.onCancel
		c.mu.Unlock()
		if fn != nil {
			fn(m.Key, m.InvocationID)
		}
	case 'f':
		c.mu.Lock()
		c.wanted[head] = time.Now()
		fn := c.onFollow
		c.mu.Unlock()
		var m runMsg
		if fn != nil && json.Unmarshal([]byte(body), &m) == nil && runTag(m.Key, m.InvocationID) == head {
			fn(m.Key, m.InvocationID)
		}
	case 'r', 's':
		c.mu.Lock()
		fs := make([]*follow, 0, len(c.follows[head]))
		for f := range c.follows[head] {
			fs = append(fs, f)
		}
		c.mu.Unlock()
		if len(fs) == 0 {
			return
		}
		msg := []byte(body)
		if kind == 's' {
			id, err := strconv.ParseInt(body, 10, 64)
			if err != nil {
				return
			}
			ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
			err = c.s.pool.QueryRow(ctx, `SELECT payload FROM relay_spill WHERE id = $1`, id).Scan(&msg)
			cancel()
			if err != nil {
				return
			}
		}
		for _, f := range fs {
			f.deliver(msg)
		}
	}
}
