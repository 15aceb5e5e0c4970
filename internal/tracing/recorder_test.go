package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// keptSpans returns every span r keeps, trace by trace, in the order they ended.
func keptSpans(r *Recent) []endedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []endedSpan
	for _, id := range r.order {
		out = append(out, r.traces[id].ended...)
	}
	return out
}

// recorderSpans makes spanScenario's spans with the recorder.
func recorderSpans(t *testing.T) []endedSpan {
	t.Helper()
	kept := NewRecent(100, 1<<30)
	spanScenario(t, func(res *resource.Resource) trace.TracerProvider {
		return &recorder{res: res, limits: scenarioLimits, keep: kept}
	})
	return keptSpans(kept)
}

// normalSpan is what a span records, with its IDs replaced by the names of the spans
// they point at (random IDs differ from one provider to another) and the times the
// scenario did not set left out.
type normalSpan struct {
	Name, Parent                  string
	Kind                          trace.SpanKind
	Flags                         trace.TraceFlags
	TraceState, Scope, Resource   string
	Attrs                         []attribute.KeyValue
	Events                        []string
	Links                         []string
	Status                        sdktrace.Status
	Dropped                       [3]int // attributes, events, links
	ExplicitStart, ExplicitEnd    time.Time
	SameTraceAsParent, RemoteRoot bool
}

