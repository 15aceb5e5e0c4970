// Stage 1 of a turn, start: Start checks the request, resolves the agent, the session and
// the turn's files, records the turn's opening events through the store's StartRun (the
// store gives them their seqs) and hands the run to a worker goroutine. Its helpers:
// start_attachments.go (files), start_continue.go (continuing an earlier run),
// start_request.go (the runner's RunRequest).

package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/session"
)

// Start validates a turn, records it and starts the runner. The run is detached from
// ctx: it goes on when the caller goes away, until it ends or is cancelled.
func (rt *Runtime) Start(ctx context.Context, req TurnRequest) (_ *Run, err error) {
	ag, err := rt.agent(req.App)
	if err != nil {
		return nil, err
	}
	ctx, span := rt.startTurnSpan(ctx, ag.Name)
	handed := false // to the run, which ends the span
	defer func() {
		if !handed {
			rt.failedTurnSpan(span, ag.Name, req.Surface, err)
		}
	}()
	req.App = ag.Name
	if req.User == "" {
		req.User = rt.defUser
	}
	if err := checkInput(req); err != nil {
		return nil, err
	}
	if len(req.Input.Resumes) > 0 && req.SessionID == "" {
		return nil, clientErr(ErrNoPendingApproval, "input", "an approval response must continue the session that asked for it: send conversation or previous_response_id")
	}
	if !rt.reserveRun(req.User) {
		return nil, clientErr(ErrTooManyRuns, "", "user %q already has %d runs in progress, the most allowed; wait for one to end", req.User, rt.maxRunsPerUser)
	}
	started := false
	defer func() {
		if !started {
			rt.releaseRun(req.User)
		}
	}()
	// Files are resolved before anything is recorded: a bad reference stores nothing.
	files, err := rt.resolveFiles(ctx, req.User, req.Input.Content)
	if err != nil {
		return nil, err
	}
	key, sess, err := rt.openSession(ctx, req)
	if err != nil {
		return nil, err
	}
	// The previous run's end, held while the store failed, is recorded first: the store
	// allows one run in progress per session.
	if err := rt.flushHeld(ctx, key); err != nil {
		rt.log.Error("held run end still not recorded", "session", key.ID, "error", err)
		return nil, clientErr(ErrUnavailable, "", "the session store cannot record writes at the moment; try again later")
	}
	resumes, err := rt.pendingApprovals(ctx, key, req.Input.Resumes)
	if err != nil {
		return nil, err
	}
	if req.InvocationID == "" {
		req.InvocationID = newID("run_")
	} else if err := ValidateID(req.InvocationID); err != nil {
		return nil, clientErr(ErrInvalidInput, "invocation_id", "invalid invocation id: %v", err)
	}
	caps := rt.capabilities(ctx, ag)
	if len(resumes) > 0 && caps != nil && !caps.Resume {
		return nil, clientErr(ErrInvalidInput, "input", "agent %q cannot resume an interrupted run: its runner does not support resume", ag.Name)
	}
	if req.ContinueFrom != nil {
		if err := rt.checkContinue(ctx, key, ag.Name, caps, req.ContinueFrom); err != nil {
			return nil, err
		}
	}
	rt.awaitResults(ctx, files)
	opening := openingEvents(req, ag.Name, resumes, files)
	now := time.Now().UTC()
	create := sess == nil
	if create {
		// Created by StartRun, in the run's transaction, at the run's time.
		sess = &session.Session{Key: key, CreatedAt: now, UpdatedAt: now}
	}
	run := session.Run{
		InvocationID: req.InvocationID, ResponseID: req.ResponseID, Key: key,
		Status: session.StatusInProgress, Meta: req.Meta, CreatedAt: now, UpdatedAt: now,
		CreateSession: create,
		// Nobody but its client can read a turn that announces nothing, in a session the
		// runtime names for it, until it ends: its start need not be durable before the
		// run goes on. (A client-named session may be created by another request meanwhile.)
		Unobserved: create && req.private() && !hasStateDelta(opening),
	}
	sw := rt.storeWrite(ctx, "start_run")
	stored, state, err := rt.startRunInBudget(ctx, run, opening)
	sw.end(err)
	if errors.Is(err, session.ErrRunActive) {
		return nil, clientErr(ErrRunActive, "", "session %q already has a run in progress; wait for it to end or cancel it", key.ID)
	}
	if errors.Is(err, session.ErrExists) {
		return nil, clientErr(ErrRunActive, "invocation_id", "invocation id %q is already used in session %q; every run needs a new one", req.InvocationID, key.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("record turn: %w", err)
	}
	rr, err := rt.buildRunRequest(ctx, sess, state, req, resumes, stored[0].Seq, files, caps)
	if err != nil {
		rt.abortStart(key, req.InvocationID, ag.Name, err)
		return nil, err
	}
	base := rt.baseCtx
	if rt.traced {
		base = trace.ContextWithSpan(base, span) // the run's spans are the turn's children
	}
	runCtx, cancel := context.WithCancelCause(base)
	handed = true
	r := &Run{rt: rt, Key: key, InvocationID: req.InvocationID, ResponseID: req.ResponseID, Agent: ag.Name,
		CreatedAt: now, Meta: req.Meta, status: session.StatusInProgress,
		j: newJournal(), done: make(chan struct{}), cancel: cancel,
		private: req.private(), surface: req.Surface}
	for i := range stored {
		r.j.Add(Event{Kind: KindStored, Stored: &stored[i]})
	}
	rt.mu.Lock()
	rt.runs[runKey{r.Key, r.InvocationID}] = r
	rt.mu.Unlock()
	rt.wg.Add(1)
	started = true
	rt.metrics.RunStarted(ag.Name)
	// Only the user is captured of the request, and the run request is an argument: both
	// may carry megabytes of input, which are let go once sent, not held to the run's end.
	user, await := req.User, !req.Unannounced
	// A run outlives the request that started it; runCtx is its own.
	rt.workers.Go(func() {
		// The closure lets go of the run request: execute holds it until it is sent.
		sent := rr
		rr = nil
		ctx, stop := runCtx, context.CancelFunc(func() {})
		if ag.RunTimeout > 0 {
			ctx, stop = context.WithTimeoutCause(runCtx, ag.RunTimeout, errRunTimeout)
		}
		// execute may return while the run waits for the runner; done ends it.
		rt.execute(ctx, ag, r, sent, await, func() {
			rt.maybeCompact(rt.baseCtx, ag, key, r.hist)
			stop()
			rt.releaseRun(user)
			cancel(nil)
			rt.wg.Done()
		})
	})
	return r, nil
}

// stateStarter is a store that reads the session's state in the round trip that starts
// a run (the Postgres store): a turn needs both.
type stateStarter interface {
	StartRunWithState(ctx context.Context, run session.Run, events ...session.NewEvent) ([]session.Event, session.State, error)
}

// startRun records the run's start; the state is nil when the store does not read it
// with the start (the request's building reads it then).
func (rt *Runtime) startRun(ctx context.Context, run session.Run, opening []session.NewEvent) ([]session.Event, *session.State, error) {
	if ss, ok := rt.store.(stateStarter); ok {
		evs, st, err := ss.StartRunWithState(ctx, run, opening...)
		return evs, &st, err
	}
	evs, err := rt.store.StartRun(ctx, run, opening...)
	if err != nil || !run.Unobserved {
		return evs, nil, err
	}
	// The store may not have committed an unobserved start yet, and reading the session
	// would commit it. A session created with no state delta has its app's and user's
	// state and an empty tier of its own.
	st, err := rt.store.NewSessionState(ctx, run.Key.App, run.Key.User)
	return evs, &st, err
}

// startRunInBudget is startRun for opening events that may write state (a turn's
// stateDelta): they are checked against the state budget first.
func (rt *Runtime) startRunInBudget(ctx context.Context, run session.Run, opening []session.NewEvent) ([]session.Event, *session.State, error) {
	if !hasStateDelta(opening) {
		return rt.startRun(ctx, run, opening)
	}
	defer rt.stateLocks.lock(run.Key.App)()
	if err := rt.checkStateBudget(ctx, run.Key, run.CreateSession, opening); err != nil {
		return nil, nil, err
	}
	return rt.startRun(ctx, run, opening)
}

// abortStart closes a run that was recorded but could not be handed to its runner.
func (rt *Runtime) abortStart(key session.Key, invocationID, author string, cause error) {
	rt.log.Error("turn could not start", "invocation", invocationID, "error", cause)
	data := session.RunStatusData{Status: session.StatusFailed, Error: &session.RunError{Code: "server_error", Message: ClientMessage(cause)}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rt.store.FinishRun(ctx, key, invocationID, session.StatusFailed, session.NewEvent{
		InvocationID: invocationID, Type: session.TypeRunStatus, Author: author, Data: session.MustJSON(data),
	}); err != nil {
		rt.log.Error("could not record failed start", "invocation", invocationID, "error", err)
	}
}

// openSession returns the session a turn runs in: its row, or nil when the turn's
// StartRun is to create it (a new conversation, or a client-named one that is missing
// and may be created).
func (rt *Runtime) openSession(ctx context.Context, req TurnRequest) (session.Key, *session.Session, error) {
	key := session.Key{App: req.App, User: req.User, ID: req.SessionID}
	if key.ID == "" {
		key.ID = newID("sess_")
		return key, nil, nil
	}
	if err := ValidateID(key.ID); err != nil {
		return key, nil, clientErr(ErrInvalidInput, "conversation", "invalid session id: %v", err)
	}
	s, err := rt.store.GetSession(ctx, key)
	if err == nil {
		return key, &s, nil
	}
	if !errors.Is(err, session.ErrNotFound) {
		return key, nil, fmt.Errorf("load session: %w", err)
	}
	if !req.CreateIfMissing {
		return key, nil, clientErr(ErrNotFound, "conversation", "session %q not found", key.ID)
	}
	if len(req.Input.Resumes) > 0 {
		// Nothing can be pending in a session that does not exist; create nothing.
		return key, nil, clientErr(ErrNoPendingApproval, "input", "session %q has no pending approval request to resume", key.ID)
	}
	// StartRun creates it; one a concurrent request created first is the same session.
	return key, nil, nil
}

func openingEvents(req TurnRequest, author string, resumes []pendingApproval, files []turnFile) []session.NewEvent {
	var evs []session.NewEvent
	for _, p := range resumes {
		evs = append(evs, session.NewEvent{
			InvocationID: req.InvocationID, Type: session.TypeApprovalResponse, Author: "user",
			Data: session.MustJSON(session.ApprovalResponseData{ApprovalRequestID: p.itemID, Approve: p.resume.Approve, Reason: p.resume.Reason, Output: p.resume.Output}),
		})
	}
	if len(req.Input.Content) > 0 || len(req.Input.Items) > 0 {
		d := session.NewUserMessageData(req.Input.Text(), req.Input.Content)
		d.Items, d.Instructions, d.Metadata = req.Input.Items, req.Instructions, req.Metadata
		evs = append(evs, session.NewEvent{
			InvocationID: req.InvocationID, ItemID: req.Input.MessageID, Type: session.TypeUserMessage, Author: "user",
			Data: session.MustJSON(d),
		})
	}
	evs = append(evs, attachmentRefEvents(req.InvocationID, files)...)
	if len(req.StateDelta) > 0 {
		// Recorded with the turn's other opening events: a rejected turn changes no state.
		evs = append(evs, session.NewEvent{
			InvocationID: req.InvocationID, Type: session.TypeStateDelta, Author: "user",
			Data: req.StateDelta, StateDelta: req.StateDelta,
		})
	}
	evs = append(evs, session.NewEvent{
		InvocationID: req.InvocationID, Type: session.TypeRunStatus, Author: author,
		Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress}),
	})
	return evs
}
