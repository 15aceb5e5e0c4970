package load

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// turnFunc sends one request on a worker.
type turnFunc func(ctx context.Context, w *worker) sample

// fixed runs fn on Concurrency workers until n requests were sent (n > 0) or dur has
// passed, and returns every sample.
func (d *driver) fixed(ctx context.Context, n int, dur time.Duration, fn turnFunc) []sample {
	var next atomic.Int64
	var deadline time.Time
	if n <= 0 {
		deadline = time.Now().Add(dur)
	}
	per := make([][]sample, d.cfg.Concurrency)
	pace := newPacer(d.cfg.Rate)
	var wg sync.WaitGroup
	for i := range per {
		wg.Go(func() {
			w := newWorker()
			for ctx.Err() == nil {
				if n > 0 && next.Add(1) > int64(n) {
					return
				}
				if !pace.wait(ctx) {
					return
				}
				if n <= 0 && !time.Now().Before(deadline) {
					return
				}
				per[i] = append(per[i], fn(ctx, w))
			}
		})
	}
	wg.Wait()
	var all []sample
	for _, p := range per {
		all = append(all, p...)
	}
	return all
}

// pacer hands out send times rate a second apart, from its creation on; a zero rate
// means no pacing.
type pacer struct {
	rate  float64
	start time.Time
	next  atomic.Int64
}

func newPacer(rate float64) *pacer { return &pacer{rate: rate, start: time.Now()} }

// wait blocks until the caller's send time; false when ctx ended first.
func (p *pacer) wait(ctx context.Context) bool {
	if p.rate <= 0 {
		return true
	}
	k := p.next.Add(1) - 1
	at := p.start.Add(time.Duration(float64(k) / p.rate * float64(time.Second)))
	wait := time.Until(at)
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// warm sends the warmup requests and fails when none of them succeeds (the server is
// down or rejects the requests).
func (d *driver) warm(ctx context.Context, fn turnFunc) error {
	if d.cfg.Warmup <= 0 {
		return nil
	}
	ss := d.fixed(ctx, d.cfg.Warmup, 0, fn)
	var last error
	for _, s := range ss {
		if s.err == nil {
			return nil
		}
		last = s.err
	}
	if last == nil {
		last = ctx.Err()
	}
	return fmt.Errorf("warmup: no request succeeded against %s: %w", d.url, last)
}

// result summarises samples taken between s's start and end.
func (d *driver) result(ss []sample, s *sampler) *Result {
	r := &Result{
		Label: d.cfg.Label, Scenario: d.cfg.Scenario, URL: d.cfg.URL, Model: d.cfg.Model,
		Concurrency: d.cfg.Concurrency, Deltas: d.cfg.Deltas, DelayMS: d.cfg.DelayMS,
		Requests: len(ss), Started: s.started,
	}
	var lat, ttfb, first []time.Duration
	var deltas, events int
	var bytes int64
	var es errorSampler
	for _, x := range ss {
		if x.err != nil {
			r.Errors++
			es.add(x.err)
			continue
		}
		r.OK++
		lat = append(lat, x.lat)
		if x.ttfb > 0 {
			ttfb = append(ttfb, x.ttfb)
		}
		if x.firstDelta > 0 {
			first = append(first, x.firstDelta)
		}
		deltas += x.deltas
		events += x.events
		bytes += x.bytes
	}
	r.ErrorSamples = es.list
	r.Seconds = s.ended.Sub(s.started).Seconds()
	if r.Seconds > 0 {
		r.TurnsPerSec = float64(r.OK) / r.Seconds
	}
	r.Latency, r.TTFB, r.FirstDelta = percentiles(lat), percentiles(ttfb), percentiles(first)
	if r.OK > 0 {
		r.DeltasPerTurn = float64(deltas) / float64(r.OK)
		r.EventsPerTurn = float64(events) / float64(r.OK)
		r.BytesPerTurn = float64(bytes) / float64(r.OK)
	}
	r.ClientCPUPerTurnUS = s.clientPerTurnUS(len(ss))
	r.Server = s.server(r.OK, deltas)
	return r
}

// throughput runs the nonstream and stream scenarios.
func (d *driver) throughput(ctx context.Context) (*Result, error) {
	stream := d.cfg.Scenario == Stream
	body := d.body(stream, "", d.cfg.Deltas, d.cfg.DelayMS)
	fn := func(ctx context.Context, w *worker) sample { return d.do(ctx, w, body, stream, nil) }
	if d.cfg.API != APIResponses {
		fn = d.peerTurn(stream)
	}
	if err := d.warm(ctx, fn); err != nil {
		return nil, err
	}
	s := newSampler(d.cfg.PID)
	s.start(ctx, true)
	ss := d.fixed(ctx, d.cfg.Requests, d.cfg.Duration, fn)
	s.end()
	return d.result(ss, s), ctx.Err()
}

// history seeds conversations with History events, then measures turns on them.
//
// Each measured turn adds EventsPerTurn events to its conversation, so one conversation
// serves as many measured turns as keep its history within 20% of History (at least
// one); more conversations are seeded when Requests needs them. Turns on one
// conversation are sequential; separate conversations run on up to Concurrency workers.
func (d *driver) history(ctx context.Context) (*Result, error) {
	cfg := d.cfg
	ept := cfg.EventsPerTurn
	seedTurns := (cfg.History + ept - 1) / ept
	perConv := max(1, max(cfg.History/5, 1)/ept)
	convs := (cfg.Requests + perConv - 1) / perConv
	id := runID()
	names := make([]string, convs)
	for i := range names {
		names[i] = "bench-" + id + "-" + strconv.Itoa(i)
	}
	workers := min(cfg.Concurrency, convs)

	// forEach runs fn(conversation index) on the workers, conversations in order.
	forEach := func(fn func(w *worker, conv int)) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				w := newWorker()
				for ctx.Err() == nil {
					i := int(next.Add(1)) - 1
					if i >= convs {
						return
					}
					fn(w, i)
				}
			})
		}
		wg.Wait()
	}

	info := &HistoryInfo{Events: cfg.History, EventsPerTurn: ept, Conversations: convs, SeedTurns: seedTurns * convs}
	seedStart := time.Now()
	var seedErrs atomic.Int64
	var firstErr atomic.Value
	forEach(func(w *worker, conv int) {
		body := d.body(false, names[conv], 0, 0)
		for range seedTurns {
			if ctx.Err() != nil {
				return
			}
			if s := d.do(ctx, w, body, false, nil); s.err != nil {
				seedErrs.Add(1)
				firstErr.CompareAndSwap(nil, s.err.Error())
			}
		}
	})
	info.SeedSeconds = time.Since(seedStart).Seconds()
	info.SeedErrors = int(seedErrs.Load())
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("seeding %d conversations with %d turns each did not finish: %w", convs, seedTurns, err)
	}
	if info.SeedErrors == info.SeedTurns && info.SeedTurns > 0 {
		return nil, fmt.Errorf("seeding failed: %v", firstErr.Load())
	}

	per := make([][]sample, convs)
	s := newSampler(cfg.PID)
	s.start(ctx, true)
	forEach(func(w *worker, conv int) {
		body := d.body(false, names[conv], cfg.Deltas, cfg.DelayMS)
		turns := min(perConv, cfg.Requests-conv*perConv)
		for range turns {
			if ctx.Err() != nil {
				return
			}
			per[conv] = append(per[conv], d.do(ctx, w, body, false, nil))
		}
	})
	s.end()
	var all []sample
	for _, p := range per {
		all = append(all, p...)
	}
	info.MaxEvents = seedTurns*ept + (min(perConv, cfg.Requests)-1)*ept
	r := d.result(all, s)
	r.History = info
	return r, ctx.Err()
}

