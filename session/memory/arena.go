package memory

import (
	"slices"
	"strings"
	"unsafe"
)

// The memory store keeps every session it is given, and every collection marks each
// object a kept session points at. Marking a small object costs a lookup of its span,
// nearly always a cache miss once there are hundreds of thousands of them: at that
// scale it was a third of the host's CPU. So what a session keeps lives in few objects:
// its record in a slab of records, its ids and other strings that never change in an
// arena of chunks, its events packed into one byte array. Pointers into a chunk or a
// slab all find the same span.

// arena holds strings and small byte values that are never changed once stored
// (session keys, run and item ids, first prompts, run meta), packed into chunks.
// The price of the packing: a deleted session's values stay until the store goes
// (about a hundred bytes a session; its events, the bulk, are freed).
type arena struct {
	free []byte // the current chunk's unused tail
}

const (
	arenaChunk = 64 << 10
	// arenaMax is the longest value the arena packs; a longer one gets an allocation
	// of its own, so a chunk wastes little at its end.
	arenaMax = 512
)

// alloc returns n bytes of the arena, for the caller to fill once.
func (a *arena) alloc(n int) []byte {
	if n > cap(a.free) {
		a.free = make([]byte, arenaChunk)
	}
	b := a.free[:n:n]
	a.free = a.free[n:]
	return b
}

// str returns a copy of s in the arena.
func (a *arena) str(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > arenaMax:
		return strings.Clone(s)
	}
	b := a.alloc(len(s))
	copy(b, s)
	// The bytes are written once, here, before the string exists; nothing writes them
	// again, as a string's bytes must not change.
	return unsafe.String(unsafe.SliceData(b), len(b)) //nolint:gosec // G103: see above
}

// bytes returns a copy of b in the arena (nil stays nil). Callers never write it: the
// store hands out copies.
func (a *arena) bytes(b []byte) []byte {
	switch {
	case len(b) == 0:
		return b
	case len(b) > arenaMax:
		return slices.Clone(b)
	}
	out := a.alloc(len(b))
	copy(out, b)
	return out
}

// recSlab allocates session records a chunk at a time and reuses deleted ones.
type recSlab struct {
	chunk []sessionRec // the current chunk; a record is handed out by growing its length
	free  []*sessionRec
}

// recSlabChunk is how many records a chunk holds: enough that a chunk is a large object
// of its own span.
const recSlabChunk = 256

func (s *recSlab) get() *sessionRec {
	if n := len(s.free); n > 0 {
		rec := s.free[n-1]
		s.free = s.free[:n-1]
		return rec
	}
	if len(s.chunk) == cap(s.chunk) {
		// A new chunk, never an append that would move the records handed out.
		s.chunk = make([]sessionRec, 0, recSlabChunk)
	}
	s.chunk = s.chunk[:len(s.chunk)+1]
	return &s.chunk[len(s.chunk)-1]
}

// put takes back a record nothing refers to any more.
func (s *recSlab) put(rec *sessionRec) {
	*rec = sessionRec{}
	s.free = append(s.free, rec)
}
