// Package pybridge puts the Python side of agentengine (the runner SDK and the framework
// bridges, embedded in the binary) on disk where an interpreter can import it. Users never
// install the bridge: it is extracted on first use into a content-addressed cache
// directory, so every agentengine build gets its own copy and concurrent processes share
// it safely.
package pybridge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Layout of the extracted tree (the repository's paths, so the embed patterns and the
// extracted directory line up).
const (
	SDKDir          = "pluginsdk/python/src"
	AdaptersDir     = "adapters"
	ConstraintsFile = "pluginsdk/python/constraints.txt"
	// RunnerRequirementsFile lists what the runner SDK itself needs in a project's
	// environment (pip requirement lines, the widest ranges that work).
	RunnerRequirementsFile = "pluginsdk/python/runner-requirements.txt"
)

// completeMarker is written last into a finished extraction.
const completeMarker = ".agentengine-complete"

// Bridge is an extracted copy of the Python bridge.
type Bridge struct {
	// Dir is the extraction's root; Digest the content hash naming it.
	Dir    string
	Digest string
}

// PythonPath is what goes on the runner's PYTHONPATH.
func (b Bridge) PythonPath() []string {
	return []string{filepath.Join(b.Dir, filepath.FromSlash(SDKDir)), filepath.Join(b.Dir, AdaptersDir)}
}

// Constraints is the path of the pip constraints file (the one file of pinned versions).
func (b Bridge) Constraints() string {
	return filepath.Join(b.Dir, filepath.FromSlash(ConstraintsFile))
}

// CacheRoot is where bridges are extracted: <user cache dir>/agentengine/python, or a
// per-user directory under the temp dir when there is no usable cache dir.
func CacheRoot() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "agentengine", "python")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("agentengine-%d", os.Getuid()), "python")
}

// skip leaves out what an interpreter does not need: bytecode caches (Python rebuilds
// them, and they differ between machines) and tests.
func skip(p string, dir bool) bool {
	base := path.Base(p)
	switch {
	case base == "__pycache__" || base == "tests" || base == "test" || base == ".pytest_cache" || base == ".mypy_cache":
		return dir
	case dir:
		return false
	case strings.HasSuffix(base, ".pyc"), strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		base == "conftest.py", base == ".DS_Store":
		return true
	}
	return false
}

type file struct {
	path string
	data []byte
}

// collect reads every file of src that is extracted, in a stable order.
func collect(src fs.FS) ([]file, error) {
	var files []file
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if skip(p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		files = append(files, file{p, data})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, err
}

func digest(files []file) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.path, len(f.data))
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// Extract writes src into root/<digest>/ unless that is already there, and returns it.
// The tree is written into a temporary sibling directory and renamed into place, so a
// reader never sees a partial tree, and concurrent agentengine processes extracting the
// same content both end up using the one that won the rename.
func Extract(src fs.FS, root string) (Bridge, error) {
	files, err := collect(src)
	if err != nil {
		return Bridge{}, fmt.Errorf("read embedded Python bridge: %w", err)
	}
	if len(files) == 0 {
		return Bridge{}, errors.New("the embedded Python bridge is empty (this agentengine was built without it)")
	}
	b := Bridge{Digest: digest(files)}
	b.Dir = filepath.Join(root, b.Digest)
	defer prune(root, b.Digest, time.Now())
	if complete(b.Dir) {
		touch(b.Dir)
		return b, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return b, fmt.Errorf("create Python bridge cache %s: %w", root, err)
	}
	tmp, err := os.MkdirTemp(root, ".tmp-"+b.Digest+"-")
	if err != nil {
		return b, fmt.Errorf("extract Python bridge: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	for _, f := range files {
		dst := filepath.Join(tmp, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return b, fmt.Errorf("extract Python bridge: %w", err)
		}
		if err := os.WriteFile(dst, f.data, 0o644); err != nil {
			return b, fmt.Errorf("extract Python bridge: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, completeMarker), []byte(b.Digest+"\n"), 0o644); err != nil {
		return b, fmt.Errorf("extract Python bridge: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return b, fmt.Errorf("extract Python bridge: %w", err)
	}
	if err := os.Rename(tmp, b.Dir); err != nil {
		// Another process renamed its copy first (the target exists and is not empty):
		// the content is the same, use theirs.
		if complete(b.Dir) {
			return b, nil
		}
		// A leftover without the marker (an interrupted copy of an old version that
		// renamed non-atomically elsewhere, or a hand edit): replace it.
		if rerr := os.RemoveAll(b.Dir); rerr == nil {
			if err = os.Rename(tmp, b.Dir); err == nil {
				return b, nil
			}
		}
		if complete(b.Dir) {
			return b, nil
		}
		return b, fmt.Errorf("extract Python bridge into %s: %w", b.Dir, err)
	}
	return b, nil
}

// Extractions unused for this long are removed (every agentengine build with other
// bridge sources makes its own); so are temporary directories of crashed extractions.
const (
	unusedFor   = 30 * 24 * time.Hour
	abandonedAt = time.Hour
)

// touch records a use of an extraction (its marker's mtime), for prune.
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, completeMarker), now, now)
}

// prune removes old extractions and leftovers, best effort: a failure only leaves a
// directory behind.
func prune(root, keep string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == keep {
			continue
		}
		dir := filepath.Join(root, name)
		var st os.FileInfo
		if strings.HasPrefix(name, ".tmp-") {
			if st, err = os.Stat(dir); err == nil && now.Sub(st.ModTime()) > abandonedAt {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		if st, err = os.Stat(filepath.Join(dir, completeMarker)); err == nil && now.Sub(st.ModTime()) > unusedFor {
			_ = os.RemoveAll(dir)
		}
	}
}

func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, completeMarker))
	return err == nil
}
