package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentengine/agentengine/session"
)

// PutDoc stores d as the next version of its key, in the writer's transaction.
func (s *Store) PutDoc(ctx context.Context, d session.Doc) (int64, error) {
	if err := session.ValidDocKey(d.Key); err != nil {
		return 0, err
	}
	if err := session.ValidDocMeta(d.Meta); err != nil {
		return 0, err
	}
	k := d.Key
	var version int64
	err := s.write(ctx, len(d.Data)+len(d.Meta)+len(k.Name), func(t *wtx, now time.Time) error {
		st := t.w.st
		var last sql.NullInt64
		if err := st.lastDocVersion.QueryRow(k.App, k.User, k.Session, k.Kind, k.Name).Scan(&last); err != nil {
			return fmt.Errorf("put %s %q: %w", k.Kind, k.Name, err)
		}
		version = 0
		if last.Valid {
			version = last.Int64 + 1
		}
		if _, err := st.insertDoc.Exec(k.App, k.User, k.Session, k.Kind, k.Name, version, d.MimeType,
			blob(d.Data), nullableJSON(d.Meta), ns(now)); err != nil {
			return fmt.Errorf("put %s %q: %w", k.Kind, k.Name, err)
		}
		return nil
	})
	return version, err
}

const docScopeWhere = `app_id = ? AND user_id = ? AND session_id = ? AND kind = ?`

// GetDoc returns one version of a document, the latest when version < 0.
func (s *Store) GetDoc(ctx context.Context, key session.DocKey, version int64) (session.Doc, error) {
	if err := session.ValidDocKey(key); err != nil {
		return session.Doc{}, err
	}
	q := `SELECT version, mime_type, data, meta, created_at FROM docs WHERE ` + docScopeWhere + ` AND name = ?`
	args := []any{key.App, key.User, key.Session, key.Kind, key.Name}
	if version >= 0 {
		q += ` AND version = ?`
		args = append(args, version)
	} else {
		q += ` ORDER BY version DESC LIMIT 1`
	}
	d := session.Doc{Key: key}
	var meta sql.NullString
	var created int64
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&d.Version, &d.MimeType, &d.Data, &meta, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return session.Doc{}, session.DocNotFound(key, version)
	}
	if err != nil {
		return session.Doc{}, fmt.Errorf("get %s %q: %w", key.Kind, key.Name, err)
	}
	if meta.Valid {
		d.Meta = []byte(meta.String)
	}
	d.CreatedAt = fromNS(created)
	return d, nil
}

// DocNames lists the names of the kind's documents in one scope.
func (s *Store) DocNames(ctx context.Context, app, user, sess, kind string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT name FROM docs WHERE `+docScopeWhere+` ORDER BY name`,
		app, user, sess, kind)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	out := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list %s: %w", kind, err)
		}
		out = append(out, n)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	return out, nil
}

// DocVersions lists a document's versions without their data.
func (s *Store) DocVersions(ctx context.Context, key session.DocKey) ([]session.Doc, error) {
	if err := session.ValidDocKey(key); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT version, mime_type, meta, created_at FROM docs
		WHERE `+docScopeWhere+` AND name = ? ORDER BY version`, key.App, key.User, key.Session, key.Kind, key.Name)
	if err != nil {
		return nil, fmt.Errorf("list versions of %s %q: %w", key.Kind, key.Name, err)
	}
	var out []session.Doc
	for rows.Next() {
		d := session.Doc{Key: key}
		var meta sql.NullString
		var created int64
		if err := rows.Scan(&d.Version, &d.MimeType, &meta, &created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list versions of %s %q: %w", key.Kind, key.Name, err)
		}
		if meta.Valid {
			d.Meta = []byte(meta.String)
		}
		d.CreatedAt = fromNS(created)
		out = append(out, d)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("list versions of %s %q: %w", key.Kind, key.Name, err)
	}
	if len(out) == 0 {
		return nil, session.DocNotFound(key, -1)
	}
	return out, nil
}

// DeleteDoc removes every version of a document.
func (s *Store) DeleteDoc(ctx context.Context, key session.DocKey) error {
	if err := session.ValidDocKey(key); err != nil {
		return err
	}
	return s.write(ctx, len(key.Name), func(t *wtx, _ time.Time) error {
		res, err := t.w.st.deleteDoc.Exec(key.App, key.User, key.Session, key.Kind, key.Name)
		if err != nil {
			return fmt.Errorf("delete %s %q: %w", key.Kind, key.Name, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return session.DocNotFound(key, -1)
		}
		return nil
	})
}