func normalize(spans []endedSpan) []normalSpan {
	byID := map[trace.SpanID]endedSpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	explicit := func(ts time.Time) time.Time {
		if ts.Year() < 2000 {
			return ts
		}
		return time.Time{}
	}
	var out []normalSpan
	for _, s := range spans {
		n := normalSpan{
			Name: s.Name(), Kind: s.SpanKind(), Flags: s.SpanContext().TraceFlags(), TraceState: s.SpanContext().TraceState().String(),
			Scope: fmt.Sprintf("%+v", s.InstrumentationScope()), Resource: s.Resource().String(), Attrs: s.Attributes(),
			Status: s.Status(), Dropped: [3]int{s.DroppedAttributes(), s.DroppedEvents(), s.DroppedLinks()},
			ExplicitStart: explicit(s.StartTime()), ExplicitEnd: explicit(s.EndTime()),
		}
		if p := s.Parent(); p.IsValid() {
			n.SameTraceAsParent = p.TraceID() == s.SpanContext().TraceID()
			if parent, ok := byID[p.SpanID()]; ok {
				n.Parent = parent.Name()
			} else {
				n.Parent, n.RemoteRoot = p.SpanID().String(), p.IsRemote()
			}
		}
		for _, ev := range s.Events() {
			n.Events = append(n.Events, fmt.Sprintf("%s %v %d %v", ev.Name, ev.Attributes, ev.DroppedAttributeCount, explicit(ev.Time)))
		}
		for _, l := range s.Links() {
			n.Links = append(n.Links, fmt.Sprintf("%s/%s %v %d", l.SpanContext.TraceID(), l.SpanContext.SpanID(), l.Attributes, l.DroppedAttributeCount))
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b normalSpan) int {
		return cmpOr(strings.Compare(a.Name, b.Name), int(a.Kind)-int(b.Kind))
	})
	return out
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func sdkEnded(spans []sdktrace.ReadOnlySpan) []endedSpan {
	out := make([]endedSpan, len(spans))
	for i, s := range spans {
		out[i] = s
	}
	return out
}

// The recorder records what the SDK's provider records for the same calls: names,
// kinds, parents, flags and trace state, attributes (deduplicated, limited, in the
// same order), events and links (limited, the oldest dropped), status rules, dropped
// counts, explicit times, scopes and resources.
func TestRecorderRecordsWhatTheSDKRecords(t *testing.T) {
	want, got := normalize(sdkEnded(testSpans(t))), normalize(recorderSpans(t))
	if len(got) != len(want) {
		t.Fatalf("%d spans, the SDK %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("span %q:\n got  %+v\n want %+v", want[i].Name, got[i], want[i])
		}
	}
}

// The recorder's spans go out over OTLP as otlptracehttp sends them: our encoder reads
// them directly, and the SDK's exporters get them copied into the SDK's form.
func TestRecorderSpansExportAsOTLPTransform(t *testing.T) {
	spans := recorderSpans(t)
	theirs, ours, official, exp := exporterPair(t)
	ctx := context.Background()
	want := export(t, theirs, official, readOnly(spans))
	if err := exp.exportEnded(ctx, spans); err != nil {
		t.Fatal(err)
	}
	got := export(t, ours, exp, nil) // an empty batch sends nothing: this reads the request above
	if !proto.Equal(want, got) {
		t.Fatalf("the request differs from otlptracehttp's:\ntheirs: %s\nours: %s", prototext.Format(want), prototext.Format(got))
	}
}

// OTEL_TRACES_SAMPLER and its argument choose what is recorded and sampled, as they do
// for the SDK's provider: for a new trace, and under a sampled and an unsampled remote
// parent.
func TestRecorderSamplersFromTheEnvironment(t *testing.T) {
	parent := func(sampled bool) context.Context {
		cfg := trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true}
		if sampled {
			cfg.TraceFlags = trace.FlagsSampled
		}
		return trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(cfg))
	}
	contexts := map[string]context.Context{"root": context.Background(), "sampled parent": parent(true), "unsampled parent": parent(false)}
	for _, tc := range []struct{ sampler, arg string }{
		{"", ""}, {"parentbased_always_on", ""}, {"always_on", ""}, {"always_off", ""}, {"traceidratio", "0"},
		{"traceidratio", "1"}, {"parentbased_always_off", ""}, {"parentbased_traceidratio", "0"}, {"traceidratio", "x"},
	} {
		t.Run(tc.sampler+"="+tc.arg, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.arg)
			sdk := sdktrace.NewTracerProvider().Tracer("t")
			ours := (&recorder{sampler: samplerFromEnv(os.Getenv), limits: limitsFromEnv(os.Getenv)}).Tracer("t")
			for name, ctx := range contexts {
				_, want := sdk.Start(ctx, "s")
				_, got := ours.Start(ctx, "s")
				if got.IsRecording() != want.IsRecording() || got.SpanContext().IsSampled() != want.SpanContext().IsSampled() {
					t.Errorf("%s: recording %v sampled %v, the SDK %v %v", name, got.IsRecording(), got.SpanContext().IsSampled(),
						want.IsRecording(), want.SpanContext().IsSampled())
				}
				if got.SpanContext().TraceID() != want.SpanContext().TraceID() && trace.SpanContextFromContext(ctx).IsValid() {
					t.Errorf("%s: a child of a remote parent left its trace", name)
				}
				// StartChild decides as Start does, from the parent it is given.
				child := ours.(*tracer).StartChild(trace.SpanFromContext(ctx), "s")
				if child.IsRecording() != want.IsRecording() || child.SpanContext().IsSampled() != want.SpanContext().IsSampled() {
					t.Errorf("%s: StartChild: recording %v sampled %v, the SDK %v %v", name, child.IsRecording(), child.SpanContext().IsSampled(),
						want.IsRecording(), want.SpanContext().IsSampled())
				}
			}
		})
	}
}

