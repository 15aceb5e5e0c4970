package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gogc reads the collector's current GOGC without changing it.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, floor uint64
		base, want  int
	}{
		{0, 64 * mib, 100, 100},              // not measured yet
		{1 * mib, 64 * mib, 100, MaxPercent}, // 6300% capped
		{8 * mib, 64 * mib, 100, 700},        // goal 8 × 8 = 64 MiB
		{16 * mib, 64 * mib, 100, 300},       // goal 64 MiB
		{30 * mib, 64 * mib, 100, 110},       // 113%, in steps of 10
		{40 * mib, 64 * mib, 100, 100},       // 60% < base
		{200 * mib, 64 * mib, 100, 100},      // over the floor: base
		{16 * mib, 64 * mib, 400, 400},       // base above what the floor asks
	} {
		if got := Percent(tc.live, tc.floor, tc.base); got != tc.want {
			t.Errorf("Percent(%d MiB, %d MiB, %d) = %d, want %d", tc.live/mib, tc.floor/mib, tc.base, got, tc.want)
		}
	}
}

func TestCapped(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name             string
		p                int
		scanned, ceiling uint64
		want             int
	}{
		{"small heap: the floor's percent stays", 400, 16 * mib, 192 * mib, 400},
		{"at the ceiling: unchanged", 100, 192 * mib, 192 * mib, 100},
		{"past it: headroom held to the ceiling", 100, 256 * mib, 192 * mib, 75},
		{"in steps of 5", 100, 300 * mib, 192 * mib, 60},
		{"never below the least", 100, 4096 * mib, 192 * mib, MinCappedPercent},
		{"nothing scanned yet", 100, 0, 192 * mib, 100},
	} {
		if got := Capped(tc.p, tc.scanned, tc.ceiling); got != tc.want {
			t.Errorf("%s: Capped(%d, %d MiB, %d MiB) = %d, want %d", tc.name, tc.p, tc.scanned/mib, tc.ceiling/mib, got, tc.want)
		}
	}
}

func TestStartLeavesAnOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "") // set, if empty: the runtime reads it as the default
	t.Cleanup(func() { debug.SetGCPercent(100) })
	if f := Start(64<<20, 100); f != nil {
		f.Stop()
		t.Fatal("Start overrode a GOGC set in the environment")
	}
}

// After each collection GOGC follows the live heap: up while it is small against the
// floor, back to base once it is not; Stop puts base back.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in this test's environment")
	}
	t.Cleanup(func() { debug.SetGCPercent(100) })
	const floor = 256 << 20
	f := Start(floor, 100)
	if f == nil {
		t.Fatal("Start returned nil without GOGC in the environment")
	}
	// until collects until GOGC satisfies ok (the finalizer runs after a collection).
	until := func(what string, ok func(int) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok(gogc()) {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC is %d, want %s", gogc(), what)
			}
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
	until("raised for a small heap", func(p int) bool { return p > 1000 })
	func() {
		live := make([]byte, 200<<20) // most of the floor: what it asks for is below base
		for i := range live {
			live[i] = 1
		}
		until("base (100) with 200 MiB live", func(p int) bool { return p == 100 })
		runtime.KeepAlive(live)
	}()
	until("raised again once the heap is small", func(p int) bool { return p > 1000 })
	// Something else setting GOGC is undone by the next collection.
	debug.SetGCPercent(100)
	until("raised again after an outside change", func(p int) bool { return p > 1000 })
	f.Stop()
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC after Stop = %d, want 100", p)
	}
}

// With a headroom cap, a live heap larger than the cap collects at a lower GOGC, and a
// small one at the floor's as before.
func TestCapHeadroomLowersGOGCForALargeHeap(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in this test's environment")
	}
	t.Cleanup(func() { debug.SetGCPercent(100) })
	f := Start(16<<20, 100).CapHeadroom(32 << 20)
	if f == nil {
		t.Fatal("Start returned nil without GOGC in the environment")
	}
	defer f.Stop()
	until := func(what string, ok func(int) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok(gogc()) {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC is %d, want %s", gogc(), what)
			}
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
	until("raised for a small heap", func(p int) bool { return p > 100 })
	func() {
		live := make([]byte, 40<<20) // more than the cap: about 80% of it as headroom
		for i := range live {
			live[i] = 1
		}
		until("about 75 with 40 MiB live and a 32 MiB cap", func(p int) bool { return p >= MinCappedPercent && p < 100 })
		runtime.KeepAlive(live)
	}()
	until("raised again once the heap is small", func(p int) bool { return p > 100 })
}
