package runnerpool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// A scaling pool starts with one member and adds another, up to Max, while every member
// is CPU-bound with runs waiting: a Python runner's interpreter lock holds it to one
// core, so a second process is what relieves it, while runs in flight alone say nothing
// (most of them wait on a model). A member the load no longer needs is retired once its
// runs end. CPU use is read from /proc; where there is none the pool stays at one.

// ScalingConfig configures NewScaling.
type ScalingConfig struct {
	// Max is the most members the pool grows to (at least 1).
	Max int
	// NewMember makes member i (0 is the first, started by Start). It must not start
	// a process: the pool starts it.
	NewMember func(i int) Member
	Logger    hclog.Logger

	// Interval is how often CPU use is sampled (default 1s).
	Interval time.Duration
	// HotTicks is how many samples in a row every member must be busy for the pool to
	// grow (default 2).
	HotTicks int
	// IdleAfter is how long the load must fit in one member fewer before the newest
	// member is retired (default 2m).
	IdleAfter time.Duration
	// RetryAfter is how long the pool waits to grow again after a member failed to start
	// (default 1m).
	RetryAfter time.Duration
	// CPUTime reads a process's CPU time (default: /proc/PID/stat).
	CPUTime func(pid int) (time.Duration, error)
}

const (
	// hotCPU: a member using this share of a core or more is CPU-bound.
	hotCPU = 0.8
	// hotBusy: ...with at least this many runs in flight, so that another process
	// would have runs to take over. At one connection a run at a time keeps a process
	// busy, and a second process would sit idle.
	hotBusy = 2
	// coolCPU: the pool shrinks once its members together use less than this share of
	// a core per member that would remain; far under hotCPU, so that it does not flap.
	coolCPU = 0.3
	// idleCPU: ...or once its newest member, which light load leaves alone (ties go to
	// the oldest), uses less than this.
	idleCPU = 0.05
)

// NewScaling returns a pool that starts with one member and grows to cfg.Max.
func NewScaling(cfg ScalingConfig) *Pool {
	if cfg.Max < 1 || cfg.NewMember == nil {
		panic("runnerpool: NewScaling needs Max ≥ 1 and NewMember")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.HotTicks <= 0 {
		cfg.HotTicks = 2
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = 2 * time.Minute
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Minute
	}
	if cfg.CPUTime == nil {
		cfg.CPUTime = procCPUTime
	}
	p := New(cfg.NewMember(0))
	p.scale = &scaler{cfg: cfg, samples: map[*member]cpuSample{}}
	return p
}

type scaler struct {
	cfg ScalingConfig

	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// Only the loop's goroutine touches these.
	samples   map[*member]cpuSample
	hot       int
	coolSince time.Time

	growing atomic.Bool
	failed  atomic.Int64 // unix nanos of the last failed start
}

type cpuSample struct {
	at  time.Time
	pid int
	cpu time.Duration
}

func (s *scaler) begin(p *Pool) {
	s.once.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.wg.Go(func() { s.loop(p) })
	})
}

func (s *scaler) stop() {
	s.once.Do(func() {}) // a pool never started has no loop
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}

func (s *scaler) loop(p *Pool) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.tick(p, now)
		}
	}
}

// tick samples every live member's CPU use since the last tick and grows or shrinks.
func (s *scaler) tick(p *Pool, now time.Time) {
	ms := p.members()
	hot := true
	total, newest := 0.0, 1.0
	seen := make(map[*member]cpuSample, len(ms))
	for i, m := range ms {
		pid := m.PID()
		if pid == 0 {
			hot = false // no process right now
			continue
		}
		cpu, err := s.cfg.CPUTime(pid)
		if err != nil {
			hot = false
			continue
		}
		seen[m] = cpuSample{at: now, pid: pid, cpu: cpu}
		prev, ok := s.samples[m]
		if !ok || prev.pid != pid || !now.After(prev.at) {
			hot = false // a new or restarted process: no share yet
			continue
		}
		share := float64(cpu-prev.cpu) / float64(now.Sub(prev.at))
		total += share
		if i == len(ms)-1 {
			newest = share
		}
		if share < hotCPU || m.busy.Load() < hotBusy {
			hot = false
		}
	}
	s.samples = seen

	if hot {
		s.hot++
	} else {
		s.hot = 0
	}
	if s.hot >= s.cfg.HotTicks && len(ms) < s.cfg.Max && !s.growing.Load() &&
		now.Sub(time.Unix(0, s.failed.Load())) >= s.cfg.RetryAfter {
		s.hot = 0
		s.growing.Store(true)
		s.wg.Go(func() { s.grow(p, len(ms)) })
	}

	if len(ms) > 1 && (total < coolCPU*float64(len(ms)-1) || newest < idleCPU) {
		if s.coolSince.IsZero() {
			s.coolSince = now
		} else if now.Sub(s.coolSince) >= s.cfg.IdleAfter {
			s.coolSince = time.Time{}
			s.shrink(p)
		}
	} else {
		s.coolSince = time.Time{}
	}
}

// grow starts member i and, once it serves, adds it to the live members.
func (s *scaler) grow(p *Pool, i int) {
	defer s.growing.Store(false)
	m := &member{Member: s.cfg.NewMember(i)}
	if !p.track(m) {
		return
	}
	s.cfg.Logger.Info("every runner process is CPU-bound: starting another", "processes", i+1, "max", s.cfg.Max)
	if err := m.Start(s.ctx); err != nil {
		s.failed.Store(time.Now().UnixNano())
		s.cfg.Logger.Warn("an added runner process did not start", "error", err)
		p.untrack(m)
		_ = m.Close(context.WithoutCancel(s.ctx))
		return
	}
	if !p.publish(func(live []*member) []*member { return append(live, m) }) {
		_ = m.Close(context.WithoutCancel(s.ctx))
	}
}

// shrink takes the newest member out of the live ones and closes it once its runs end.
func (s *scaler) shrink(p *Pool) {
	var m *member
	p.publish(func(live []*member) []*member {
		m = live[len(live)-1]
		return live[: len(live)-1 : len(live)-1]
	})
	if m == nil {
		return
	}
	s.cfg.Logger.Info("runner load fits in fewer processes: retiring one", "processes", len(p.members()))
	s.wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for m.busy.Load() > 0 {
			select {
			case <-s.ctx.Done():
				return // Close closes it
			case <-t.C:
			}
		}
		if p.untrack(m) {
			_ = m.Close(context.WithoutCancel(s.ctx))
		}
	})
}

// track records m as a member Close must close; false once the pool is closed.
func (p *Pool) track(m *member) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.all = append(p.all, m)
	return true
}

// untrack forgets m; false if Close took it already.
func (p *Pool) untrack(m *member) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.all {
		if x == m {
			p.all = append(p.all[:i], p.all[i+1:]...)
			return true
		}
	}
	return false
}

// publish replaces the live members with change's result; false once the pool is closed.
// change gets a copy it may keep.
func (p *Pool) publish(change func([]*member) []*member) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	live := change(append([]*member(nil), p.members()...))
	p.live.Store(&live)
	return true
}

// procCPUTime reads a process's user and system CPU time from /proc/PID/stat.
func procCPUTime(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, errors.New("no process")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc on every architecture.
const clockTicks = 100

// parseStatCPU reads utime and stime (fields 14 and 15) of a /proc/PID/stat line. The
// command (field 2) is in parentheses and may hold spaces and parentheses itself, so the
// fields are counted from the last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("stat: no command field")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): utime is f[11], stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command", len(f))
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("stat: %w", err)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}
