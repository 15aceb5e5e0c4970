package gopool

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"
)

func TestGoRunsEveryFunction(t *testing.T) {
	p := New(time.Minute)
	var (
		wg  sync.WaitGroup
		ran atomic.Int64
	)
	for range 1000 {
		wg.Add(1)
		p.Go(func() { defer wg.Done(); ran.Add(1) })
	}
	wg.Wait()
	if got := ran.Load(); got != 1000 {
		t.Fatalf("ran %d functions, want 1000", got)
	}
}

// A function that blocks must not hold up the next one: Go never waits for a worker.
func TestGoNeverWaitsForABusyWorker(t *testing.T) {
	p := New(time.Minute)
	release := make(chan struct{})
	defer close(release)
	p.Go(func() { <-release })
	done := make(chan struct{})
	p.Go(func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second function did not run while the first one blocked")
	}
}

// A worker that finished is reused: functions run one after another need about one
// worker, not one each (workers live a minute here, so none exits during the test).
func TestIdleWorkersAreReused(t *testing.T) {
	p := New(time.Minute)
	for range 100 {
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
		time.Sleep(time.Millisecond) // the worker gets back to the pool
	}
	if n := p.workers(); n > 10 {
		t.Fatalf("100 functions run one after another left %d workers, want the first reused", n)
	}
}

// Workers left idle exit: the pool holds no goroutine after its idle time.
func TestIdleWorkersExit(t *testing.T) {
	p := New(20 * time.Millisecond)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		p.Go(func() { defer wg.Done(); time.Sleep(5 * time.Millisecond) })
	}
	wg.Wait()
	if p.workers() == 0 {
		t.Fatal("no worker alive right after the work")
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.workers() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still alive long after the idle time", p.workers())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A bounded pool keeps no more idle workers than its bound after a burst (workers live a
// minute here, so none exits by its idle time during the test).
func TestBoundedPoolKeepsAtMostMaxIdle(t *testing.T) {
	p := NewBounded(time.Minute, 4)
	var (
		wg      sync.WaitGroup
		release = make(chan struct{})
	)
	for range 50 {
		wg.Add(1)
		p.Go(func() { defer wg.Done(); <-release })
	}
	if n := p.workers(); n != 50 {
		t.Fatalf("50 functions waiting at once run on %d workers, want 50", n)
	}
	close(release)
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for p.workers() > 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers alive after the burst, want at most 4 kept idle", p.workers())
		}
		time.Sleep(time.Millisecond)
	}
	// The kept ones still run work.
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
}

// A finished function, and all it captured, is garbage while its worker waits for the
// next one.
func TestAFinishedFunctionIsNotKept(t *testing.T) {
	p := New(time.Minute)
	payload := new([1 << 16]byte)
	wp := weak.Make(payload)
	done := make(chan struct{})
	p.Go(func() { payload[0] = 1; close(done) })
	<-done
	payload = nil
	deadline := time.Now().Add(5 * time.Second)
	for wp.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("what a finished function captured is still reachable")
		}
		time.Sleep(10 * time.Millisecond)
		runtime.GC()
	}
}

// BenchmarkDeepCall compares a deep call on a new goroutine with one on a pool's worker.
func BenchmarkDeepCall(b *testing.B) {
	run := func(b *testing.B, spawn func(func())) {
		var wg sync.WaitGroup
		for range b.N {
			wg.Add(1)
			spawn(func() { defer wg.Done(); deep(64) })
			wg.Wait()
		}
	}
	b.Run("go", func(b *testing.B) { run(b, func(f func()) { go f() }) })
	b.Run("pool", func(b *testing.B) { run(b, New(time.Minute).Go) })
}

// deep uses about n KiB of stack.
//
//go:noinline
func deep(n int) byte {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return deep(n-1) + buf[n%len(buf)]
}
