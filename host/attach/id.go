package attach

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Scheme is the URI scheme of upload references.
const Scheme = "ksadk-upload://"

// idLen is the length of an upload id: 16 random bytes as hex.
const idLen = 32

// Errors of the store. Messages are safe to show to clients.
var (
	// ErrInvalidRef: the reference or id is malformed (never resolved against the disk).
	ErrInvalidRef = errors.New("invalid upload reference")
	// ErrNotFound: no upload has this id.
	ErrNotFound = errors.New("upload not found")
	// ErrTooLarge: the upload is larger than the limit; nothing was stored.
	ErrTooLarge = errors.New("upload is larger than the limit")
)

// newID returns a fresh upload id.
func newID() (string, error) {
	var b [idLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate upload id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ValidID reports whether id is exactly 32 lowercase hex characters. It is the only
// gate between client input and file names, so it admits nothing else: no separators,
// dots, percent signs, upper case or NUL.
func ValidID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ParseRef returns the id of "ksadk-upload://<id>". The scheme is matched
// case-sensitively and nothing may follow the id (no path, query or fragment).
func ParseRef(ref string) (string, error) {
	id, ok := strings.CutPrefix(ref, Scheme)
	if !ok || !ValidID(id) {
		return "", ErrInvalidRef
	}
	return id, nil
}

// IsRef reports whether s uses the upload scheme (well formed or not), so callers can
// reject malformed references instead of treating them as other URLs.
func IsRef(s string) bool {
	return len(s) >= len(Scheme) && strings.EqualFold(s[:len(Scheme)], Scheme)
}

// Ref returns the reference of an upload id.
func Ref(id string) string { return Scheme + id }
