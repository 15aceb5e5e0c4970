package memory

import "slices"

// The memory store keeps every session it is given, and a collection follows every
// pointer it holds: its per-session indexes avoid an allocation (a map, a slice) per
// entry where one value does.

// itemRefs are where an item id was stored, oldest first, in any session: nearly always
// once (ids the runtime makes are unique), which needs no slice.
type itemRefs struct {
	first itemRef
	more  []itemRef
}

func (r itemRefs) add(ref itemRef) itemRefs {
	r.more = append(r.more, ref)
	return r
}

// newest returns the most recent ref that match accepts.
func (r itemRefs) newest(match func(itemRef) bool) (itemRef, bool) {
	for i := len(r.more) - 1; i >= 0; i-- {
		if match(r.more[i]) {
			return r.more[i], true
		}
	}
	return r.first, match(r.first)
}

// without drops the refs into rec; ok is false when none is left.
func (r itemRefs) without(rec *sessionRec) (itemRefs, bool) {
	all := slices.DeleteFunc(append([]itemRef{r.first}, r.more...), func(ref itemRef) bool { return ref.rec == rec })
	if len(all) == 0 {
		return itemRefs{}, false
	}
	return itemRefs{first: all[0], more: all[1:]}, true
}

// runIndex is a session's runs by invocation id: the first in the index itself (most
// sessions have one run), the later ones in a slice, searched newest first (a run's own
// lookups are of the newest); a map as well once there are many.
type runIndex struct {
	first runRec // set when n > 0
	more  []*runRec
	byID  map[string]*runRec
}

// runIndexMapAt is how many runs a session has before its index adds a map.
const runIndexMapAt = 16

func (x *runIndex) len() int {
	if x.first.run.InvocationID == "" {
		return 0
	}
	return 1 + len(x.more)
}

// at returns run i, oldest first.
func (x *runIndex) at(i int) *runRec {
	if i == 0 {
		return &x.first
	}
	return x.more[i-1]
}

func (x *runIndex) get(id string) (*runRec, bool) {
	if x.byID != nil {
		r, ok := x.byID[id]
		return r, ok
	}
	for i := x.len() - 1; i >= 0; i-- {
		if r := x.at(i); r.run.InvocationID == id {
			return r, true
		}
	}
	return nil, false
}

// add records r (its invocation id is not empty) and returns where it is kept.
func (x *runIndex) add(r runRec) *runRec {
	kept := &x.first
	if x.len() == 0 {
		x.first = r
	} else {
		kept = &r
		x.more = append(x.more, kept)
	}
	switch {
	case x.byID != nil:
		x.byID[r.run.InvocationID] = kept
	case x.len() > runIndexMapAt:
		x.byID = make(map[string]*runRec, 2*x.len())
		for i := range x.len() {
			x.byID[x.at(i).run.InvocationID] = x.at(i)
		}
	}
	return kept
}
