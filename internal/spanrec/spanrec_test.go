package spanrec_test

import (
	"context"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// A span that cannot keep a source (the SDK's) gets the source's attributes set, after
// those it had; a span that records nothing is left alone.
func TestSetOnOtherSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, sp := tp.Tracer("test").Start(context.Background(), "op")
	sp.SetAttributes(attribute.String("first", "1"))
	spanrec.SetAttributes(sp, spanrec.Fixed{attribute.String("a", "x"), attribute.Int("n", 2)})
	sp.End()
	want := []attribute.KeyValue{attribute.String("first", "1"), attribute.String("a", "x"), attribute.Int("n", 2)}
	if got := rec.Ended()[0].Attributes(); !reflect.DeepEqual(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}

	_, quiet := noop.NewTracerProvider().Tracer("").Start(context.Background(), "op")
	spanrec.SetAttributes(quiet, panicking{}) // not read: nothing is recorded
}

type panicking struct{}

func (panicking) AppendAttributes([]attribute.KeyValue) []attribute.KeyValue {
	panic("a span that records nothing read its attributes")
}
