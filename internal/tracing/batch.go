package tracing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// batcher is a batching span processor: what sdktrace.NewBatchSpanProcessor does,
// configured by the same OTEL_BSP_* variables with the same defaults, without a
// goroutine hand-off for every span. The SDK's processor sends each ended span over a
// channel to its export goroutine, which wakes it (a scheduler round trip a span, five
// a turn); this one appends the span to a slice under a mutex and wakes its goroutine
// only when a batch is full or the schedule delay has passed. Spans beyond the queue's
// bound are dropped (and reported), as the SDK's are.
type batcher struct {
	exp      endedExporter
	delay    time.Duration // OTEL_BSP_SCHEDULE_DELAY
	timeout  time.Duration // OTEL_BSP_EXPORT_TIMEOUT (0: none)
	maxQueue int           // OTEL_BSP_MAX_QUEUE_SIZE
	maxBatch int           // OTEL_BSP_MAX_EXPORT_BATCH_SIZE

	mu      sync.Mutex
	queue   []endedSpan
	dropped int // spans dropped since the last export
	stopped bool

	exporting sync.Mutex  // one export at a time
	spare     []endedSpan // the queue's other buffer (exporting held)

	full     chan struct{} // a batch is waiting (capacity 1)
	stop     chan struct{}
	done     chan struct{} // the loop has returned
	stopOnce sync.Once
}

// The SDK's batch span processor's defaults.
const (
	defaultBSPDelay    = 5000 * time.Millisecond
	defaultBSPTimeout  = 30000 * time.Millisecond
	defaultBSPQueue    = 2048
	defaultBSPBatch    = 512
	bspVariablesPrefix = "OTEL_BSP_"
)

// endedExporter sends ended spans: our OTLP/HTTP exporter does so directly, the SDK's
// exporters through sdkExporter.
type endedExporter interface {
	exportEnded(ctx context.Context, spans []endedSpan) error
	Shutdown(ctx context.Context) error
}

// sdkExporter hands ended spans to one of the SDK's exporters as read-only spans.
type sdkExporter struct{ sdktrace.SpanExporter }

func (e sdkExporter) exportEnded(ctx context.Context, spans []endedSpan) error {
	return e.ExportSpans(ctx, readOnly(spans))
}

// readOnly gives the SDK's exporters what they read: the SDK's own spans as they are,
// the recorder's copied into the SDK's read-only form.
func readOnly(spans []endedSpan) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		if ro, ok := s.(sdktrace.ReadOnlySpan); ok {
			out[i] = ro
			continue
		}
		out[i] = tracetest.SpanStub{
			Name: s.Name(), SpanContext: s.SpanContext(), Parent: s.Parent(), SpanKind: s.SpanKind(),
			StartTime: s.StartTime(), EndTime: s.EndTime(), Attributes: s.Attributes(), Events: s.Events(),
			Links: s.Links(), Status: s.Status(), DroppedAttributes: s.DroppedAttributes(),
			DroppedEvents: s.DroppedEvents(), DroppedLinks: s.DroppedLinks(), Resource: s.Resource(),
			InstrumentationScope: s.InstrumentationScope(),
		}.Snapshot()
	}
	return out
}

