package memory

import (
	"context"
	"slices"

	"github.com/agentengine/agentengine/session"
)

// docScope is whose documents: an app's, a user's or a session's.
type docScope struct{ app, user, session string }

type docName struct{ kind, name string }

// docs holds every version of each document, by scope: deleting a session drops its
// scope whole.
type docs map[docScope]map[docName][]session.Doc

func scopeOf(k session.DocKey) docScope { return docScope{k.App, k.User, k.Session} }

// PutDoc stores a copy of d as the next version of its key.
func (s *Store) PutDoc(ctx context.Context, d session.Doc) (int64, error) {
	if err := session.ValidDocKey(d.Key); err != nil {
		return 0, err
	}
	if err := session.ValidDocMeta(d.Meta); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	if s.docs == nil {
		s.docs = docs{}
	}
	sc := scopeOf(d.Key)
	byName := s.docs[sc]
	if byName == nil {
		byName = map[docName][]session.Doc{}
		s.docs[sc] = byName
	}
	n := docName{d.Key.Kind, d.Key.Name}
	versions := byName[n]
	d.Version = int64(len(versions))
	if len(versions) > 0 {
		d.Version = versions[len(versions)-1].Version + 1
	}
	d.Data = slices.Clone(d.Data)
	d.Meta = slices.Clone(d.Meta)
	d.CreatedAt = s.clock.Now()
	byName[n] = append(versions, d)
	return d.Version, nil
}

// GetDoc returns a copy of one version of a document (the latest when version < 0).
func (s *Store) GetDoc(ctx context.Context, key session.DocKey, version int64) (session.Doc, error) {
	if err := session.ValidDocKey(key); err != nil {
		return session.Doc{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.Doc{}, err
	}
	versions := s.docs[scopeOf(key)][docName{key.Kind, key.Name}]
	for i := len(versions) - 1; i >= 0; i-- {
		if d := versions[i]; version < 0 || d.Version == version {
			d.Data = slices.Clone(d.Data)
			d.Meta = slices.Clone(d.Meta)
			return d, nil
		}
	}
	return session.Doc{}, session.DocNotFound(key, version)
}

// DocNames lists the names of the kind's documents in one scope.
func (s *Store) DocNames(ctx context.Context, app, user, sess, kind string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	out := []string{}
	for n := range s.docs[docScope{app, user, sess}] {
		if n.kind == kind {
			out = append(out, n.name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DocVersions lists a document's versions without their data.
func (s *Store) DocVersions(ctx context.Context, key session.DocKey) ([]session.Doc, error) {
	if err := session.ValidDocKey(key); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	versions := s.docs[scopeOf(key)][docName{key.Kind, key.Name}]
	if len(versions) == 0 {
		return nil, session.DocNotFound(key, -1)
	}
	out := make([]session.Doc, len(versions))
	for i, d := range versions {
		d.Data = nil
		d.Meta = slices.Clone(d.Meta)
		out[i] = d
	}
	return out, nil
}

// DeleteDoc removes every version of a document.
func (s *Store) DeleteDoc(ctx context.Context, key session.DocKey) error {
	if err := session.ValidDocKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	byName := s.docs[scopeOf(key)]
	n := docName{key.Kind, key.Name}
	if len(byName[n]) == 0 {
		return session.DocNotFound(key, -1)
	}
	delete(byName, n)
	return nil
}
