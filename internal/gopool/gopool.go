// Package gopool runs functions on goroutines that are kept for the next one.
//
// A new goroutine starts with a small stack and copies it to a twice larger one each
// time a call goes deeper than it has room for. A run's goroutine goes deep (the store's
// write, JSON, the lane), so every turn paid for two or three such copies: about 5% of
// the host's CPU under load. A worker of a Pool keeps its grown stack between functions;
// the collector still shrinks a stack that stays mostly unused, and a worker left idle
// for the pool's idle time exits, so a burst of work leaves nothing behind.
package gopool

import (
	"slices"
	"sync"
	"time"
)

// Pool starts functions on idle workers, or on a new worker when none is idle. The zero
// value is not usable; make one with New.
type Pool struct {
	idleTime time.Duration
	// maxIdle bounds the idle workers kept (0: no bound); a worker finishing while as
	// many are idle exits at once.
	maxIdle int

	mu sync.Mutex
	// idle workers, the one that went idle last at the end: it is taken first, its stack
	// most likely still in the caches, and the ones below it are left to time out.
	idle []*worker
	live int // workers alive, for tests
}

// worker is one goroutine of the pool. Its next function is handed over in next, not
// through a channel: a value received from a channel can stay in the receiving frame
// until the next one arrives, and a finished function (with everything it captured,
// a whole run) must be garbage at once.
type worker struct {
	wake chan struct{} // capacity 1: next was set
	next func()
}

// RunIdle is how long a run's worker waits for the next run before it exits: the host's
// and the Go SDK's pools of run goroutines use it.
const RunIdle = 10 * time.Second

// New returns a pool whose workers exit after idle time without work.
func New(idle time.Duration) *Pool {
	return &Pool{idleTime: idle}
}

// NewBounded returns a pool whose workers exit after idle time without work, and that
// keeps at most maxIdle of them idle. A pool whose functions are short steps of work
// that waits elsewhere (a run that holds no goroutine between its events) needs few
// workers at once, but a burst of such steps would otherwise leave a worker, with its
// grown stack, per step of the burst for the whole idle time.
func NewBounded(idle time.Duration, maxIdle int) *Pool {
	return &Pool{idleTime: idle, maxIdle: maxIdle}
}

// Go runs f on its own goroutine, as the go statement does: it never waits for f or for a
// worker to free up.
func (p *Pool) Go(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		w.next = f
		p.mu.Unlock()
		w.wake <- struct{}{}
		return
	}
	p.live++
	p.mu.Unlock()
	go p.work(f)
}

func (p *Pool) work(f func()) {
	w := &worker{wake: make(chan struct{}, 1)}
	idle := time.NewTimer(p.idleTime)
	defer idle.Stop()
	for {
		f()
		p.mu.Lock()
		if p.maxIdle > 0 && len(p.idle) >= p.maxIdle {
			p.live--
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		idle.Reset(p.idleTime)
		select {
		case <-w.wake:
		case <-idle.C:
			p.mu.Lock()
			if i := slices.Index(p.idle, w); i >= 0 {
				p.idle = slices.Delete(p.idle, i, i+1)
				p.live--
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
			<-w.wake // Go took this worker as its timer fired: the function is coming
		}
		p.mu.Lock()
		f, w.next = w.next, nil
		p.mu.Unlock()
	}
}

// workers returns how many workers are alive.
func (p *Pool) workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}
