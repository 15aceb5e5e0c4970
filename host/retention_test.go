package host

import (
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// echoRuntime is a runtime with the echo agent whose finished runs are compacted after
// 20 ms and retained for a minute, and a turn starter and reader for it.
func echoRuntime(t *testing.T) (rt *Runtime, turn func() *Run, readToEnd func(*Subscription)) {
	t.Helper()
	client, stop := inprocess.Serve(echoagent.New())
	t.Cleanup(stop)
	rt, err := New(Config{Store: memory.New(), Agents: []Agent{{Name: "echo", Runner: client}}, Retention: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	rt.compactAfter = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	turn = func() *Run {
		t.Helper()
		r, err := rt.Start(ctx, TurnRequest{App: "echo", Input: Input{Content: []session.ContentBlock{{Type: "input_text", Text: "hi"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	readToEnd = func(s *Subscription) {
		t.Helper()
		for {
			if _, err := s.Next(ctx); errors.Is(err, io.EOF) {
				return
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	return rt, turn, readToEnd
}

// A finished run's journal stays in memory for the retention only while a client may come
// back to it with a cursor: a follower that stopped before the end, or one on another
// replica. One read to its end is let go at compaction, as an unfollowed one is.
func TestFinishedRunIsKeptOnlyForCursorsThatMayComeBack(t *testing.T) {
	rt, turn, readToEnd := echoRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	toEnd, brokeOff, remote := turn(), turn(), turn()
	readToEnd(toEnd.Subscribe(0))
	s := brokeOff.Subscribe(0)
	if _, err := s.Next(ctx); err != nil { // one event, then the client goes away
		t.Fatal(err)
	}
	remote.j.Pin()
	for _, r := range []*Run{brokeOff, remote} {
		<-r.Done()
	}

	deadline := time.Now().Add(5 * time.Second)
	for kept(rt, toEnd) {
		if time.Now().After(deadline) {
			t.Fatal("a run read to its end is still kept after its compaction")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !kept(rt, brokeOff) {
		t.Error("a run whose follower broke off was let go: its cursor cannot come back")
	}
	if !kept(rt, remote) {
		t.Error("a run followed from another replica was let go")
	}
	// What was let go is served from the store, whole.
	r, err := rt.Open(ctx, toEnd.Key, toEnd.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	if r == toEnd {
		t.Fatal("Open returned the let-go run")
	}
}

// A run let go at compaction is garbage then, not two minutes later: nothing (its
// retention timer included) keeps it.
func TestALetGoRunIsCollected(t *testing.T) {
	_, turn, readToEnd := echoRuntime(t)
	wp := func() weak.Pointer[Run] {
		r := turn()
		readToEnd(r.Subscribe(0))
		return weak.Make(r)
	}()
	collected(t, wp, "a run let go at compaction")
}

// A follower still reading when the run is compacted keeps it only until it reads to the
// end, not for the run's whole retention.
func TestARunIsLetGoWhenItsLastFollowerReachesTheEnd(t *testing.T) {
	rt, turn, readToEnd := echoRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := turn()
	s := r.Subscribe(0)
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	deadline := time.Now().Add(5 * time.Second)
	for !compacted(r) {
		if time.Now().After(deadline) {
			t.Fatal("the run's journal was not compacted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !kept(rt, r) {
		t.Fatal("a run was let go while a follower was still reading it")
	}
	readToEnd(s)
	if kept(rt, r) {
		t.Fatal("a run is still kept after its last follower read it to the end")
	}
}

func compacted(r *Run) bool {
	_, compacted, _, _ := r.j.Read(math.MaxInt)
	return compacted
}

// A run read whole by Wait that nobody subscribed to (a non-stream request's) leaves
// memory at once, not at its compaction; one that someone follows stays until then.
func TestARunReadWholeByWaitIsLetGoAtOnce(t *testing.T) {
	rt, turn, readToEnd := echoRuntime(t)
	rt.compactAfter = time.Hour // only Wait can let it go within the test
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	followed := turn()
	readToEnd(followed.Subscribe(0))
	if _, err := followed.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if !kept(rt, followed) {
		t.Error("Wait let go of a run someone follows")
	}

	wp := func() weak.Pointer[Run] {
		r := turn()
		evs, err := r.Wait(ctx)
		if err != nil || len(evs) == 0 {
			t.Fatalf("Wait: %d events, %v", len(evs), err)
		}
		if kept(rt, r) {
			t.Error("a run read whole by Wait, and followed by nobody, is still kept")
		}
		if got, err := rt.Open(ctx, r.Key, r.InvocationID); err != nil || got == r {
			t.Fatalf("Open after Wait: %v (the same run: %v)", err, got == r)
		}
		return weak.Make(r)
	}()
	collected(t, wp, "a run let go by Wait")
}

// kept reports whether rt still holds r among its runs in memory.
func kept(rt *Runtime, r *Run) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.runs[runKey{r.Key, r.InvocationID}] == r
}

// collected waits (5 s at most) until the run wp points to is garbage: nothing, its
// timers included, keeps it.
func collected(t *testing.T, wp weak.Pointer[Run], what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for wp.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s is still reachable", what)
		}
		time.Sleep(20 * time.Millisecond)
		runtime.GC()
	}
}
