// Package workspace serves a project's workspace directory to the Web UI: list,
// read, write, delete and zip export, every path confined to the workspace root.
package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxUploadBytes is the default limit of one written file.
const DefaultMaxUploadBytes = 100 << 20

// maxListEntries bounds one listing.
const maxListEntries = 10000

// tmpPrefix marks files being uploaded; they are hidden from listings and exports.
const tmpPrefix = ".agentengine-upload-"

// Config configures a Workspace.
type Config struct {
	// Dir is the workspace root, created (0700) if missing; see DefaultDir.
	Dir string
	// MaxUploadBytes limits one written file (default DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// PerUser gives every user a workspace of their own under Dir (see For, UsersDir);
	// unset, every user shares Dir.
	PerUser bool
}

// DefaultDir is the workspace root of a project.
func DefaultDir(projectDir string) string {
	return filepath.Join(projectDir, ".agentengine", "ui", "workspace")
}

// Workspace is one project's workspace, shared by its users or (Config.PerUser) the
// parent of one per user, which only For serves. It is safe for concurrent use.
type Workspace struct {
	root  *os.Root
	max   int64
	users *users // per user: file operations go to For(user)
}

// Open opens (creating) the workspace root.
func Open(cfg Config) (*Workspace, error) {
	if cfg.Dir == "" {
		return nil, errors.New("workspace: a directory is required")
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: create root: %w", err)
	}
	root, err := os.OpenRoot(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: open root: %w", err)
	}
	w := &Workspace{root: root, max: cfg.MaxUploadBytes}
	if cfg.PerUser {
		w.users = &users{open: map[string]*Workspace{}}
	}
	return w, nil
}

// Close releases the root (and every user's).
func (w *Workspace) Close() error { return errors.Join(w.closeUsers(), w.root.Close()) }

// MaxUploadBytes is the limit of one written file.
func (w *Workspace) MaxUploadBytes() int64 { return w.max }

// Entry describes a file or directory, in KsADK's shape: directories have null
// SizeBytes and MimeType, ModifiedAt is RFC 3339 UTC.
type Entry struct {
	Name       string  `json:"Name"`
	Path       string  `json:"Path"`
	Type       string  `json:"Type"` // file or directory
	SizeBytes  *int64  `json:"SizeBytes"`
	MimeType   *string `json:"MimeType"`
	ModifiedAt string  `json:"ModifiedAt"`
}

// IsDir reports whether the entry is a directory.
func (e Entry) IsDir() bool { return e.Type == "directory" }

func entryOf(rel string, fi fs.FileInfo) Entry {
	e := Entry{Name: path.Base(rel), Path: rel, Type: "directory",
		ModifiedAt: fi.ModTime().UTC().Format(time.RFC3339Nano)}
	if !fi.IsDir() {
		size, mt := fi.Size(), MimeType(rel)
		e.Type, e.SizeBytes, e.MimeType = "file", &size, &mt
	}
	return e
}

// MimeType guesses a file's type from its extension.
func MimeType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// mapErr classifies an os.Root error. An escaping path is reported by os.Root only
// through its message ("path escapes from parent"), hence the string match.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case strings.Contains(err.Error(), "escapes from parent"), errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%w: it leads outside the workspace", ErrInvalidPath)
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return ErrNotEmpty
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return ErrConflict
	}
	return err
}

// Stat describes the entry at a client path.
func (w *Workspace) Stat(p string) (Entry, error) {
	if w.users != nil {
		return Entry{}, errPerUser
	}
	rel, err := Clean(p)
	if err != nil {
		return Entry{}, err
	}
	fi, err := w.root.Stat(rel)
	if err != nil {
		return Entry{}, mapErr(err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return Entry{}, notAFile(rel)
	}
	return entryOf(rel, fi), nil
}

// notAFile is the error for a FIFO, socket or device: none can be read as a file (a
// FIFO's open or read would wait for a writer for ever) and none is listed.
func notAFile(rel string) error {
	return fmt.Errorf("%w: %s is not a regular file or directory", ErrConflict, rel)
}

// List returns the entries of a directory, recursively when asked (symlinks are not
// descended, and ones leading out of the workspace are left out). truncated reports
// that the listing stopped at its bound.
func (w *Workspace) List(ctx context.Context, p string, recursive bool) (entries []Entry, truncated bool, err error) {
	if w.users != nil {
		return nil, false, errPerUser
	}
	rel, err := Clean(p)
	if err != nil {
		return nil, false, err
	}
	fi, err := w.root.Stat(rel)
	if err != nil {
		return nil, false, mapErr(err)
	}
	if !fi.IsDir() {
		return nil, false, fmt.Errorf("%w: %s is not a directory", ErrInvalidPath, rel)
	}
	entries = []Entry{}
	err = fs.WalkDir(w.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == rel {
				return err
			}
			return nil // an unreadable subdirectory does not spoil the listing
		}
		if p == rel {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		if len(entries) == maxListEntries {
			truncated = true
			return fs.SkipAll
		}
		info, err := w.root.Stat(p) // follows links, but only within the root
		if err != nil || (!info.IsDir() && !info.Mode().IsRegular()) {
			return nil // FIFOs, sockets and devices are not workspace files
		}
		entries = append(entries, entryOf(p, info))
		if d.IsDir() && !recursive {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, false, mapErr(err)
	}
	// Directories first, then by name, as the UI's tree expects.
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].IsDir() != entries[j].IsDir() {
			return entries[i].IsDir()
		}
		return strings.ToLower(entries[i].Path) < strings.ToLower(entries[j].Path)
	})
	return entries, truncated, nil
}

