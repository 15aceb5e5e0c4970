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

// runIndex is a session's runs by invocation id: a few in a slice, searched newest
// first (a run's own lookups are of the newest); a map as well once there are many.
type runIndex struct {
	list []*runRec
	byID map[string]*runRec
}

// runIndexMapAt is how many runs a session has before its index adds a map.
const runIndexMapAt = 16

func (x *runIndex) get(id string) (*runRec, bool) {
	if x.byID != nil {
		r, ok := x.byID[id]
		return r, ok
	}
	for i := len(x.list) - 1; i >= 0; i-- {
		if x.list[i].run.InvocationID == id {
			return x.list[i], true
		}
	}
	return nil, false
}

func (x *runIndex) add(r *runRec) {
	x.list = append(x.list, r)
	switch {
	case x.byID != nil:
		x.byID[r.run.InvocationID] = r
	case len(x.list) > runIndexMapAt:
		x.byID = make(map[string]*runRec, 2*len(x.list))
		for _, r := range x.list {
			x.byID[r.run.InvocationID] = r
		}
	}
}