// The OTEL_*_LIMIT variables limit spans as they do the SDK's: attribute count, value
// length (in characters), event count.
func TestRecorderLimitsFromTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "3")
	t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "4")
	t.Setenv("OTEL_SPAN_EVENT_COUNT_LIMIT", "1")
	run := func(tp trace.TracerProvider) {
		_, s := tp.Tracer("t").Start(context.Background(), "s", trace.WithAttributes(attribute.String("a", "ünïcode"),
			attribute.StringSlice("b", []string{"abcdef", "x"})))
		s.SetAttributes(attribute.Int("c", 1), attribute.Int("d", 2), attribute.String("a", "again and again"), attribute.String("", "invalid"))
		s.AddEvent("first")
		s.RecordError(errors.New("boom"))
		s.SetStatus(codes.Ok, "")
		s.SetStatus(codes.Error, "too late")
		s.End()
		s.SetAttributes(attribute.Int("after", 1))
	}
	rec := tracetest.NewSpanRecorder()
	run(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	kept := NewRecent(0, 0)
	run(&recorder{res: resource.Default(), limits: limitsFromEnv(os.Getenv), keep: kept})
	want, got := normalize(sdkEnded(rec.Ended())), normalize(keptSpans(kept))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got  %+v\n want %+v", got, want)
	}
	if len(got) == 1 && len(got[0].Attrs) != 3 {
		t.Errorf("attributes %v: the count limit is 3", got[0].Attrs)
	}
}

// A span ended while a panic unwinds records it, as the SDK's does, and the panic goes on.
func TestRecorderRecordsAPanic(t *testing.T) {
	kept := NewRecent(0, 0)
	tr := (&recorder{limits: limitsFromEnv(os.Getenv), keep: kept}).Tracer("t")
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("the panic became %v", r)
			}
		}()
		_, s := tr.Start(context.Background(), "s")
		defer s.End()
		panic("boom")
	}()
	spans := keptSpans(kept)
	if len(spans) != 1 || len(spans[0].Events()) != 1 || spans[0].Events()[0].Name != "exception" {
		t.Fatalf("spans %v", normalize(spans))
	}
}

// The span clock reads the wall clock's time, never goes back, and takes a new wall-clock
// reading once its base is a second old.
func TestClock(t *testing.T) {
	c := newClock()
	prev := c.now()
	for range 1000 {
		now := c.now()
		if now.Before(prev) {
			t.Fatalf("%v after %v", now, prev)
		}
		prev = now
	}
	if d := time.Since(prev); d < 0 || d > 100*time.Millisecond {
		t.Errorf("the clock is %v from time.Now", d)
	}
	old := time.Now().Add(-2 * time.Second)
	c.base.Store(&old)
	if d := time.Since(c.now()); d < 0 || d > 100*time.Millisecond {
		t.Errorf("a stale base: %v from time.Now", d)
	}
	if base := c.base.Load(); time.Since(*base) > time.Second {
		t.Error("the base was not renewed")
	}
}

// StartChild records the span Start records under the same parent, with no context
// made for it.
func TestRecorderStartChild(t *testing.T) {
	kept := NewRecent(10, 1<<20)
	tr := (&recorder{limits: limitsFromEnv(func(string) string { return "" }), keep: kept}).Tracer("t")
	ctx, parent := tr.Start(context.Background(), "parent")
	_, viaStart := tr.Start(ctx, "child", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("k", "v")))
	viaChild := tr.(*tracer).StartChild(parent, "child", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("k", "v")))
	if !viaChild.IsRecording() {
		t.Fatal("a child of a recording span is not recording")
	}
	viaStart.End()
	viaChild.End()
	if viaChild.IsRecording() {
		t.Error("an ended span is still recording")
	}
	parent.End()
	spans := keptSpans(kept)
	if len(spans) != 3 {
		t.Fatalf("kept %d spans, want 3", len(spans))
	}
	got, want := normalize(spans[1:2]), normalize(spans[0:1])
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StartChild recorded\n%+v\nStart\n%+v", got, want)
	}
	for _, s := range spans[:2] {
		if !s.Parent().Equal(parent.SpanContext()) || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("%s: parent %v, want %v", s.Name(), s.Parent(), parent.SpanContext())
		}
	}
}