// Open opens a file for reading; the caller closes it.
func (w *Workspace) Open(p string) (*os.File, Entry, error) {
	if w.users != nil {
		return nil, Entry{}, errPerUser
	}
	rel, err := Clean(p)
	if err != nil {
		return nil, Entry{}, err
	}
	f, err := openRegular(w.root, rel)
	if err != nil {
		return nil, Entry{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Entry{}, mapErr(err)
	}
	return f, entryOf(rel, fi), nil
}

// Delete removes a file, a symlink (not its target) or an empty directory.
func (w *Workspace) Delete(p string) error {
	if w.users != nil {
		return errPerUser
	}
	rel, err := Clean(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("%w: the workspace root cannot be deleted", ErrInvalidPath)
	}
	if _, err := w.root.Lstat(rel); err != nil {
		return mapErr(err)
	}
	return mapErr(w.root.Remove(rel))
}

// Write stores r at a client path, replacing a file there. The path is checked before
// anything is read; the content goes to a temporary file that is renamed into place,
// so a rejected or failed write leaves nothing behind.
func (w *Workspace) Write(ctx context.Context, p string, r io.Reader) (Entry, error) {
	if _, err := cleanFile(p); err != nil {
		return Entry{}, err
	}
	st, err := w.Stage(ctx, r)
	if err != nil {
		return Entry{}, err
	}
	return st.Commit(p)
}

func cleanFile(p string) (string, error) {
	rel, err := Clean(p)
	if err == nil && rel == "." {
		err = fmt.Errorf("%w: a file path is required", ErrInvalidPath)
	}
	return rel, err
}

// Staged is uploaded content not yet at its path (for multipart bodies whose path
// field may come after the file).
type Staged struct {
	w    *Workspace
	tmp  string
	Size int64
	done bool
}

// Stage streams r into a hidden temporary file of at most the upload limit.
func (w *Workspace) Stage(ctx context.Context, r io.Reader) (*Staged, error) {
	if w.users != nil {
		return nil, errPerUser
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("workspace: temp name: %w", err)
	}
	tmp := tmpPrefix + hex.EncodeToString(b[:])
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspace: create temp file: %w", err)
	}
	n, err := io.Copy(f, ctxReader{ctx, io.LimitReader(r, w.max+1)})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > w.max {
		err = ErrTooLarge
	}
	if err != nil {
		_ = w.root.Remove(tmp)
		return nil, err
	}
	return &Staged{w: w, tmp: tmp, Size: n}, nil
}

// Commit moves the staged file to a client path, creating parent directories. The
// staged file is removed on failure.
func (s *Staged) Commit(p string) (Entry, error) {
	if s.done {
		return Entry{}, errors.New("workspace: staged file already used")
	}
	s.done = true
	ok := false
	defer func() {
		if !ok {
			_ = s.w.root.Remove(s.tmp)
		}
	}()
	rel, err := cleanFile(p)
	if err != nil {
		return Entry{}, err
	}
	if fi, err := s.w.root.Stat(rel); err == nil && fi.IsDir() {
		return Entry{}, fmt.Errorf("%w: %s is a directory", ErrConflict, rel)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := s.w.root.MkdirAll(dir, 0o755); err != nil {
			return Entry{}, mapErr(err)
		}
	}
	if err := s.w.root.Chmod(s.tmp, 0o644); err != nil {
		return Entry{}, mapErr(err)
	}
	if err := s.w.root.Rename(s.tmp, rel); err != nil {
		return Entry{}, mapErr(err)
	}
	ok = true
	fi, err := s.w.root.Lstat(rel)
	if err != nil {
		return Entry{}, mapErr(err)
	}
	return entryOf(rel, fi), nil
}

// Discard removes the staged file unless it was committed.
func (s *Staged) Discard() {
	if !s.done {
		s.done = true
		_ = s.w.root.Remove(s.tmp)
	}
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// openRegular opens a regular file for reading. O_NONBLOCK keeps the open of a FIFO from
// waiting for a writer (a path swapped for one after a check included); what is opened
// is then checked to be a regular file, on which O_NONBLOCK changes nothing.
func openRegular(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, mapErr(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, mapErr(err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a file", ErrConflict, rel)
		}
		return nil, notAFile(rel)
	}
	return f, nil
}
