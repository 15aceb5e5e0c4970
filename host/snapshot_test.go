package host_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// slowAgent streams n words, one every pause, then ends the message; with hang it
// blocks after the words until the run is cancelled, as a host that dies mid-message
// leaves a run.
type slowAgent struct {
	n     int
	pause time.Duration
	hang  bool
	sent  chan struct{} // closed when a hanging agent has sent its words
}

func (a *slowAgent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "slow"} }

func (a *slowAgent) Run(ctx context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	for i := range a.n {
		if err := emit.Text(fmt.Sprintf("w%d ", i)); err != nil {
			return err
		}
		select {
		case <-time.After(a.pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if a.hang {
		close(a.sent)
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func slowRuntime(t *testing.T, agent *slowAgent, store session.Store, every time.Duration) *host.Runtime {
	t.Helper()
	return startRuntime(t, host.Config{Store: store, Agents: []host.Agent{{Name: "slow", Runner: serve(t, agent)}}, SnapshotInterval: every})
}

func ofType(evs []session.Event, typ string) []session.Event {
	var out []session.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// A message that streams longer than the interval is stored as it streams (and
// journaled, so that every stored seq reaches followers); its final assistant_message
// supersedes the snapshots in the history the next turn sends.
func TestStreamSnapshotsAreStoredWhileAMessageStreams(t *testing.T) {
	store := memory.New()
	rt := slowRuntime(t, &slowAgent{n: 20, pause: 3 * time.Millisecond}, store, 10*time.Millisecond)
	r, evs := runTurn(t, rt, host.TurnRequest{App: "slow", Input: text("go")})
	stored, err := store.Events(context.Background(), r.Key, session.EventQuery{InvocationID: r.InvocationID})
	if err != nil {
		t.Fatal(err)
	}
	snaps := ofType(stored, session.TypeAssistantStreamSnapshot)
	msgs := ofType(stored, session.TypeAssistantMessage)
	if len(snaps) == 0 || len(msgs) != 1 {
		t.Fatalf("stored %d snapshots and %d messages", len(snaps), len(msgs))
	}
	last, _ := session.DataOf[session.AssistantStreamSnapshotData](snaps[len(snaps)-1])
	final, _ := session.DataOf[session.AssistantMessageData](msgs[0])
	if snaps[0].ItemID != msgs[0].ItemID || !strings.HasPrefix(final.Text, last.Text) || !last.StreamSnapshot || last.SnapshotIndex != len(snaps) {
		t.Fatalf("snapshot %+v (item %s) of message %q (item %s)", last, snaps[0].ItemID, final.Text, msgs[0].ItemID)
	}
	journaled := 0
	for _, e := range evs {
		if e.Kind == host.KindStored && e.Stored.Type == session.TypeAssistantStreamSnapshot {
			journaled++
		}
	}
	if journaled != len(snaps) {
		t.Fatalf("%d of %d snapshots journaled: a follower reconnecting by seq would miss some", journaled, len(snaps))
	}
	hist, _, err := session.LoadHistory(context.Background(), store, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range hist {
		if m.Role == "assistant" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("history has %d assistant messages: %+v", n, hist)
	}

	// A message shorter than the interval costs no write.
	quick := slowRuntime(t, &slowAgent{n: 3}, store, time.Hour)
	r, _ = runTurn(t, quick, host.TurnRequest{App: "slow", Input: text("go")})
	stored, _ = store.Events(context.Background(), r.Key, session.EventQuery{InvocationID: r.InvocationID})
	if len(ofType(stored, session.TypeAssistantStreamSnapshot)) != 0 {
		t.Fatal("a short message stored snapshots")
	}
}

// When the host that ran a message dies mid-message, the host that ends the orphaned
// run (Recover after a restart) keeps the text the snapshots hold as the message.
func TestRecoverKeepsTheSnapshottedTextOfAnOrphanedRun(t *testing.T) {
	store := memory.New()
	agent := &slowAgent{n: 10, pause: 2 * time.Millisecond, hang: true, sent: make(chan struct{})}
	dying := slowRuntime(t, agent, store, 5*time.Millisecond)
	r, err := dying.Start(context.Background(), host.TurnRequest{App: "slow", Input: text("go")})
	if err != nil {
		t.Fatal(err)
	}
	<-agent.sent // no delta comes any more, so no snapshot either
	var snapped string
	testutil.Eventually(t, 10*time.Second, func() error {
		stored, err := store.Events(context.Background(), r.Key, session.EventQuery{InvocationID: r.InvocationID, Types: []string{session.TypeAssistantStreamSnapshot}})
		if err != nil {
			return err
		}
		if len(stored) == 0 {
			return errors.New("no snapshot yet")
		}
		d, _ := session.DataOf[session.AssistantStreamSnapshotData](stored[len(stored)-1])
		snapped = d.Text
		return nil
	})
	if !strings.HasPrefix("w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ", snapped) || snapped == "" {
		t.Fatalf("snapshot %q", snapped)
	}

	// A new host on the same store: the first one's run is an orphan to it.
	restarted := slowRuntime(t, &slowAgent{}, store, 0)
	if err := restarted.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	stored, err := store.Events(context.Background(), r.Key, session.EventQuery{InvocationID: r.InvocationID})
	if err != nil {
		t.Fatal(err)
	}
	msgs := ofType(stored, session.TypeAssistantMessage)
	if len(msgs) != 1 {
		t.Fatalf("the orphaned run has %d messages: %+v", len(msgs), stored)
	}
	kept, _ := session.DataOf[session.AssistantMessageData](msgs[0])
	st, _ := session.DataOf[session.RunStatusData](stored[len(stored)-1])
	if kept.Text != snapped || st.Status != session.StatusInterrupted {
		t.Fatalf("kept %q (snapshot %q), status %q", kept.Text, snapped, st.Status)
	}
}

// The journal keeps a stream snapshot in a lighter form than the stored event, and hands
// back the stored event itself: every reader of the journal (a follower from the start,
// one reconnecting by index, a reader of the finished run) sees each snapshot exactly as
// the store has it, data bytes included.
func TestJournaledSnapshotsAreTheStoredEvents(t *testing.T) {
	store := memory.New()
	rt := slowRuntime(t, &slowAgent{n: 20, pause: 3 * time.Millisecond}, store, 10*time.Millisecond)
	r, err := rt.Start(context.Background(), host.TurnRequest{App: "slow", Input: text("go")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var followed []host.Event
	for sub := r.Subscribe(0); ; {
		ev, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		followed = append(followed, ev)
	}
	whole, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.Events(ctx, r.Key, session.EventQuery{InvocationID: r.InvocationID, Types: []string{session.TypeAssistantStreamSnapshot}})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) == 0 {
		t.Fatal("no snapshot stored")
	}
	snapshots := func(evs []host.Event) (out []session.Event, first int) {
		first = -1
		for _, e := range evs {
			if e.Kind == host.KindStored && e.Stored.Type == session.TypeAssistantStreamSnapshot {
				if first < 0 {
					first = e.Index
				}
				out = append(out, *e.Stored)
			}
			if e.Kind != host.KindStored && e.Stored != nil {
				t.Fatalf("a %v event carries a stored event", e.Kind)
			}
		}
		return out, first
	}
	got, first := snapshots(followed)
	var again []host.Event
	for sub := r.Subscribe(first); ; {
		ev, err := sub.Next(ctx)
		if err != nil {
			break
		}
		again = append(again, ev)
	}
	rejoined, _ := snapshots(again)
	read, _ := snapshots(whole)
	for name, evs := range map[string][]session.Event{"followed": got, "rejoined": rejoined, "read whole": read} {
		if !reflect.DeepEqual(evs, stored) {
			t.Errorf("%s: journaled snapshots differ from the stored ones:\n%+v\n%+v", name, evs, stored)
		}
	}
}