// streams opens Streams streams at once and waits for all of them to finish.
func (d *driver) streams(ctx context.Context) (*Result, error) {
	cfg := d.cfg
	if cfg.Warmup > 0 {
		short := d.body(true, "", 1, 0)
		if err := d.warm(ctx, func(ctx context.Context, w *worker) sample { return d.do(ctx, w, short, true, nil) }); err != nil {
			return nil, err
		}
	}
	body := d.body(true, "", cfg.Deltas, cfg.DelayMS)
	info := &StreamsInfo{Target: cfg.Streams}
	var open, maxOpen atomic.Int64
	var allOpen atomic.Int64
	ss := make([]sample, cfg.Streams)
	s := newSampler(cfg.PID)
	s.start(ctx, true)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range ss {
		wg.Go(func() {
			w := &worker{rd: newSmallReader()}
			isOpen := false
			ss[i] = d.do(ctx, w, body, true, func() {
				isOpen = true
				n := open.Add(1)
				for {
					m := maxOpen.Load()
					if n <= m || maxOpen.CompareAndSwap(m, n) {
						break
					}
				}
				if n == int64(cfg.Streams) {
					allOpen.CompareAndSwap(0, int64(time.Since(start)))
				}
			})
			if isOpen {
				open.Add(-1)
			}
		})
	}
	wg.Wait()
	s.end()
	r := d.result(ss, s)
	r.Concurrency = cfg.Streams
	info.Completed = r.OK
	info.MaxOpen = int(maxOpen.Load())
	info.AllOpenMS = ms(time.Duration(allOpen.Load()))
	r.Streams = info
	if r.Errors > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return r, fmt.Errorf("the run's time limit ended %d streams", r.Errors)
	}
	return r, nil
}

// idle samples the server for Duration without sending anything.
func (d *driver) idle(ctx context.Context) (*Result, error) {
	s := newSampler(d.cfg.PID)
	s.start(ctx, true)
	dur := d.cfg.Duration
	if dur <= 0 {
		dur = time.Second
	}
	t := time.NewTimer(dur)
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	t.Stop()
	s.end()
	r := &Result{Label: d.cfg.Label, Scenario: Idle, URL: d.cfg.URL, Started: s.started, Seconds: s.ended.Sub(s.started).Seconds()}
	r.Server = s.server(0, 0)
	return r, nil
}
