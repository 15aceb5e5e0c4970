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
		{0, 64 * mib, 100, MaxPercent},
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

func TestStartLeavesAnOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "") // set, if empty: the runtime reads it as the default
	t.Cleanup(func() { debug.SetGCPercent(100) })
	if f := Start(64<<20, 100); f != nil {
		f.Stop()
		t.Fatal("Start overrode a GOGC set in the environment")
	}
}

// With a small live heap, GOGC goes up after collections; Stop puts it back.
func TestFloorRaisesGOGCForASmallHeap(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in this test's environment")
	}
	t.Cleanup(func() { debug.SetGCPercent(100) })
	f := Start(1<<30, 100) // a 1 GiB floor: any test heap is far below it
	if f == nil {
		t.Fatal("Start returned nil without GOGC in the environment")
	}
	// Start sets it at once; after something else changes it, the next collection
	// sets it again.
	if p := gogc(); p != MaxPercent {
		t.Fatalf("GOGC after Start = %d, want %d", p, MaxPercent)
	}
	debug.SetGCPercent(100)
	deadline := time.Now().Add(5 * time.Second)
	for gogc() < MaxPercent {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d for a small heap, want %d", gogc(), MaxPercent)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs after the collection
	}
	f.Stop()
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC after Stop = %d, want 100", p)
	}
}
