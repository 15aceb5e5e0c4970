package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentengine/agentengine/wire"
)

// Errors every backend returns (wrapped) so callers can map them to protocol errors.
var (
	// ErrNotFound: no such session, run or item for this app and user.
	ErrNotFound = errors.New("not found")
	// ErrExists: a session with this key already exists.
	ErrExists = errors.New("already exists")
	// ErrRunActive: the session already has a run in progress.
	ErrRunActive = errors.New("session has a run in progress")
	// ErrInvalid: the request to the store is malformed (empty ids, bad JSON, ...).
	ErrInvalid = errors.New("invalid")
)

// Session is a session's summary row. It is maintained by the store on every append so
// that listing sessions never reads event logs.
type Session struct {
	Key
	Title       string `json:"title"`
	FirstPrompt string `json:"first_prompt"`
	LastPrompt  string `json:"last_prompt"`
	LastSeq     int64  `json:"last_seq"`
	// CheckpointSeq is the seq of the latest context_checkpoint event (0 if none);
	// projection starts reading there instead of at seq 1.
	CheckpointSeq int64 `json:"checkpoint_seq"`
	// ActiveInvocationID and ActiveRunStatus describe the latest run of the session.
	ActiveInvocationID string    `json:"active_invocation_id,omitempty"`
	ActiveRunStatus    string    `json:"active_run_status,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// Run is the record of one turn (invocation) of a session.
type Run struct {
	InvocationID string `json:"invocation_id"`
	// ResponseID is the Responses API id of the run; unique when set.
	ResponseID string `json:"response_id,omitempty"`
	Key        Key    `json:"key"`
	Status     string `json:"status"`
	// Deleted hides the run from response lookups (DELETE /v1/responses/{id}); its events stay.
	Deleted bool `json:"deleted,omitempty"`
	// Meta is the starting surface's echo of the request (model, instructions, metadata,
	// previous_response_id, ...), opaque to the store.
	Meta      json.RawMessage `json:"meta,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	// CreateSession makes StartRun create the session when it does not exist, in the
	// run's transaction (a new conversation's first turn is then one write, not two),
	// with CreatedAt as the session's creation time when set. A request flag: never
	// stored, false in every run a store returns.
	CreateSession bool `json:"-"`
	// Unobserved says that nobody but the caller can read the run until it ends (a
	// turn whose client learns of it from its answer, in a session its start creates):
	// the store may then answer StartRun before the start is durable, and make it
	// durable with a later write, by the run's FinishRun at the latest. Reads of the
	// session still see it. A request flag like CreateSession.
	Unobserved bool `json:"-"`
}

// EventQuery selects events of one session. Bounds are exclusive; zero means unbounded.
type EventQuery struct {
	AfterSeq     int64
	BeforeSeq    int64
	InvocationID string
	Types        []string
	// Limit caps the number of events returned (0 = no cap). With Tail the newest Limit
	// events are returned, still in ascending seq order.
	Limit int
	Tail  bool
}

// ListQuery pages through a user's sessions of an app, most recently updated first.
type ListQuery struct {
	Offset int
	Limit  int
}

// State is the three state tiers as seen by one session.
type State = wire.State

