package tracing

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// countingExporter records the size of every batch it is given.
type countingExporter struct {
	mu      sync.Mutex
	batches []int
	names   []string
	calls   chan struct{}
	down    bool
}

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	e.batches = append(e.batches, len(spans))
	for _, s := range spans {
		e.names = append(e.names, s.Name())
	}
	e.mu.Unlock()
	if e.calls != nil {
		e.calls <- struct{}{}
	}
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.down = true
	e.mu.Unlock()
	return nil
}

func (e *countingExporter) state() ([]int, []string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.batches...), append([]string(nil), e.names...), e.down
}

func endSpans(tp *sdktrace.TracerProvider, names ...string) {
	for _, n := range names {
		_, s := tp.Tracer("t").Start(context.Background(), n)
		s.End()
	}
}

func TestBatcher(t *testing.T) {
	ctx := context.Background()
	env := mapEnv(map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "3", "OTEL_BSP_MAX_QUEUE_SIZE": "5",
		"OTEL_BSP_SCHEDULE_DELAY": "3600000"})

	t.Run("a full batch is exported at once", func(t *testing.T) {
		exp := &countingExporter{calls: make(chan struct{}, 10)}
		b := newBatcher(exp, env)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
		endSpans(tp, "a", "b")
		select {
		case <-exp.calls:
			t.Fatal("exported before the batch was full or the delay passed")
		case <-time.After(20 * time.Millisecond):
		}
		endSpans(tp, "c")
		select {
		case <-exp.calls:
		case <-time.After(10 * time.Second):
			t.Fatal("a full batch was not exported")
		}
		endSpans(tp, "d")
		if err := tp.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		<-exp.calls
		endSpans(tp, "e")
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		endSpans(tp, "after shutdown")
		batches, names, down := exp.state()
		if want := []int{3, 1, 1}; !slices.Equal(batches, want) || !down {
			t.Errorf("batches %v (want %v), exporter shut down %v", batches, want, down)
		}
		if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(names, want) {
			t.Errorf("spans %v, want %v", names, want)
		}
	})

	t.Run("the schedule delay exports a partial batch", func(t *testing.T) {
		exp := &countingExporter{calls: make(chan struct{}, 10)}
		b := newBatcher(exp, mapEnv(map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "10"}))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
		defer func() { _ = tp.Shutdown(ctx) }()
		endSpans(tp, "a")
		select {
		case <-exp.calls:
		case <-time.After(10 * time.Second):
			t.Fatal("not exported after the schedule delay")
		}
	})

	t.Run("beyond the queue spans are dropped and reported; unsampled ones are not queued", func(t *testing.T) {
		var reported []error
		var mu sync.Mutex
		prev := otel.GetErrorHandler()
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }))
		t.Cleanup(func() { otel.SetErrorHandler(prev) })

		exp := &countingExporter{}
		b := newBatcher(exp, mapEnv(map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "100", "OTEL_BSP_MAX_QUEUE_SIZE": "4",
			"OTEL_BSP_SCHEDULE_DELAY": "3600000"}))
		if b.maxBatch != 4 {
			t.Errorf("a batch larger than the queue: %d", b.maxBatch)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
		unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(b))
		endSpans(unsampled, "never")
		// The full queue wakes the loop, which may export before the rest arrive: stop
		// it first so that the queue's bound is what is tested.
		close(b.stop)
		<-b.done
		endSpans(tp, "1", "2", "3", "4", "5", "6")
		err := b.export(ctx, true)
		if err == nil || !strings.Contains(err.Error(), "2 spans dropped") {
			t.Errorf("export: %v, want 2 spans dropped", err)
		}
		_, names, _ := exp.state()
		if want := []string{"1", "2", "3", "4"}; !slices.Equal(names, want) {
			t.Errorf("spans %v, want %v", names, want)
		}
	})

	t.Run("a wake-up for a full batch sends full batches only", func(t *testing.T) {
		exp := &countingExporter{}
		b := newBatcher(exp, env)
		close(b.stop) // the test drives the exports
		<-b.done
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
		endSpans(tp, "a", "b", "c", "d")
		if err := b.export(ctx, false); err != nil {
			t.Fatal(err)
		}
		if batches, _, _ := exp.state(); !slices.Equal(batches, []int{3}) {
			t.Errorf("batches %v, want [3] (d stays queued)", batches)
		}
		if err := b.export(ctx, true); err != nil {
			t.Fatal(err)
		}
		if batches, names, _ := exp.state(); !slices.Equal(batches, []int{3, 1}) || !slices.Equal(names, []string{"a", "b", "c", "d"}) {
			t.Errorf("batches %v of %v, want [3 1] of a b c d", batches, names)
		}
	})

	t.Run("defaults", func(t *testing.T) {
		b := newBatcher(tracetest.NewInMemoryExporter(), mapEnv(map[string]string{"OTEL_BSP_EXPORT_TIMEOUT": "x"}))
		defer func() { _ = b.Shutdown(ctx) }()
		if b.delay != 5*time.Second || b.timeout != 30*time.Second || b.maxQueue != 2048 || b.maxBatch != 512 {
			t.Errorf("delay %v timeout %v queue %d batch %d", b.delay, b.timeout, b.maxQueue, b.maxBatch)
		}
	})
}
