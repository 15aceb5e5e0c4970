package workspace

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Errors of workspace operations; their messages are safe to show to clients.
var (
	// ErrInvalidPath: the path is malformed or leaves the workspace (400).
	ErrInvalidPath = errors.New("invalid path")
	// ErrNotFound: nothing exists at the path (404).
	ErrNotFound = errors.New("not found")
	// ErrNotEmpty: a directory to delete has entries (409).
	ErrNotEmpty = errors.New("directory is not empty")
	// ErrConflict: the path names a directory where a file is needed, or the reverse (409).
	ErrConflict = errors.New("path conflicts with an existing entry")
	// ErrTooLarge: an upload is over the limit; nothing was written (413).
	ErrTooLarge = errors.New("file is larger than the limit")
)

// Bounds on client paths.
const (
	maxPathLen    = 4096
	maxElementLen = 255
)

// Clean validates a client path and returns it relative to the workspace root, with
// "/" separators ("." for the root). It rejects rather than repairs anything
// suspicious: NUL and control characters, backslashes, absolute and drive paths, ".."
// elements, and percent-encoded dots or separators (a path is decoded exactly once, by
// the HTTP layer; a second decoding elsewhere must not find a traversal either).
// Symlinks are the file system's business: every operation goes through an os.Root,
// which refuses to follow a link out of the workspace.
func Clean(p string) (string, error) {
	if len(p) > maxPathLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalidPath, maxPathLen)
	}
	// A name that is not UTF-8 cannot travel in JSON: a client would see U+FFFD in its
	// place and could neither read nor delete the file.
	if !utf8.ValidString(p) {
		return "", fmt.Errorf("%w: paths must be valid UTF-8", ErrInvalidPath)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%w: control characters are not allowed", ErrInvalidPath)
		}
	}
	if strings.Contains(p, "\\") {
		return "", fmt.Errorf("%w: use / as the separator", ErrInvalidPath)
	}
	if strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", fmt.Errorf("%w: paths are relative to the workspace", ErrInvalidPath)
	}
	var kept []string
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("%w: .. is not allowed", ErrInvalidPath)
		}
		if len(el) > maxElementLen {
			return "", fmt.Errorf("%w: a path element is longer than %d bytes", ErrInvalidPath, maxElementLen)
		}
		if strings.Contains(el, "%") {
			if u, err := url.PathUnescape(el); err == nil && (u == "." || u == ".." || strings.ContainsAny(u, "/\\\x00")) {
				return "", fmt.Errorf("%w: encoded dots or separators are not allowed", ErrInvalidPath)
			}
		}
		kept = append(kept, el)
	}
	if len(kept) == 0 {
		return ".", nil
	}
	return strings.Join(kept, "/"), nil
}