// Store is the session store. Implementations are safe for concurrent use. Every method
// that takes a Key treats a session of another app or user as nonexistent (ErrNotFound).
type Store interface {
	// CreateSession creates an empty session; ErrExists if the key is taken.
	CreateSession(ctx context.Context, key Key) (Session, error)
	GetSession(ctx context.Context, key Key) (Session, error)
	ListSessions(ctx context.Context, app, user string, q ListQuery) ([]Session, int, error)
	// RenameSession sets the session's title.
	RenameSession(ctx context.Context, key Key, title string) (Session, error)
	// DeleteSession removes the session with its events, runs and session state.
	DeleteSession(ctx context.Context, key Key) error

	// Append stores events atomically in order, assigns their seqs, applies their state
	// deltas and updates the session row. All or nothing.
	Append(ctx context.Context, key Key, events ...NewEvent) ([]Event, error)
	Events(ctx context.Context, key Key, q EventQuery) ([]Event, error)
	// FindItem returns the event whose ItemID is itemID among the user's sessions of app.
	FindItem(ctx context.Context, app, user, itemID string) (Event, error)

	// StartRun records a new in-progress run and appends its opening events (the user
	// message and run_status=in_progress) in one transaction, creating the session first
	// when run.CreateSession is set and it does not exist. ErrRunActive if the session
	// already has an in-progress run; nothing is stored then (not even the session).
	//
	// A run with a terminal status is recorded whole instead: start, every event and end
	// in one transaction (a turn nobody could follow while it ran). It must create its
	// session: CreateSession set (else ErrInvalid) and the key new (else ErrExists).
	//
	// The run's CreatedAt, when set, is when it started (maybe before this write); the
	// store's clock says when otherwise.
	StartRun(ctx context.Context, run Run, events ...NewEvent) ([]Event, error)
	// FinishRun sets the run's terminal status and appends its closing events in one
	// transaction. Finishing a run that is no longer in progress is ErrInvalid.
	FinishRun(ctx context.Context, key Key, invocationID, status string, events ...NewEvent) ([]Event, error)
	GetRun(ctx context.Context, key Key, invocationID string) (Run, error)
	// GetRunByResponseID finds a run by its response id among the user's runs (of any
	// app: a response id is globally unique); deleted runs are ErrNotFound.
	GetRunByResponseID(ctx context.Context, user, responseID string) (Run, error)
	// DeleteRunResponse marks the run's response deleted (ErrNotFound if unknown).
	DeleteRunResponse(ctx context.Context, user, responseID string) error
	// ActiveRuns lists every in-progress run (all apps and users), for startup recovery.
	ActiveRuns(ctx context.Context) ([]Run, error)

	// State returns the session's three state tiers.
	State(ctx context.Context, key Key) (State, error)
	// NewSessionState returns the state a new session of app and user starts with: the
	// app's and the user's tiers and an empty session tier.
	NewSessionState(ctx context.Context, app, user string) (State, error)

	// Checkpoints returns the session's saved checkpoints, the latest of each thread and
	// namespace, with their pending writes, ordered by thread and namespace. They are
	// saved through NewEvent.Checkpoints and deleted with the session.
	Checkpoints(ctx context.Context, key Key) ([]Checkpoint, error)

	// DocStore keeps the frameworks' versioned documents (ADK artifacts and evals);
	// DeleteSession deletes the session's.
	DocStore

	Close() error
}

// Checkpoint is a saved thread state of a runner's framework, which the store keeps for
// the runner (see wire.Checkpoint).
type Checkpoint = wire.Checkpoint

// CheckpointWrite is one pending write of a task to a checkpoint.
type CheckpointWrite = wire.CheckpointWrite

// CheckpointSave is what one run saved. Stores apply it as follows: the checkpoints of
// DeletedThreads are dropped; each checkpoint replaces its thread and namespace's stored
// one (and that one's writes); each write is kept when its checkpoint is the stored one of
// its thread and namespace (a write with the same task and index replaces the earlier
// one); then, when the save has a checkpoint or a write, checkpoints of the session's
// other threads, which the run did not touch, are dropped, so a session keeps only the
// threads its latest checkpointing run used.
type CheckpointSave struct {
	Checkpoints    []Checkpoint
	Writes         []CheckpointWrite
	DeletedThreads []string
}

// Empty reports whether there is nothing to save.
func (c *CheckpointSave) Empty() bool {
	return c == nil || len(c.Checkpoints) == 0 && len(c.Writes) == 0 && len(c.DeletedThreads) == 0
}

// Threads is the set of threads the save touches.
func (c *CheckpointSave) Threads() map[string]bool {
	out := map[string]bool{}
	for _, cp := range c.Checkpoints {
		out[cp.ThreadID] = true
	}
	for _, w := range c.Writes {
		out[w.ThreadID] = true
	}
	return out
}

// Tier names used by state delta keys: "app:x" and "user:x" write those tiers, "temp:x" is
// never persisted, anything else is session state.
const (
	TierAppPrefix  = "app:"
	TierUserPrefix = "user:"
	TierTempPrefix = "temp:"
)

// SplitStateDelta routes a delta's keys to the tiers. Prefixes are stripped for the app
// and user tiers; temp keys are dropped. A JSON null value means delete.
func SplitStateDelta(delta json.RawMessage) (app, user, sess map[string]any, err error) {
	if len(delta) == 0 {
		return nil, nil, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(delta, &m); err != nil {
		return nil, nil, nil, errors.Join(ErrInvalid, err)
	}
	for k, v := range m {
		switch {
		case len(k) > len(TierAppPrefix) && k[:len(TierAppPrefix)] == TierAppPrefix:
			app = put(app, k[len(TierAppPrefix):], v)
		case len(k) > len(TierUserPrefix) && k[:len(TierUserPrefix)] == TierUserPrefix:
			user = put(user, k[len(TierUserPrefix):], v)
		case len(k) >= len(TierTempPrefix) && k[:len(TierTempPrefix)] == TierTempPrefix:
		default:
			sess = put(sess, k, v)
		}
	}
	return app, user, sess, nil
}

func put(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

// ApplyDelta merges a tier delta into state; nil values delete keys.
func ApplyDelta(state, delta map[string]any) map[string]any {
	if state == nil {
		state = map[string]any{}
	}
	for k, v := range delta {
		if v == nil {
			delete(state, k)
			continue
		}
		state[k] = v
	}
	return state
}
