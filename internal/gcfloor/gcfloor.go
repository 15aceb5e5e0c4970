// Package gcfloor gives the Go garbage collector a minimum heap goal.
//
// With GOGC=100 the collector runs whenever the heap has grown by as much as is live. A
// server whose live heap is a few megabytes then collects many times a second under load
// (at 5,000 turns/s, about a third of agentengine's CPU went to marking). After each
// collection Floor raises GOGC so that the next one waits until the heap reaches the
// floor, and returns it to its normal value as the live heap grows past half the floor:
// small heaps collect less often, large ones exactly as before. Idle memory is unchanged
// (an idle process allocates nothing), and memory under load grows by at most the floor.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// MaxPercent caps the GOGC Floor sets: a nearly empty heap does not defer collection
// without bound.
const MaxPercent = 2000

// Floor keeps a minimum heap goal until Stop.
type Floor struct {
	bytes   uint64
	base    int
	ceiling uint64 // the most headroom above what the collector scans (0: none)
	stopped atomic.Bool
	sample  []metrics.Sample
}

// Start sets a heap goal of at least bytes, with base as the GOGC above it (100 is Go's
// default). It returns nil, and changes nothing, when the GOGC environment variable is set:
// the operator's setting wins.
func Start(bytes uint64, base int) *Floor {
	if _, set := os.LookupEnv("GOGC"); set || bytes == 0 || base <= 0 {
		return nil
	}
	f := &Floor{bytes: bytes, base: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	// Not adjusted now: until a collection has measured the live heap, the floor has
	// nothing to go by.
	f.arm()
	return f
}

// CapHeadroom bounds the heap's growth between collections to bytes once the live heap,
// the goroutines' stacks and the globals (what GOGC is a percentage of) are that large
// themselves, and GOGC to no less than MinCappedPercent: a large live heap (thousands of
// open streams) does not get as much again as headroom. It returns f; safe on a nil
// Floor (an operator's GOGC: nothing is adjusted).
func (f *Floor) CapHeadroom(bytes uint64) *Floor {
	if f != nil {
		f.ceiling = bytes
	}
	return f
}

// MinCappedPercent is the least GOGC CapHeadroom sets: a very large heap is not marked
// over and over for a small headroom.
const MinCappedPercent = 50

// Stop ends the adjustments and restores GOGC to base. Safe on a nil Floor.
func (f *Floor) Stop() {
	if f == nil || f.stopped.Swap(true) {
		return
	}
	debug.SetGCPercent(f.base)
}

// arm sets a finalizer on a fresh object: it runs once, after the next collection, and
// arms the next one.
func (f *Floor) arm() {
	s := new(sentinel)
	runtime.SetFinalizer(s, func(*sentinel) {
		if f.stopped.Load() {
			return
		}
		f.adjust()
		f.arm()
	})
}

// sentinel is allocated only for its finalizer. It holds a pointer so that it gets an
// allocation of its own: a small pointer-free object goes to the tiny allocator, where
// it shares a block with others and its finalizer may not run while any of them lives
// (which left GOGC at its first raised value for good).
type sentinel struct{ _ *sentinel }

// adjust sets GOGC from the live heap the last collection found.
func (f *Floor) adjust() {
	metrics.Read(f.sample)
	live, now := f.sample[0].Value, f.sample[1].Value
	if live.Kind() != metrics.KindUint64 || now.Kind() != metrics.KindUint64 {
		return // a runtime without these metrics: leave GOGC alone
	}
	p := Percent(live.Uint64(), f.bytes, f.base)
	if f.ceiling > 0 {
		scanned := live.Uint64()
		for _, s := range f.sample[2:] {
			if s.Value.Kind() == metrics.KindUint64 {
				scanned += s.Value.Uint64()
			}
		}
		p = Capped(p, scanned, f.ceiling)
	}
	if uint64(p) != now.Uint64() { //nolint:gosec // G115: p is in [MinCappedPercent, MaxPercent]
		debug.SetGCPercent(p)
	}
}

// Capped lowers the GOGC p so that the headroom it gives over scanned bytes (the live
// heap, stacks and globals) is at most ceiling, but not below MinCappedPercent, nor
// raises it. Steps of 5 keep it from changing after every collection.
func Capped(p int, scanned, ceiling uint64) int {
	if scanned == 0 || scanned*uint64(p) <= ceiling*100 { //nolint:gosec // G115: p is positive
		return p
	}
	c := int(ceiling*100/scanned) / 5 * 5 //nolint:gosec // G115: less than p
	return max(c, MinCappedPercent)
}

// Percent is the GOGC that makes the heap goal (live × (1 + GOGC/100)) at least floor,
// and never less than base nor more than MaxPercent; base while the live heap is not
// known (zero). Steps of 10 keep it from changing after every collection.
func Percent(live, floor uint64, base int) int {
	if live == 0 {
		return base
	}
	if live >= floor {
		return base
	}
	p := int((floor-live)*100/live) / 10 * 10
	return min(max(p, base), MaxPercent)
}
