package memtrim

import "testing"

// Any amount let go of schedules a trim, one at a time.
func TestAddSchedulesOneTrim(t *testing.T) {
	var m Trimmer
	m.Add(0)
	if m.scheduled {
		t.Fatal("scheduled with nothing dropped")
	}
	m.Add(1) // trimmed Every from now: still scheduled below
	m.Add(AfterDropped)
	if !m.scheduled || m.dropped != AfterDropped+1 {
		t.Fatalf("scheduled %v, dropped %d", m.scheduled, m.dropped)
	}
}

// A trim sheds first, and runs again while the shedder keeps something for later.
func TestRunShedsAndReschedules(t *testing.T) {
	calls := 0
	m := Trimmer{Shed: func() bool { calls++; return calls == 1 }}
	m.run()
	if calls != 1 || !m.scheduled {
		t.Fatalf("after a shed that keeps more: calls %d, scheduled %v", calls, m.scheduled)
	}
	m.mu.Lock()
	m.scheduled = false
	m.mu.Unlock()
	m.run()
	if calls != 2 || m.scheduled {
		t.Fatalf("after a shed that kept nothing: calls %d, scheduled %v", calls, m.scheduled)
	}
}
