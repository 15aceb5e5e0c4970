// Stage 2 of a turn, execute: the run's goroutine streams the runner's events (consume),
// turns each into journal entries and durable events (handle, in execute_handle.go),
// then decides the run's status and calls finish. Its helpers: execute_store.go (writes and deferred items),
// execute_native.go (native events), execute_snapshot.go (stream snapshots),
// execute_checkpoints.go (LangGraph checkpoints).

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/internal/textbuf"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// turnState aggregates a runner's stream into durable events. mu serialises the run's
// goroutine with flushOnWatch, which stores the deferred items when a follower joins.
type turnState struct {
	rt *Runtime
	r  *Run
	ag Agent
	// span is the turn's invoke_agent span (a no-op one when untraced); log is the
	// runtime's logger with the span's ids, made when the turn first logs (see logger).
	span    trace.Span
	log     hclog.Logger
	logOnce sync.Once
	// runnerSpan is the runner call's span. stream is the runner's stream of events;
	// await it, when it can be awaited, with resume, which continues consume on a worker
	// (the run's contexts travel in resume's closure, not in this struct). done is called
	// once the run is over.
	runnerSpan trace.Span
	stream     grpc.ServerStreamingClient[runnerv1.RunEvent]
	await      awaiter
	resume     func()
	done       func()
	// toolStarts are the times tool calls were reported, for their spans (traced only);
	// toolArgs their arguments, when the spans record content.
	toolStarts map[string]time.Time
	toolArgs   map[string]string
	spanModel  string // the model of the latest usage report, for the span's end

	mu    sync.Mutex
	ended bool // finish has run: nothing is deferred any more

	// meta is the data of the runner's latest event.meta native event: stored with the
	// transcript items that follow it (see NativeEventMeta).
	meta json.RawMessage

	msgID       string
	msgText     textbuf.Text
	msgSince    time.Time // the message's first delta or last stream snapshot
	snapshots   int       // stream snapshots of the message stored so far
	snapText    string    // while a snapshot is written: its text, for the journal
	rsID        string
	rsText      textbuf.Text
	calls       map[string]*openCall
	callOrder   []string
	usage       session.Usage
	haveUsage   bool
	interrupted bool
	firstToken  bool // a text or reasoning delta was seen (time to first token)
	// toolNames are the names of the run's tool calls by call id, for the metrics of
	// results that leave the name out (kept only with metrics on).
	toolNames   map[string]string
	failure     *session.RunError
	storeErr    error
	checkpoints checkpointBuffer
	// deferred are coarse events held for a later write (at the latest the run's final
	// transaction) while nobody follows the run: one store write per turn instead of
	// one per item. held are their places in the journal, filled when they are stored.
	deferred []session.NewEvent
	held     []*session.Event
}

type openCall struct {
	itemID, name string
	args         []byte
}

// awaiter is a runner stream whose next event can be waited for without a goroutine (the
// run lane's): Await reports whether Recv returns at once; when it does not, ready runs
// once, on the stream's own goroutine (which it must not hold up), when Recv would.
type awaiter interface {
	Await(ready func()) bool
}

// execute runs the turn on the runner and calls done when it has finished. With await
// set, a run whose stream can be awaited holds no goroutine while it waits for the
// runner's next event: thousands of open streams would otherwise each keep a parked
// goroutine, with the stack it grew, for nothing. A short run that its client waits for
// whole (unannounced) reads its stream on one goroutine: handing each burst of events
// to a worker costs it CPU (about 8% of an echo turn's host CPU) and saves nothing.
func (rt *Runtime) execute(ctx context.Context, ag Agent, r *Run, rr *runnerv1.RunRequest, await bool, done func()) {
	ts := &turnState{rt: rt, r: r, ag: ag, calls: map[string]*openCall{}, span: trace.SpanFromContext(ctx), done: done}
	r.j.SetOnWatch(func() { ts.flushOnWatch(ctx) })
	rctx, runnerSpan := rt.runnerSpan(ctx, ag.Name, rr)
	ts.runnerSpan = runnerSpan
	stream, err := ag.Runner.Run(rctx, rr)
	if err != nil {
		ts.end(ctx, fmt.Errorf("start run on runner: %w", err))
		return
	}
	ts.stream = stream
	if aw, ok := stream.(awaiter); ok && await {
		ts.await = aw
		ts.resume = func() { rt.workers.Go(func() { ts.consume(ctx, rctx) }) }
	}
	ts.consume(ctx, rctx)
}

