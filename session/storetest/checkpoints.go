package storetest

import (
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func cp(thread, ns, id, data string) session.Checkpoint {
	return session.Checkpoint{ThreadID: thread, Namespace: ns, ID: id, ParentID: "p-" + id, Data: []byte(data)}
}

func cw(thread, ns, id, task string, idx int64, data string) session.CheckpointWrite {
	return session.CheckpointWrite{ThreadID: thread, Namespace: ns, CheckpointID: id, TaskID: task, Index: idx,
		Channel: "ch-" + task, TaskPath: "path", Data: []byte(data)}
}

func withCheckpoints(e session.NewEvent, cps []session.Checkpoint, ws ...session.CheckpointWrite) session.NewEvent {
	e.Checkpoints = &session.CheckpointSave{Checkpoints: cps, Writes: ws}
	return e
}

func mustCheckpoints(t *testing.T, st session.Store, k session.Key) []session.Checkpoint {
	t.Helper()
	got, err := st.Checkpoints(ctxOf(t), k)
	if err != nil {
		t.Fatalf("Checkpoints(%+v): %v", k, err)
	}
	return got
}

// testCheckpoints: the latest checkpoint of each thread and namespace is kept with its
// writes; a newer one replaces it and drops its writes; threads a save does not touch go.
func testCheckpoints(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	other := key("app", "u2", "s")
	mustCreate(t, st, k)
	mustCreate(t, st, other)
	if got := mustCheckpoints(t, st, k); len(got) != 0 {
		t.Fatalf("new session has checkpoints %+v", got)
	}

	// A run saves two steps of the root namespace and one of a subgraph, with writes.
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv1"}, userMsg("q"), runStatus("", session.StatusInProgress)); err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	save := withCheckpoints(runStatus("", session.StatusInterrupted),
		[]session.Checkpoint{cp("t1", "", "c1", "one"), cp("t1", "", "c2", "two"), cp("t1", "sub:1", "s1", "sub")},
		cw("t1", "", "c1", "task", 0, "stale"),      // to a replaced checkpoint: dropped
		cw("t1", "", "c2", "task", 1, "first"),      // kept
		cw("t1", "", "c2", "task", 1, "replaced"),   // same task and index: replaces
		cw("t1", "", "c2", "interrupt", -3, "ask"),  // negative indexes are LangGraph's special writes
		cw("t1", "sub:1", "s1", "subtask", 0, "sw"), // the subgraph's
		cw("t1", "missing", "x", "task", 0, "lost"), // no such checkpoint: dropped
	)
	if _, err := st.FinishRun(ctx, k, "inv1", session.StatusInterrupted, save); err != nil {
		t.Fatalf("FinishRun with checkpoints: %v", err)
	}
	root := cp("t1", "", "c2", "two")
	root.Writes = []session.CheckpointWrite{cw("t1", "", "c2", "interrupt", -3, "ask"), cw("t1", "", "c2", "task", 1, "replaced")}
	sub := cp("t1", "sub:1", "s1", "sub")
	sub.Writes = []session.CheckpointWrite{cw("t1", "sub:1", "s1", "subtask", 0, "sw")}
	want := []session.Checkpoint{root, sub}
	if got := mustCheckpoints(t, st, k); !reflect.DeepEqual(got, want) {
		t.Errorf("after the first run:\n got  %+v\n want %+v", got, want)
	}
	if got := mustCheckpoints(t, st, other); len(got) != 0 {
		t.Errorf("another user's session sees %+v", got)
	}

	// Returned data is a copy.
	got := mustCheckpoints(t, st, k)
	got[0].Data[0] = 'X'
	got[0].Writes[0].Data[0] = 'X'
	if again := mustCheckpoints(t, st, k); !reflect.DeepEqual(again, want) {
		t.Errorf("changing returned checkpoints changed the store: %+v", again)
	}

	// A write to the kept checkpoint alone (a resumed run that failed at once) keeps it.
	mustAppend(t, st, k, withCheckpoints(assistantMsg("a"), nil, cw("t1", "", "c2", "task", 2, "more")))
	root.Writes = append(root.Writes, cw("t1", "", "c2", "task", 2, "more"))
	if got := mustCheckpoints(t, st, k); !reflect.DeepEqual(got, []session.Checkpoint{root, sub}) {
		t.Errorf("after a write alone: %+v", got)
	}

	// A newer root checkpoint drops the old one's writes; the untouched namespace stays.
	mustAppend(t, st, k, withCheckpoints(assistantMsg("b"), []session.Checkpoint{cp("t1", "", "c3", "three")}))
	if got := mustCheckpoints(t, st, k); !reflect.DeepEqual(got, []session.Checkpoint{cp("t1", "", "c3", "three"), sub}) {
		t.Errorf("after a newer checkpoint: %+v", got)
	}

	// A run on another thread drops the first thread's checkpoints.
	mustAppend(t, st, k, withCheckpoints(assistantMsg("c"), []session.Checkpoint{cp("t2", "", "d1", "four")}))
	if got := mustCheckpoints(t, st, k); !reflect.DeepEqual(got, []session.Checkpoint{cp("t2", "", "d1", "four")}) {
		t.Errorf("after a run on another thread: %+v", got)
	}

	// A run that is done with its thread deletes it; nothing else is touched then.
	mustAppend(t, st, k, withCheckpoints(assistantMsg("d"), []session.Checkpoint{cp("t3", "", "e1", "five")}))
	del := assistantMsg("e")
	del.Checkpoints = &session.CheckpointSave{DeletedThreads: []string{"t3", "unknown"}}
	mustAppend(t, st, k, del)
	if got := mustCheckpoints(t, st, k); len(got) != 0 {
		t.Errorf("after deleting the only thread: %+v", got)
	}
	mustAppend(t, st, k, withCheckpoints(assistantMsg("f"), []session.Checkpoint{cp("t4", "", "f1", "six")}))
	keep := withCheckpoints(assistantMsg("g"), []session.Checkpoint{cp("t5", "", "g1", "seven")})
	keep.Checkpoints.DeletedThreads = []string{"t5"} // deleted, then saved again in the same run
	mustAppend(t, st, k, keep)
	if got := mustCheckpoints(t, st, k); !reflect.DeepEqual(got, []session.Checkpoint{cp("t5", "", "g1", "seven")}) {
		t.Errorf("after a save that deletes and saves again: %+v", got)
	}

	// A bad save stores nothing, not even the event.
	before := mustGet(t, st, k)
	_, err := st.Append(ctx, k, withCheckpoints(assistantMsg("d"), []session.Checkpoint{{ThreadID: "t3"}}))
	wantErr(t, "checkpoint without id", err, session.ErrInvalid)
	if after := mustGet(t, st, k); after.LastSeq != before.LastSeq {
		t.Errorf("rejected save appended events: last seq %d → %d", before.LastSeq, after.LastSeq)
	}

	// They go with the session.
	if err := st.DeleteSession(ctx, k); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, err = st.Checkpoints(ctx, k)
	wantErr(t, "checkpoints of a deleted session", err, session.ErrNotFound)
	mustCreate(t, st, k)
	if got := mustCheckpoints(t, st, k); len(got) != 0 {
		t.Errorf("a recreated session has its predecessor's checkpoints: %+v", got)
	}
}
