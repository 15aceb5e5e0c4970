package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sync"
)

// UsersDir is the root of a project's per-user workspaces (one subdirectory each).
func UsersDir(projectDir string) string {
	return DefaultDir(projectDir) + "s"
}

// errPerUser is a programming error: file operations on a per-user workspace's parent.
var errPerUser = errors.New("workspace: the workspace is per user; open the user's with For")

// users holds the open per-user workspaces of a parent opened with Config.PerUser.
type users struct {
	mu   sync.Mutex
	open map[string]*Workspace
}

// Shared reports whether every user shares the workspace (Config.PerUser unset).
func (w *Workspace) Shared() bool { return w.users == nil }

// For returns user's workspace: w itself when it is shared, else the user's own
// (created on first use, then kept open until w is closed).
func (w *Workspace) For(user string) (*Workspace, error) {
	if w.users == nil {
		return w, nil
	}
	if user == "" {
		return nil, errors.New("workspace: a user is required")
	}
	w.users.mu.Lock()
	defer w.users.mu.Unlock()
	if u, ok := w.users.open[user]; ok {
		return u, nil
	}
	name := userDir(user)
	if err := w.root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("workspace: create the user's directory: %w", err)
	}
	root, err := w.root.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("workspace: open the user's directory: %w", err)
	}
	u := &Workspace{root: root, max: w.max}
	w.users.open[user] = u
	return u, nil
}

// plainUser are user ids used as their directory's name as they are: lower case only,
// so that "Alice" and "alice" cannot share a directory on a case-insensitive file system.
var plainUser = regexp.MustCompile(`^[a-z0-9][a-z0-9_.@-]{0,63}$`)

// userDir names a user's directory: the id itself when it is a plain name, else "~" and
// a (lower-case hex) hash of it (ids may hold "/", "..", upper case or anything but
// control characters). "~" never starts a plain name, so the two kinds cannot collide.
func userDir(user string) string {
	if plainUser.MatchString(user) {
		return user
	}
	sum := sha256.Sum256([]byte(user))
	return "~" + hex.EncodeToString(sum[:16])
}

// closeUsers closes the per-user workspaces.
func (w *Workspace) closeUsers() error {
	if w.users == nil {
		return nil
	}
	w.users.mu.Lock()
	defer w.users.mu.Unlock()
	var errs []error
	for _, u := range w.users.open {
		errs = append(errs, u.Close())
	}
	w.users.open = map[string]*Workspace{}
	return errors.Join(errs...)
}
