package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// queueCheckpoints queues a run's checkpoint save (session.CheckpointSave's rules) on the
// batch of the transaction that stores its event.
func queueCheckpoints(b *pgx.Batch, pk int64, save *session.CheckpointSave) {
	if save.Empty() {
		return
	}
	if len(save.DeletedThreads) > 0 {
		b.Queue(`DELETE FROM checkpoints WHERE session_pk = $1 AND thread_id = ANY($2::text[])`, pk, save.DeletedThreads)
		b.Queue(`DELETE FROM checkpoint_writes WHERE session_pk = $1 AND thread_id = ANY($2::text[])`, pk, save.DeletedThreads)
	}
	for _, cp := range save.Checkpoints {
		b.Queue(`DELETE FROM checkpoint_writes WHERE session_pk = $1 AND thread_id = $2 AND namespace = $3
			AND checkpoint_id <> $4`, pk, cp.ThreadID, cp.Namespace, cp.ID)
		b.Queue(`INSERT INTO checkpoints (session_pk, thread_id, namespace, checkpoint_id, parent_id, data)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (session_pk, thread_id, namespace) DO UPDATE
			SET checkpoint_id = excluded.checkpoint_id, parent_id = excluded.parent_id, data = excluded.data`,
			pk, cp.ThreadID, cp.Namespace, cp.ID, cp.ParentID, blob(cp.Data))
	}
	for _, w := range save.Writes {
		// Kept only when its checkpoint is the stored one of its thread and namespace.
		b.Queue(`INSERT INTO checkpoint_writes (session_pk, thread_id, namespace, checkpoint_id, task_id, idx,
				channel, task_path, data)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM checkpoints
				WHERE session_pk = $1 AND thread_id = $2 AND namespace = $3 AND checkpoint_id = $4)
			ON CONFLICT (session_pk, thread_id, namespace, checkpoint_id, task_id, idx) DO UPDATE
			SET channel = excluded.channel, task_path = excluded.task_path, data = excluded.data`,
			pk, w.ThreadID, w.Namespace, w.CheckpointID, w.TaskID, w.Index, w.Channel, w.TaskPath, blob(w.Data))
	}
	if len(save.Checkpoints) == 0 && len(save.Writes) == 0 {
		return // a save that only deletes leaves the other threads alone
	}
	touched := make([]string, 0, len(save.Threads()))
	for th := range save.Threads() {
		touched = append(touched, th)
	}
	b.Queue(`DELETE FROM checkpoints WHERE session_pk = $1 AND NOT (thread_id = ANY($2::text[]))`, pk, touched)
	b.Queue(`DELETE FROM checkpoint_writes WHERE session_pk = $1 AND NOT (thread_id = ANY($2::text[]))`, pk, touched)
}

// blob keeps an empty value a zero-length bytea rather than NULL (the columns are NOT NULL).
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
	if err := s.settle(ctx, key); err != nil {
		return nil, err
	}
	var out []session.Checkpoint
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		r, err := lookup(ctx, tx, key, false)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT thread_id, namespace, checkpoint_id, parent_id, data
			FROM checkpoints WHERE session_pk = $1 ORDER BY thread_id COLLATE "C", namespace COLLATE "C"`, r.pk)
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
		rows.Close()
		if err := rows.Err(); err != nil || len(out) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT w.thread_id, w.namespace, w.checkpoint_id, w.task_id, w.idx,
			w.channel, w.task_path, w.data FROM checkpoint_writes w JOIN checkpoints c
			ON c.session_pk = w.session_pk AND c.thread_id = w.thread_id AND c.namespace = w.namespace
			AND c.checkpoint_id = w.checkpoint_id
			WHERE w.session_pk = $1 ORDER BY w.thread_id, w.namespace, w.task_id COLLATE "C", w.idx`, r.pk)
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
		if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalid) {
			return nil, err
		}
		return nil, fmt.Errorf("load checkpoints: %w", err)
	}
	return out, nil
}