func newBatcher(sdkExp sdktrace.SpanExporter, getenv func(string) string) *batcher {
	var exp endedExporter = sdkExporter{sdkExp}
	if e, ok := sdkExp.(endedExporter); ok {
		exp = e
	}
	num := func(k string, def int) int { return envInt(getenv, def, bspVariablesPrefix+k) }
	b := &batcher{
		exp:      exp,
		delay:    time.Duration(num("SCHEDULE_DELAY", int(defaultBSPDelay/time.Millisecond))) * time.Millisecond,
		timeout:  time.Duration(num("EXPORT_TIMEOUT", int(defaultBSPTimeout/time.Millisecond))) * time.Millisecond,
		maxQueue: num("MAX_QUEUE_SIZE", defaultBSPQueue),
		maxBatch: num("MAX_EXPORT_BATCH_SIZE", defaultBSPBatch),
		full:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if b.maxQueue <= 0 {
		b.maxQueue = defaultBSPQueue
	}
	if b.maxBatch <= 0 || b.maxBatch > b.maxQueue {
		b.maxBatch = min(defaultBSPBatch, b.maxQueue)
	}
	if b.delay <= 0 {
		b.delay = defaultBSPDelay
	}
	b.queue = make([]endedSpan, 0, b.maxBatch)
	b.spare = make([]endedSpan, 0, b.maxBatch)
	go b.loop()
	return b
}

var _ sdktrace.SpanProcessor = (*batcher)(nil)

// OnStart implements sdktrace.SpanProcessor.
func (*batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span the SDK ended for export.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		b.add(s, nil)
	}
}

// queueLocked queues s, or drops it when the queue is full (b.mu held).
func (b *batcher) queueLocked(s endedSpan) {
	if len(b.queue) >= b.maxQueue {
		b.dropped++
		return
	}
	b.queue = append(b.queue, s)
}

// add queues an ended span for export, with the leaves recorded on it (one lock for
// all); those beyond the queue's bound are dropped.
func (b *batcher) add(s endedSpan, leaves []leaf) {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.queueLocked(s)
	for i := range leaves {
		b.queueLocked(&leaves[i])
	}
	full := len(b.queue) >= b.maxBatch
	b.mu.Unlock()
	if full {
		select {
		case b.full <- struct{}{}:
		default: // the loop has been told already
		}
	}
}

// loop exports what is queued every schedule delay, or as soon as a batch is full.
func (b *batcher) loop() {
	defer close(b.done)
	t := time.NewTimer(b.delay)
	defer t.Stop()
	for {
		all := true
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.full:
			t.Stop()
			all = false
		}
		if err := b.export(context.Background(), all); err != nil {
			otel.Handle(err)
		}
		t.Reset(b.delay)
	}
}

// export sends what is queued in batches of maxBatch spans: every span when all is
// set, else only full batches (the spans that ended while the loop was waking stay
// queued for the next batch, not sent in a small one of their own).
func (b *batcher) export(ctx context.Context, all bool) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	b.mu.Lock()
	spans, dropped := b.queue, b.dropped
	b.queue, b.dropped = b.spare[:0], 0
	if !all {
		keep := len(spans) % b.maxBatch
		b.queue = append(b.queue, spans[len(spans)-keep:]...)
		spans = spans[:len(spans)-keep]
	}
	b.mu.Unlock()
	var errs []error
	if dropped > 0 {
		errs = append(errs, fmt.Errorf("tracing: %d spans dropped: the export queue (%d spans) was full", dropped, b.maxQueue))
	}
	for rest := spans; len(rest) > 0; {
		batch := rest[:min(len(rest), b.maxBatch)]
		rest = rest[len(batch):]
		if err := b.exportBatch(ctx, batch); err != nil {
			errs = append(errs, err)
		}
	}
	clear(spans[:cap(spans)]) // the spans go to the collector, not stay in memory
	b.spare = spans[:0]
	return errors.Join(errs...)
}

func (b *batcher) exportBatch(ctx context.Context, batch []endedSpan) error {
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	return b.exp.exportEnded(ctx, batch)
}

// ForceFlush exports what is queued now.
func (b *batcher) ForceFlush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.export(ctx, true)
}

// Shutdown stops the loop, exports what is queued and shuts the exporter down; later
// spans are not exported.
func (b *batcher) Shutdown(ctx context.Context) error {
	var err error
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.stopped = true
		b.mu.Unlock()
		close(b.stop)
		select {
		case <-b.done:
		case <-ctx.Done():
			err = ctx.Err()
			return
		}
		err = errors.Join(b.export(ctx, true), b.exp.Shutdown(ctx))
	})
	return err
}
