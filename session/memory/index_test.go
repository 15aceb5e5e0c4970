package memory

import (
	"fmt"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func TestRunIndex(t *testing.T) {
	var x runIndex
	for i := range 3 * runIndexMapAt {
		kept := x.add(runRec{run: session.Run{InvocationID: fmt.Sprint("inv", i)}, order: int64(i)})
		if x.len() != i+1 || x.at(i) != kept {
			t.Fatalf("after %d runs: len %d, run %d kept apart from where add said", i+1, x.len(), i)
		}
		// Every run added so far is found, before and after the index adds its map.
		for j := 0; j <= i; j++ {
			if r, ok := x.get(fmt.Sprint("inv", j)); !ok || r.order != int64(j) {
				t.Fatalf("after %d runs: get(inv%d) = %v, %v", i+1, j, r, ok)
			}
		}
		if _, ok := x.get("missing"); ok {
			t.Fatal("found a run never added")
		}
	}
	if x.byID == nil || x.len() != 3*runIndexMapAt {
		t.Errorf("len %d, map %v", x.len(), x.byID != nil)
	}
}

func TestItemRefs(t *testing.T) {
	a, b := &sessionRec{}, &sessionRec{}
	all := func(itemRef) bool { return true }
	r := itemRefs{first: itemRef{a, 1}}
	if got, ok := r.newest(all); !ok || got != (itemRef{a, 1}) {
		t.Errorf("newest %v", got)
	}
	r = r.add(itemRef{b, 2}).add(itemRef{a, 3})
	if got, _ := r.newest(all); got != (itemRef{a, 3}) {
		t.Errorf("newest %v", got)
	}
	if got, ok := r.newest(func(ref itemRef) bool { return ref.rec == b }); !ok || got != (itemRef{b, 2}) {
		t.Errorf("newest of b %v, %v", got, ok)
	}
	left, ok := r.without(a)
	if got, _ := left.newest(all); !ok || got != (itemRef{b, 2}) || len(left.more) != 0 {
		t.Errorf("without a: %+v, %v", left, ok)
	}
	if _, ok := left.without(b); ok {
		t.Error("refs left after removing the last session")
	}
	if _, ok := (itemRefs{}).newest(func(ref itemRef) bool { return ref.rec != nil }); ok {
		t.Error("an absent item found")
	}
}
