package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A document is a named, versioned blob a framework keeps beside the conversation: an
// ADK artifact a tool saved, an ADK eval set or eval result. The store keeps every
// version until the document is deleted; a session's documents go with the session.

// Document kinds the runtime stores.
const (
	DocADKArtifact   = "adk_artifact"
	DocADKEvalSet    = "adk_eval_set"
	DocADKEvalResult = "adk_eval_result"
)

// DocKey names a document. Its scope is the session when Session is set, else the user
// when User is set, else the app.
type DocKey struct {
	App, User, Session string
	Kind, Name         string
}

// Doc is one version of a document. Versions count from 0.
type Doc struct {
	Key       DocKey
	Version   int64
	MimeType  string
	Data      []byte
	Meta      json.RawMessage // the framework's own metadata of the version (a JSON object), or nil
	CreatedAt time.Time
}

// DocStore keeps documents. Writes to one key are serialized: each PutDoc gets the next
// version.
type DocStore interface {
	// PutDoc stores d.Data (with d.MimeType and d.Meta) as the next version of d.Key,
	// 0 for a new document, and returns that version.
	PutDoc(ctx context.Context, d Doc) (int64, error)
	// GetDoc returns one version of a document, the latest when version < 0;
	// ErrNotFound if there is no such document or version.
	GetDoc(ctx context.Context, key DocKey, version int64) (Doc, error)
	// DocNames lists, sorted, the names of the kind's documents in exactly the scope
	// app/user/session (a session's names do not include its user's).
	DocNames(ctx context.Context, app, user, session, kind string) ([]string, error)
	// DocVersions lists a document's versions in ascending order, without their data;
	// ErrNotFound if it has none.
	DocVersions(ctx context.Context, key DocKey) ([]Doc, error)
	// DeleteDoc removes every version of a document; ErrNotFound if it has none.
	DeleteDoc(ctx context.Context, key DocKey) error
}

// MaxDocNameBytes bounds a document's name (and kind).
const MaxDocNameBytes = 1024

// ValidDocKey checks that a key names a document: app, kind and name set, a session
// only with its user, no field over MaxDocNameBytes.
func ValidDocKey(k DocKey) error {
	switch {
	case k.App == "" || k.Kind == "" || k.Name == "":
		return fmt.Errorf("document key needs an app, a kind and a name: %w", ErrInvalid)
	case k.Session != "" && k.User == "":
		return fmt.Errorf("a session's document needs its user: %w", ErrInvalid)
	}
	for _, f := range []string{k.App, k.User, k.Session, k.Kind, k.Name} {
		if len(f) > MaxDocNameBytes {
			return fmt.Errorf("document key field over %d bytes: %w", MaxDocNameBytes, ErrInvalid)
		}
	}
	return nil
}

// ValidDocMeta checks that meta is nil or a JSON object.
func ValidDocMeta(meta json.RawMessage) error {
	if len(meta) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(meta, &m); err != nil || m == nil {
		return errors.Join(fmt.Errorf("document metadata must be a JSON object: %w", ErrInvalid), err)
	}
	return nil
}

// DocLabel names a document, or one version of it (version >= 0), in messages.
func DocLabel(k DocKey, version int64) string {
	if version >= 0 {
		return fmt.Sprintf("%s %q version %d", k.Kind, k.Name, version)
	}
	return fmt.Sprintf("%s %q", k.Kind, k.Name)
}

// DocNotFound is the error for a document (or a version of it) the store does not have.
func DocNotFound(k DocKey, version int64) error {
	return fmt.Errorf("%s: %w", DocLabel(k, version), ErrNotFound)
}
