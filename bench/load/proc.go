package load

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It is 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procStat is one reading of a process.
type procStat struct {
	cpu   time.Duration // utime + stime
	rssKB int64         // VmRSS
	hwmKB int64         // VmHWM (peak RSS)
}

// readStat reads /proc/<pid>/stat and /proc/<pid>/status.
func readStat(pid int) (procStat, error) {
	var st procStat
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, err
	}
	_, utime, stime, err := parseStat(b)
	if err != nil {
		return st, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	st.cpu = ticks(utime + stime)
	b, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return st, err
	}
	st.rssKB = statusKB(b, "VmRSS:")
	st.hwmKB = statusKB(b, "VmHWM:")
	return st, nil
}

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// parseStat returns ppid, utime and stime from a /proc/<pid>/stat line. The command name
// (field 2) may contain spaces and parentheses, so fields are counted after the last ')'.
func parseStat(b []byte) (ppid, utime, stime int64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("malformed stat")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return 0, 0, 0, fmt.Errorf("malformed stat: %d fields", len(f))
	}
	vals := [3]int64{}
	for k, idx := range [3]int{1, 11, 12} {
		v, err := strconv.ParseInt(string(f[idx]), 10, 64)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("malformed stat field: %w", err)
		}
		vals[k] = v
	}
	return vals[0], vals[1], vals[2], nil
}

func statusKB(b []byte, key string) int64 {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0
	}
	rest := b[i+len(key):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	f := bytes.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return v
}

// childrenCPU returns the CPU time of each descendant of pid (its runners, and the
// runners a pre-forking runner parent forked), by pid. They are found by scanning /proc
// for processes whose parent is pid or one of them.
func childrenCPU(pid int) map[int]time.Duration {
	out := map[int]time.Duration{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	parent := map[int]int{}
	cpu := map[int]time.Duration{}
	for _, e := range ents {
		cp, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		ppid, ut, stt, err := parseStat(b)
		if err != nil {
			continue
		}
		parent[cp], cpu[cp] = int(ppid), ticks(ut+stt)
	}
	for cp := range parent {
		for p, hops := parent[cp], 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if p == pid {
				out[cp] = cpu[cp]
				break
			}
		}
	}
	return out
}

// pssKB reads a process's proportional set size from /proc/<pid>/smaps_rollup: its
// private pages plus its share of the pages it shares, so that PSS summed over processes
// counts memory once.
func pssKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	return statusKB(b, "\nPss:")
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sampler measures the server process across the measured phase: CPU before/after,
// RSS before/after and the highest RSS seen while it runs.
type sampler struct {
	pid int

	before, after   procStat
	kidsBefore      map[int]time.Duration
	kidsAfter       map[int]time.Duration
	kidsRSSKB       int64 // the children's VmRSS at the end, summed
	treePSSKB       int64 // the server's and its descendants' PSS at the end, summed
	clientBefore    time.Duration
	clientAfter     time.Duration
	started, ended  time.Time
	err             error
	mu              sync.Mutex
	peakKB          int64
	stop            context.CancelFunc
	done            chan struct{}
	samplingEnabled bool
}

func newSampler(pid int) *sampler { return &sampler{pid: pid} }

// start takes the "before" readings and, if peak is set, polls RSS until end.
func (s *sampler) start(ctx context.Context, peak bool) {
	s.clientBefore = selfCPU()
	s.started = time.Now()
	if s.pid <= 0 {
		return
	}
	s.kidsBefore = childrenCPU(s.pid)
	s.before, s.err = readStat(s.pid)
	s.peakKB = s.before.rssKB
	if !peak || s.err != nil {
		return
	}
	ctx, s.stop = context.WithCancel(ctx)
	s.done = make(chan struct{})
	s.samplingEnabled = true
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if st, err := readStat(s.pid); err == nil {
					s.notePeak(st.rssKB)
				}
			}
		}
	}()
}

func (s *sampler) notePeak(kb int64) {
	s.mu.Lock()
	s.peakKB = max(s.peakKB, kb)
	s.mu.Unlock()
}

// end takes the "after" readings.
func (s *sampler) end() {
	s.ended = time.Now()
	s.clientAfter = selfCPU()
	if s.pid <= 0 || s.err != nil {
		return
	}
	if s.samplingEnabled {
		s.stop()
		<-s.done
	}
	s.after, s.err = readStat(s.pid)
	s.kidsAfter = childrenCPU(s.pid)
	s.treePSSKB = pssKB(s.pid)
	for pid := range s.kidsAfter {
		if st, err := readStat(pid); err == nil {
			s.kidsRSSKB += st.rssKB
		}
		s.treePSSKB += pssKB(pid)
	}
	s.notePeak(s.after.rssKB)
}

// server fills a ServerStats for turns turns and deltas deltas (nil without a pid).
func (s *sampler) server(turns, deltas int) *ServerStats {
	if s.pid <= 0 {
		return nil
	}
	if s.err != nil {
		return &ServerStats{PID: s.pid, Error: s.err.Error()}
	}
	cpu := s.after.cpu - s.before.cpu
	var kids time.Duration
	n := 0
	for pid, after := range s.kidsAfter {
		// A runner started during the load (a pool growing) counts from its start.
		kids += after - s.kidsBefore[pid]
		n++
	}
	st := &ServerStats{
		PID:             s.pid,
		CPUSeconds:      cpu.Seconds(),
		RSSBeforeMB:     mb(s.before.rssKB),
		RSSAfterMB:      mb(s.after.rssKB),
		RSSPeakMB:       mb(s.peakKB),
		HWMMB:           mb(s.after.hwmKB),
		Children:        n,
		ChildCPUSeconds: kids.Seconds(),
		ChildRSSMB:      mb(s.kidsRSSKB),
		TreePSSMB:       mb(s.treePSSKB),
	}
	if wall := s.ended.Sub(s.started).Seconds(); wall > 0 {
		st.CPUCores = cpu.Seconds() / wall
	}
	if turns > 0 {
		st.CPUPerTurnUS = us(cpu) / float64(turns)
		st.ChildCPUPerTurnUS = us(kids) / float64(turns)
	}
	if deltas > 0 {
		st.CPUPerDeltaUS = us(cpu) / float64(deltas)
	}
	return st
}

func (s *sampler) clientPerTurnUS(turns int) float64 {
	if turns == 0 {
		return 0
	}
	return us(s.clientAfter-s.clientBefore) / float64(turns)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func mb(kb int64) float64 { return float64(kb) / 1024 }
