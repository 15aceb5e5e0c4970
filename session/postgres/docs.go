package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
)

// putDocTries bounds PutDoc's retries when a concurrent put took the same version.
const putDocTries = 5

// PutDoc stores d as the next version of its key: the version is computed in the insert
// itself; a concurrent put of the same key that took it first makes this one retry.
func (s *Store) PutDoc(ctx context.Context, d session.Doc) (int64, error) {
	if err := session.ValidDocKey(d.Key); err != nil {
		return 0, err
	}
	if err := session.ValidDocMeta(d.Meta); err != nil {
		return 0, err
	}
	k := d.Key
	for try := 1; ; try++ {
		var version int64
		err := s.pool.QueryRow(ctx, `INSERT INTO docs (app_id, user_id, session_id, kind, name, version,
				mime_type, data, meta, created_at)
			SELECT $1, $2, $3, $4, $5, coalesce(max(version) + 1, 0), $6, $7, $8, $9 FROM docs
			WHERE app_id = $1 AND user_id = $2 AND session_id = $3 AND kind = $4 AND name = $5
			RETURNING version`,
			esc(k.App), esc(k.User), esc(k.Session), esc(k.Kind), esc(k.Name), esc(d.MimeType), blob(d.Data),
			nullableJSON(d.Meta), ns(s.clock.Now())).Scan(&version)
		if code, _ := pgCode(err); code == "23505" && try < putDocTries {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("put %s %q: %w", k.Kind, k.Name, err)
		}
		return version, nil
	}
}

const docKeyWhere = `app_id = $1 AND user_id = $2 AND session_id = $3 AND kind = $4`

// GetDoc returns one version of a document, the latest when version < 0.
func (s *Store) GetDoc(ctx context.Context, key session.DocKey, version int64) (session.Doc, error) {
	if err := session.ValidDocKey(key); err != nil {
		return session.Doc{}, err
	}
	q := `SELECT version, mime_type, data, meta, created_at FROM docs WHERE ` + docKeyWhere + ` AND name = $5`
	args := []any{esc(key.App), esc(key.User), esc(key.Session), esc(key.Kind), esc(key.Name)}
	if version >= 0 {
		q += ` AND version = $6`
		args = append(args, version)
	} else {
		q += ` ORDER BY version DESC LIMIT 1`
	}
	d := session.Doc{Key: key}
	var meta *string
	var created int64
	err := s.pool.QueryRow(ctx, q, args...).Scan(&d.Version, &d.MimeType, &d.Data, &meta, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Doc{}, session.DocNotFound(key, version)
	}
	if err != nil {
		return session.Doc{}, fmt.Errorf("get %s %q: %w", key.Kind, key.Name, err)
	}
	d.MimeType = unesc(d.MimeType)
	if meta != nil {
		d.Meta = []byte(*meta)
	}
	d.CreatedAt = fromNS(created)
	return d, nil
}

// DocNames lists the names of the kind's documents in one scope.
func (s *Store) DocNames(ctx context.Context, app, user, sess, kind string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT name FROM docs WHERE `+docKeyWhere+` GROUP BY name ORDER BY name COLLATE "C"`,
		esc(app), esc(user), esc(sess), esc(kind))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	for i, n := range names {
		names[i] = unesc(n)
	}
	if names == nil {
		names = []string{}
	}
	return names, nil
}

// DocVersions lists a document's versions without their data.
func (s *Store) DocVersions(ctx context.Context, key session.DocKey) ([]session.Doc, error) {
	if err := session.ValidDocKey(key); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT version, mime_type, meta, created_at FROM docs
		WHERE `+docKeyWhere+` AND name = $5 ORDER BY version`,
		esc(key.App), esc(key.User), esc(key.Session), esc(key.Kind), esc(key.Name))
	if err != nil {
		return nil, fmt.Errorf("list versions of %s %q: %w", key.Kind, key.Name, err)
	}
	var out []session.Doc
	for rows.Next() {
		d := session.Doc{Key: key}
		var meta *string
		var created int64
		if err := rows.Scan(&d.Version, &d.MimeType, &meta, &created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list versions of %s %q: %w", key.Kind, key.Name, err)
		}
		d.MimeType = unesc(d.MimeType)
		if meta != nil {
			d.Meta = []byte(*meta)
		}
		d.CreatedAt = fromNS(created)
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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
	tag, err := s.pool.Exec(ctx, `DELETE FROM docs WHERE `+docKeyWhere+` AND name = $5`,
		esc(key.App), esc(key.User), esc(key.Session), esc(key.Kind), esc(key.Name))
	if err != nil {
		return fmt.Errorf("delete %s %q: %w", key.Kind, key.Name, err)
	}
	if tag.RowsAffected() == 0 {
		return session.DocNotFound(key, -1)
	}
	return nil
}
