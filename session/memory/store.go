// Package memory is the process-local session backend: for tests and temporary runs,
// lost on exit. Every method takes one lock; data is copied in and out so callers never
// share memory with the store.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Store is an in-memory session.Store.
type Store struct {
	clock core.Clock

	mu     sync.RWMutex
	closed bool
	// order numbers sessions and runs in creation order: it breaks UpdatedAt ties in
	// listings and orders ActiveRuns.
	order     int64
	sessions  map[session.Key]*sessionRec
	apps      map[string]map[string]any
	users     map[appUser]map[string]any
	responses map[string]*runRec  // by response id, across users
	items     map[string]itemRefs // by item id
	docs      docs                // made on the first PutDoc
	// recs and kept hold what sessions keep (see arena.go).
	recs recSlab
	kept arena
}

type appUser struct{ app, user string }

// itemRef is where an item was stored: its session, its seq. The key of items is the
// item id alone (one string per entry for collections to follow); the session says whose
// it is.
type itemRef struct {
	rec *sessionRec
	seq int64
}

type sessionRec struct {
	row     session.Session
	renamed bool
	order   int64
	state   map[string]any // nil until a delta sets a key
	events  eventLog
	runs    runIndex
	active  string // invocation id of the in-progress run, if any
	// checkpoints are the runner checkpoints kept for the session.
	checkpoints core.Checkpoints
}

type runRec struct {
	run   session.Run
	order int64
}

var _ session.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		sessions:  map[session.Key]*sessionRec{},
		apps:      map[string]map[string]any{},
		users:     map[appUser]map[string]any{},
		responses: map[string]*runRec{},
		items:     map[string]itemRefs{},
	}
}

// A closed store is unavailable to its callers, as a database that went away is.
var errClosed = fmt.Errorf("memory session store is closed: %w", session.ErrUnavailable)

// Close drops the data; later calls fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.sessions, s.apps, s.users, s.responses, s.items = nil, nil, nil, nil, nil
	s.recs, s.kept = recSlab{}, arena{}
	return nil
}

// usable checks the context and the store state before a call; the caller holds mu.
func (s *Store) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return errClosed
	}
	return nil
}

func (s *Store) next() int64 {
	s.order++
	return s.order
}

// lookup finds a session; the caller holds mu.
func (s *Store) lookup(key session.Key) (*sessionRec, error) {
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	rec, ok := s.sessions[key]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
	}
	return rec, nil
}

// CreateSession creates an empty session; ErrExists if the key is taken.
func (s *Store) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return session.Session{}, err
	}
	if err := core.ValidKey(key); err != nil {
		return session.Session{}, err
	}
	if _, ok := s.sessions[key]; ok {
		return session.Session{}, fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
	}
	rec := s.newSessionRec(key, time.Time{})
	s.sessions[rec.row.Key] = rec
	return rec.row, nil
}

// newSessionRec makes an empty session created at created (now when zero); the caller
// holds the lock and enters it in the map by its row's key, or gives it back to recs.
func (s *Store) newSessionRec(key session.Key, created time.Time) *sessionRec {
	if created.IsZero() {
		created = s.clock.Now()
	}
	key = session.Key{App: s.kept.str(key.App), User: s.kept.str(key.User), ID: s.kept.str(key.ID)}
	rec := s.recs.get()
	*rec = sessionRec{
		row:   session.Session{Key: key, CreatedAt: created, UpdatedAt: created},
		order: s.next(),
	}
	return rec
}

// GetSession returns the session's summary row.
func (s *Store) GetSession(ctx context.Context, key session.Key) (session.Session, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.Session{}, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return session.Session{}, err
	}
	return rec.row, nil
}

// ListSessions pages through the user's sessions of app, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, app, user string, q session.ListQuery) ([]session.Session, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, 0, err
	}
	if err := core.CheckListQuery(app, user, q); err != nil {
		return nil, 0, err
	}
	var recs []*sessionRec
	for k, rec := range s.sessions {
		if k.App == app && k.User == user {
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(a, b *sessionRec) int {
		if c := b.row.UpdatedAt.Compare(a.row.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.order, a.order)
	})
	total := len(recs)
	recs = recs[min(q.Offset, total):]
	if q.Limit > 0 && len(recs) > q.Limit {
		recs = recs[:q.Limit]
	}
	out := make([]session.Session, len(recs))
	for i, rec := range recs {
		out[i] = rec.row
	}
	return out, total, nil
}

// RenameSession sets the title; a blank title restores the automatic one. It does not
// count as activity, so UpdatedAt (and list order) stays.
func (s *Store) RenameSession(ctx context.Context, key session.Key, title string) (session.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return session.Session{}, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return session.Session{}, err
	}
	row := rec.row
	renamed, err := core.Rename(&row, title)
	if err != nil {
		return session.Session{}, err
	}
	rec.row, rec.renamed = row, renamed
	return rec.row, nil
}

// DeleteSession removes the session with its events, runs and session state.
func (s *Store) DeleteSession(ctx context.Context, key session.Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return err
	}
	for i := range rec.runs.len() {
		if r := rec.runs.at(i); r.run.ResponseID != "" {
			delete(s.responses, r.run.ResponseID)
		}
	}
	for i := range rec.events.len() {
		if e := rec.events.get(i, key.ID); e.ItemID != "" {
			s.unindexItem(rec, e.ItemID)
		}
	}
	delete(s.sessions, key)
	delete(s.docs, docScope{key.App, key.User, key.ID})
	s.recs.put(rec)
	return nil
}
