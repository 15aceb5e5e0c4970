package host

import (
	"slices"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// checkpointBuffer collects a run's checkpoint events; they are saved with the run's
// terminal event. Of each thread and namespace only the latest checkpoint is kept.
type checkpointBuffer struct {
	latest map[[2]string]session.Checkpoint
	order  [][2]string
	writes map[writeKey]session.CheckpointWrite
	worder []writeKey
	// deleted threads the runner is done with (unless it saved them again afterwards).
	deleted []string
}

type writeKey struct {
	thread, ns, checkpoint, task string
	index                        int64
}

func (b *checkpointBuffer) checkpoint(c *runnerv1.Checkpoint) {
	if b.latest == nil {
		b.latest = map[[2]string]session.Checkpoint{}
	}
	k := [2]string{c.ThreadId, c.Namespace}
	b.deleted = slices.DeleteFunc(b.deleted, func(t string) bool { return t == c.ThreadId })
	if _, ok := b.latest[k]; !ok {
		b.order = append(b.order, k)
	}
	b.latest[k] = session.Checkpoint{ThreadID: c.ThreadId, Namespace: c.Namespace, ID: c.CheckpointId, ParentID: c.ParentId, Data: c.Data}
}

func (b *checkpointBuffer) write(w *runnerv1.CheckpointWrite) {
	if b.writes == nil {
		b.writes = map[writeKey]session.CheckpointWrite{}
	}
	b.deleted = slices.DeleteFunc(b.deleted, func(t string) bool { return t == w.ThreadId })
	k := writeKey{w.ThreadId, w.Namespace, w.CheckpointId, w.TaskId, w.Index}
	if _, ok := b.writes[k]; !ok {
		b.worder = append(b.worder, k)
	}
	b.writes[k] = session.CheckpointWrite{ThreadID: w.ThreadId, Namespace: w.Namespace, CheckpointID: w.CheckpointId,
		TaskID: w.TaskId, Index: w.Index, Channel: w.Channel, TaskPath: w.TaskPath, Data: w.Data}
}

// drop forgets what the run saved of a thread the runner is done with, and deletes it.
func (b *checkpointBuffer) drop(thread string) {
	b.order = slices.DeleteFunc(b.order, func(k [2]string) bool {
		if k[0] == thread {
			delete(b.latest, k)
			return true
		}
		return false
	})
	b.worder = slices.DeleteFunc(b.worder, func(k writeKey) bool {
		if k.thread == thread {
			delete(b.writes, k)
			return true
		}
		return false
	})
	if !slices.Contains(b.deleted, thread) {
		b.deleted = append(b.deleted, thread)
	}
}

// save is what to store, or nil: writes to checkpoints this run replaced are left out.
func (b *checkpointBuffer) save() *session.CheckpointSave {
	if len(b.order) == 0 && len(b.worder) == 0 && len(b.deleted) == 0 {
		return nil
	}
	s := &session.CheckpointSave{DeletedThreads: b.deleted}
	for _, k := range b.order {
		s.Checkpoints = append(s.Checkpoints, b.latest[k])
	}
	for _, k := range b.worder {
		if c, ok := b.latest[[2]string{k.thread, k.ns}]; ok && c.ID != k.checkpoint {
			continue
		}
		s.Writes = append(s.Writes, b.writes[k])
	}
	return s
}