// consume handles the runner's events until its stream ends, or, with a stream that can
// be awaited, until it has none ready: it runs again on a worker when the next one is.
// ctx is the run's context, rctx the runner call's.
func (ts *turnState) consume(ctx, rctx context.Context) {
	for {
		if ts.await != nil && !ts.await.Await(ts.resume) {
			return
		}
		ev, err := ts.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) || rctx.Err() != nil {
				err = nil // ended, or cancelled or shutting down: the cause decides the status
			}
			ts.end(ctx, err)
			return
		}
		ts.mu.Lock()
		for _, e := range ev.Events() {
			if e.GetBatch() != nil {
				continue // batches do not nest
			}
			if ts.storeErr == nil && ts.failure == nil { // else drain: the outcome is decided
				ts.handle(ctx, e)
			}
		}
		ts.mu.Unlock()
	}
}

// end decides the run's status once the runner's stream has ended (streamErr: why it
// broke), finishes the run, and calls done.
func (ts *turnState) end(ctx context.Context, streamErr error) {
	if streamErr != nil {
		ts.runnerSpan.SetStatus(otelcodes.Error, streamErr.Error())
	}
	ts.runnerSpan.End()
	ts.stream, ts.await, ts.resume = nil, nil, nil
	ag, r := ts.ag, ts.r
	ts.mu.Lock()
	ts.flushAll(ctx)

	status, runErr := session.StatusCompleted, ts.failure
	timedOut := errors.Is(context.Cause(ctx), errRunTimeout)
	if dl, ok := ctx.Deadline(); ok && !timedOut && ag.RunTimeout > 0 && !time.Now().Before(dl) {
		// gRPC ends the stream at the deadline by its own timer, which can fire before
		// the context's: the run still timed out.
		timedOut = true
	}
	switch {
	case ts.storeErr != nil:
		status = session.StatusFailed
		runErr = &session.RunError{Code: "server_error", Message: "the session store failed while recording the run"}
		ts.logger().Error("store failed during run", "invocation", r.InvocationID, "error", ts.storeErr)
	case errors.Is(context.Cause(ctx), errCancelled):
		status = session.StatusCancelled
	case errors.Is(context.Cause(ctx), errShutdown):
		status = session.StatusInterrupted
		runErr = &session.RunError{Code: "host_shutdown", Message: "the host shut down during the run"}
	case timedOut:
		status = session.StatusFailed
		runErr = &session.RunError{Code: "run_timeout", Message: fmt.Sprintf(
			"the run took longer than the agent's run_timeout (%s, set in agentengine.yaml) and was stopped", ag.RunTimeout)}
	case streamErr != nil:
		status = session.StatusFailed
		runErr = &session.RunError{Code: "runner_error", Message: runnerFailureMessage(streamErr)}
		ts.logger().Error("runner stream failed", "agent", ag.Name, "invocation", r.InvocationID, "error", streamErr)
	case ts.failure != nil:
		status = session.StatusFailed
	case ts.interrupted:
		status = session.StatusInterrupted
	}
	data := session.RunStatusData{Status: status, Error: runErr}
	if ts.haveUsage {
		u := ts.usage
		data.Usage = &u
	}
	ts.finish(ctx, status, data)
	ts.mu.Unlock()
	ts.done()
}

// runnerFailureMessage is the client-safe text for a broken runner stream.
func runnerFailureMessage(err error) string {
	// Runner clients mark a process that stopped responding (runnerproc's
	// ErrUnresponsive) by this method, so the host names no runner package.
	var u interface{ Unresponsive() bool }
	if errors.As(err, &u) && u.Unresponsive() {
		return "the agent's runner stopped responding (no events and no health answer in time); the run was failed and the runner is being replaced"
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		return "the agent's runner process exited or disconnected during the run"
	}
	return "the agent's runner failed during the run"
}

// flushOnWatch stores the deferred items now that someone follows the run, instead of
// with the runner's next event, which may be long in coming.
func (ts *turnState) flushOnWatch(ctx context.Context) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.ended && len(ts.deferred) > 0 && ts.storeErr == nil {
		ts.write(ctx)
	}
}

// logger is the turn's logger: every line logged during the turn joins its trace. Made
// on first use: most turns log nothing, and the ids' text costs a traced turn.
func (ts *turnState) logger() hclog.Logger {
	ts.logOnce.Do(func() {
		ts.log = ts.rt.log
		if sc := ts.span.SpanContext(); sc.IsValid() {
			ts.log = ts.rt.log.With("trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
		}
	})
	return ts.log
}