// A span given its attributes as a source keeps the source (it copies nothing) and
// reads it wherever the span is read: the kept traces find a session by it. Under a
// value length limit the attributes are set at once, cut as SetAttributes cuts them;
// after the end a source is ignored.
func TestRecorderAttributeSource(t *testing.T) {
	src := spanrec.Fixed{semconv.GenAIConversationID("s-1"), attribute.String("long", "abcdef")}
	for _, tc := range []struct {
		name     string
		valueLen int
		deferred bool
		long     string
	}{
		{"no limits", -1, true, "abcdef"},
		{"value length limit", 3, false, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := NewRecent(10, 1<<20)
			limits := limitsFromEnv(func(string) string { return "" })
			limits.valueLen = tc.valueLen
			tr := (&recorder{limits: limits, keep: kept}).Tracer(ScopeName)
			_, sp := tr.Start(context.Background(), "invoke_agent echo")
			spanrec.SetAttributes(sp, src)
			sp.End()
			spanrec.SetAttributes(sp, spanrec.Fixed{attribute.String("late", "x")})
			if s := sp.(*span); (s.src != nil) != tc.deferred || (s.attrs != nil) == tc.deferred {
				t.Errorf("source kept %v, attributes copied %v; want the source kept %v", s.src != nil, s.attrs != nil, tc.deferred)
			}
			spans := kept.Session("s-1")
			if len(spans) != 1 {
				t.Fatalf("the session has %d spans, want 1", len(spans))
			}
			want := []attribute.KeyValue{semconv.GenAIConversationID("s-1"), attribute.String("long", tc.long)}
			if got := spans[0].Attributes; !reflect.DeepEqual(got, want) {
				t.Errorf("attributes %v, want %v", got, want)
			}
		})
	}
}

// A leaf is recorded on its parent span, not as a span of its own: the kept traces get
// it when the parent ends, under the parent, with the parent's trace, flags and trace
// state. A configured sampler (which decides span by span) or a parent that has ended
// gets a span instead.
func TestRecorderLeaves(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name     string
		sampler  sdktrace.Sampler
		endFirst bool
		onParent bool
	}{
		{"default", nil, false, true},
		{"sampler configured", sdktrace.AlwaysSample(), false, false},
		{"parent ended", nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := NewRecent(10, 1<<20)
			tr := (&recorder{limits: limitsFromEnv(noEnv), keep: kept, sampler: tc.sampler}).Tracer(ScopeName)
			_, parent := tr.Start(context.Background(), "invoke_agent echo")
			if tc.endFirst {
				parent.End()
			}
			spanrec.RecordLeaf(tr, parent, spanrec.Leaf{Name: "store start_run", Kind: trace.SpanKindClient,
				Attributes: spanrec.Fixed{attribute.String("db.operation.name", "start_run")},
				Start:      time.Unix(10, 0), End: time.Unix(11, 0), Error: "boom"})
			if onParent := len(parent.(*span).leaves) == 1; onParent != tc.onParent {
				t.Fatalf("recorded on the parent: %v, want %v", onParent, tc.onParent)
			}
			if tc.onParent && len(kept.Trace(parent.SpanContext().TraceID())) != 0 {
				t.Error("the leaf was kept before its parent ended")
			}
			parent.End()
			var leafSpan Span
			for _, s := range kept.Trace(parent.SpanContext().TraceID()) {
				if s.Name == "store start_run" {
					leafSpan = s
				}
			}
			psc := parent.SpanContext()
			if leafSpan.ParentID != psc.SpanID() || leafSpan.TraceID != psc.TraceID() || !leafSpan.SpanID.IsValid() ||
				leafSpan.SpanID == psc.SpanID() || leafSpan.Kind != trace.SpanKindClient || !leafSpan.Start.Equal(time.Unix(10, 0)) ||
				!leafSpan.End.Equal(time.Unix(11, 0)) || !leafSpan.Failed || leafSpan.Error != "boom" || len(leafSpan.Attributes) != 1 {
				t.Errorf("the leaf as kept: %+v (parent %v)", leafSpan, psc)
			}
		})
	}
}
