package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// The frameworks' versioned documents (ADK artifacts, eval sets and results: see
// session.DocStore), for the surfaces that serve them. The key's app must be hosted;
// a missing document is an ErrNotFound ClientError and a malformed key an
// ErrInvalidInput one.

// docErr maps a store error about a document (version >= 0: one version of it).
func docErr(k session.DocKey, version int64, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrNotFound):
		return clientErr(ErrNotFound, "", "%s not found", session.DocLabel(k, version))
	case errors.Is(err, session.ErrInvalid):
		return clientErr(ErrInvalidInput, "", "invalid %s: %v", k.Kind, err)
	}
	return fmt.Errorf("%s: %w", session.DocLabel(k, version), err)
}

// PutDoc stores the next version of a document and returns its number.
func (rt *Runtime) PutDoc(ctx context.Context, d session.Doc) (int64, error) {
	if err := rt.knownApp(d.Key.App); err != nil {
		return 0, err
	}
	v, err := rt.store.PutDoc(ctx, d)
	return v, docErr(d.Key, -1, err)
}

// GetDoc returns one version of a document, the latest when version < 0.
func (rt *Runtime) GetDoc(ctx context.Context, key session.DocKey, version int64) (session.Doc, error) {
	if err := rt.knownApp(key.App); err != nil {
		return session.Doc{}, err
	}
	d, err := rt.store.GetDoc(ctx, key, version)
	return d, docErr(key, version, err)
}

// DocNames lists the names of a kind's documents in one scope (see session.DocKey).
func (rt *Runtime) DocNames(ctx context.Context, app, user, sess, kind string) ([]string, error) {
	if err := rt.knownApp(app); err != nil {
		return nil, err
	}
	names, err := rt.store.DocNames(ctx, app, user, sess, kind)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	return names, nil
}

// DocVersions lists a document's versions, without their data.
func (rt *Runtime) DocVersions(ctx context.Context, key session.DocKey) ([]session.Doc, error) {
	if err := rt.knownApp(key.App); err != nil {
		return nil, err
	}
	v, err := rt.store.DocVersions(ctx, key)
	return v, docErr(key, -1, err)
}

// DeleteDoc deletes every version of a document.
func (rt *Runtime) DeleteDoc(ctx context.Context, key session.DocKey) error {
	if err := rt.knownApp(key.App); err != nil {
		return err
	}
	return docErr(key, -1, rt.store.DeleteDoc(ctx, key))
}
