package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// saveCheckpoints applies a run's checkpoint save (session.CheckpointSave's rules) in the
// running write transaction.
func (t *wtx) saveCheckpoints(c *crow, save *session.CheckpointSave) error {
	if save.Empty() {
		return nil
	}
	st := t.w.st
	for _, th := range save.DeletedThreads {
		if err := t.dropCheckpointThread(c, th); err != nil {
			return err
		}
	}
	for _, cp := range save.Checkpoints {
		if _, err := st.dropStaleWrites.Exec(c.pk, cp.ThreadID, cp.Namespace, cp.ID); err != nil {
			return fmt.Errorf("save checkpoint: %w", err)
		}
		if _, err := st.upsertCheckpoint.Exec(c.pk, cp.ThreadID, cp.Namespace, cp.ID, cp.ParentID, blob(cp.Data)); err != nil {
			return fmt.Errorf("save checkpoint: %w", err)
		}
	}
	for _, w := range save.Writes {
		var id string
		err := st.checkpointID.QueryRow(c.pk, w.ThreadID, w.Namespace).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && id != w.CheckpointID) {
			continue // a write to a checkpoint that is not kept
		}
		if err != nil {
			return fmt.Errorf("save checkpoint write: %w", err)
		}
		if _, err := st.upsertWrite.Exec(c.pk, w.ThreadID, w.Namespace, w.CheckpointID, w.TaskID, w.Index,
			w.Channel, w.TaskPath, blob(w.Data)); err != nil {
			return fmt.Errorf("save checkpoint write: %w", err)
		}
	}
	if len(save.Checkpoints) == 0 && len(save.Writes) == 0 {
		return nil
	}
	rows, err := st.checkpointThreads.Query(c.pk)
	if err != nil {
		return fmt.Errorf("list checkpoint threads: %w", err)
	}
	var stale []string
	touched := save.Threads()
	for rows.Next() {
		var th string
		if err := rows.Scan(&th); err != nil {
			rows.Close()
			return fmt.Errorf("list checkpoint threads: %w", err)
		}
		if !touched[th] {
			stale = append(stale, th)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("list checkpoint threads: %w", err)
	}
	for _, th := range stale {
		if err := t.dropCheckpointThread(c, th); err != nil {
			return err
		}
	}
	return nil
}

func (t *wtx) dropCheckpointThread(c *crow, thread string) error {
	if _, err := t.w.st.dropThread.Exec(c.pk, thread); err != nil {
		return fmt.Errorf("drop checkpoints of thread %q: %w", thread, err)
	}
	if _, err := t.w.st.dropThreadWrites.Exec(c.pk, thread); err != nil {
		return fmt.Errorf("drop checkpoints of thread %q: %w", thread, err)
	}
	return nil
}

// blob keeps an empty value a zero-length BLOB rather than NULL (the columns are NOT NULL).
func blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Checkpoints returns the session's saved runner checkpoints with their writes.
func (s *Store) Checkpoints(ctx context.Context, key session.Key) ([]session.Checkpoint, error) {
	if err := core.ValidKey(key); err != nil {
		return nil, err
	}
	if err := s.wr.settle(ctx, &key); err != nil {
		return nil, err
	}
	var out []session.Checkpoint
	err := s.read(ctx, func(tx *sql.Tx) error {
		var pk int64
		err := tx.QueryRowContext(ctx, `SELECT pk FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?`,
			key.App, key.User, key.ID).Scan(&pk)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT thread_id, namespace, checkpoint_id, parent_id, data
			FROM checkpoints WHERE session_pk = ? ORDER BY thread_id, namespace`, pk)
		if err != nil {
			return err
		}
		out = []session.Checkpoint{}
		for rows.Next() {
			var cp session.Checkpoint
			if err := rows.Scan(&cp.ThreadID, &cp.Namespace, &cp.ID, &cp.ParentID, &cp.Data); err != nil {
				rows.Close()
				return err
			}
			out = append(out, cp)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil || len(out) == 0 {
			return err
		}
		// Only the writes of the kept checkpoints: stale ones are deleted on save.
		rows, err = tx.QueryContext(ctx, `SELECT w.thread_id, w.namespace, w.checkpoint_id, w.task_id, w.idx,
			w.channel, w.task_path, w.data FROM checkpoint_writes w JOIN checkpoints c
			ON c.session_pk = w.session_pk AND c.thread_id = w.thread_id AND c.namespace = w.namespace
			AND c.checkpoint_id = w.checkpoint_id
			WHERE w.session_pk = ? ORDER BY w.thread_id, w.namespace, w.task_id, w.idx`, pk)
		if err != nil {
			return err
		}
		defer rows.Close()
		at := make(map[[2]string]int, len(out))
		for i, cp := range out {
			at[[2]string{cp.ThreadID, cp.Namespace}] = i
		}
		for rows.Next() {
			var w session.CheckpointWrite
			if err := rows.Scan(&w.ThreadID, &w.Namespace, &w.CheckpointID, &w.TaskID, &w.Index, &w.Channel, &w.TaskPath, &w.Data); err != nil {
				return err
			}
			i := at[[2]string{w.ThreadID, w.Namespace}]
			out[i].Writes = append(out[i].Writes, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("load checkpoints: %w", err)
	}
	return out, nil
}
