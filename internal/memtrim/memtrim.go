// Package memtrim is the binary's policy for giving memory back to the operating system
// after bursts. The host library only reports how much it let go of (finished runs'
// journals) and offers to shed what only a busy host needs; when to collect and return
// memory is the program's decision, not a library's.
//
// Without it a host that goes idle after a burst keeps the burst's memory: the Go runtime
// collects only as it allocates, and an idle host allocates nothing.
package memtrim

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/agentengine/agentengine/internal/cmem"
)

// Once this much has been let go of (in the host's units: dropped live events, a forgotten
// run counting host.ForgottenRunWeight), the garbage is collected and returned at most once
// per Every; smaller amounts are trimmed Every after they were dropped.
const (
	AfterDropped = 20_000
	Every        = 30 * time.Second
)

// Trimmer schedules trims. The zero value trims without shedding; set Shed before the
// first Add.
type Trimmer struct {
	// Shed lets go of what only a busy host needs, before the memory is returned, and
	// reports whether it keeps anything it will let go of later (then the trim runs again,
	// Every later).
	Shed func() (more bool)

	mu        sync.Mutex
	dropped   int
	last      time.Time
	scheduled bool
}

// Add records n units let go of and schedules a trim.
func (m *Trimmer) Add(n int) {
	if n <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropped += n
	if m.scheduled {
		return
	}
	m.scheduled = true
	wait := Every
	if m.dropped >= AfterDropped {
		wait = max(0, Every-time.Since(m.last))
	}
	time.AfterFunc(wait, m.run)
}

func (m *Trimmer) run() {
	m.mu.Lock()
	m.dropped = 0
	m.mu.Unlock()
	again := m.Shed != nil && m.Shed()
	debug.FreeOSMemory()
	// And what the store's C code freed (SQLite's page caches and statements), which
	// glibc would otherwise keep in the process for good.
	cmem.Release()
	m.mu.Lock()
	m.scheduled, m.last = again, time.Now()
	m.mu.Unlock()
	if again {
		time.AfterFunc(Every, m.run)
	}
}
