package memory

import (
	"fmt"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func TestRunIndex(t *testing.T) {
	var x runIndex
	for i := range 3 * runIndexMapAt {
		x.add(&runRec{run: session.Run{InvocationID: fmt.Sprint("inv", i)}, order: int64(i)})
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
	if x.byID == nil || len(x.list) != 3*runIndexMapAt {
		t.Errorf("list %d, map %v", len(x.list), x.byID != nil)
	}
}

func TestItemRefs(t *testing.T) {
	r := itemRefs{first: itemRef{"a", 1}}
	if r.last() != (itemRef{"a", 1}) {
		t.Errorf("last %v", r.last())
	}
	r = r.add(itemRef{"b", 2}).add(itemRef{"a", 3})
	if r.last() != (itemRef{"a", 3}) {
		t.Errorf("last %v", r.last())
	}
	left, ok := r.without("a")
	if !ok || left.last() != (itemRef{"b", 2}) || len(left.more) != 0 {
		t.Errorf("without a: %+v, %v", left, ok)
	}
	if _, ok := left.without("b"); ok {
		t.Error("refs left after removing the last session")
	}
}
