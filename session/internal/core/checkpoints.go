package core

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/agentengine/agentengine/session"
)

// PrepareCheckpoints validates a checkpoint save and copies it, so the caller may reuse
// its slices while the save waits for the writer.
func PrepareCheckpoints(c *session.CheckpointSave) (*session.CheckpointSave, error) {
	out := &session.CheckpointSave{
		Checkpoints:    make([]session.Checkpoint, len(c.Checkpoints)),
		Writes:         make([]session.CheckpointWrite, len(c.Writes)),
		DeletedThreads: slices.Clone(c.DeletedThreads),
	}
	for _, th := range c.DeletedThreads {
		if th == "" {
			return nil, fmt.Errorf("%w: a deleted checkpoint thread needs an id", session.ErrInvalid)
		}
	}
	for i, cp := range c.Checkpoints {
		if cp.ThreadID == "" || cp.ID == "" {
			return nil, fmt.Errorf("%w: checkpoint %d needs a thread id and an id", session.ErrInvalid, i)
		}
		cp.Data = slices.Clone(cp.Data)
		cp.Writes = nil
		out.Checkpoints[i] = cp
	}
	for i, w := range c.Writes {
		if w.ThreadID == "" || w.CheckpointID == "" || w.TaskID == "" {
			return nil, fmt.Errorf("%w: checkpoint write %d needs a thread, a checkpoint and a task id", session.ErrInvalid, i)
		}
		w.Data = slices.Clone(w.Data)
		out.Writes[i] = w
	}
	return out, nil
}

// CheckpointSize is the bytes a save carries, roughly, for bounding write batches.
func CheckpointSize(c *session.CheckpointSave) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, th := range c.DeletedThreads {
		n += 16 + len(th)
	}
	for _, cp := range c.Checkpoints {
		n += 64 + len(cp.ThreadID) + len(cp.Namespace) + len(cp.ID) + len(cp.ParentID) + len(cp.Data)
	}
	for _, w := range c.Writes {
		n += 64 + len(w.ThreadID) + len(w.Namespace) + len(w.CheckpointID) + len(w.TaskID) + len(w.Channel) + len(w.TaskPath) + len(w.Data)
	}
	return n
}

// Checkpoints is a session's saved checkpoints in memory: thread → namespace → the
// latest checkpoint with its writes. The zero value is empty.
type Checkpoints map[string]map[string]*session.Checkpoint

// Apply applies a prepared save with session.CheckpointSave's rules. The save's data is
// owned by the set afterwards.
func (cs *Checkpoints) Apply(save *session.CheckpointSave) {
	if save.Empty() {
		return
	}
	if *cs == nil {
		*cs = Checkpoints{}
	}
	m := *cs
	for _, th := range save.DeletedThreads {
		delete(m, th)
	}
	for _, cp := range save.Checkpoints {
		byNS := m[cp.ThreadID]
		if byNS == nil {
			byNS = map[string]*session.Checkpoint{}
			m[cp.ThreadID] = byNS
		}
		if old := byNS[cp.Namespace]; old != nil && old.ID == cp.ID {
			cp.Writes = old.Writes
		}
		c := cp
		byNS[cp.Namespace] = &c
	}
	for _, w := range save.Writes {
		cp := m[w.ThreadID][w.Namespace]
		if cp == nil || cp.ID != w.CheckpointID {
			continue
		}
		i := slices.IndexFunc(cp.Writes, func(o session.CheckpointWrite) bool { return o.TaskID == w.TaskID && o.Index == w.Index })
		if i >= 0 {
			cp.Writes[i] = w
		} else {
			cp.Writes = append(cp.Writes, w)
		}
	}
	if len(save.Checkpoints) == 0 && len(save.Writes) == 0 {
		return
	}
	touched := save.Threads()
	for thread := range m {
		if !touched[thread] {
			delete(m, thread)
		}
	}
}

// List returns copies of the saved checkpoints in the order Store.Checkpoints promises.
func (cs Checkpoints) List() []session.Checkpoint {
	out := []session.Checkpoint{}
	for _, byNS := range cs {
		for _, cp := range byNS {
			c := *cp
			c.Writes = slices.Clone(cp.Writes)
			SortWrites(c.Writes)
			out = append(out, c)
		}
	}
	SortCheckpoints(out)
	return out
}

// SortCheckpoints orders checkpoints by thread, then namespace.
func SortCheckpoints(cps []session.Checkpoint) {
	slices.SortFunc(cps, func(a, b session.Checkpoint) int {
		return cmp.Or(cmp.Compare(a.ThreadID, b.ThreadID), cmp.Compare(a.Namespace, b.Namespace))
	})
}

// SortWrites orders a checkpoint's writes by task, then index.
func SortWrites(ws []session.CheckpointWrite) {
	slices.SortFunc(ws, func(a, b session.CheckpointWrite) int {
		return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Index, b.Index))
	})
}
