package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host/project"
)

// reloadDebounce is how long a project's files must stay quiet after a change before it
// is reloaded: an editor's save is several events, a `git checkout` many.
const reloadDebounce = 150 * time.Millisecond

// ignoredDir reports directories whose changes never reload a project: environments,
// caches, agentengine's own state (sessions, built runners) and version control.
func ignoredDir(name string) bool {
	switch name {
	case ".venv", "venv", ".agentengine", "__pycache__", "node_modules", ".git", ".hg", ".svn",
		".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode":
		return true
	}
	return false
}

// ignoredFile reports editors' temporary and backup files and compiled Python.
func ignoredFile(name string) bool {
	switch {
	case strings.HasSuffix(name, "~"), strings.HasPrefix(name, ".#"),
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"),
		name == "4913", name == ".DS_Store": // vim's write probe; Finder
		return true
	}
	switch filepath.Ext(name) {
	case ".swp", ".swx", ".swo", ".tmp", ".pyc", ".pyo", ".log", ".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal":
		return true
	}
	return false
}

// reloader watches the projects' files and, after a change, starts the project's runner
// on the new code and swaps it in: new runs go to it, runs in flight finish on the old
// one (for up to drain), then the old one stops. A change that does not build, import
// or start leaves the last good version serving, with the error on the terminal and in
// /health.
type reloader struct {
	st    *stack
	out   io.Writer
	log   hclog.Logger
	drain time.Duration

	mu  sync.Mutex
	gen map[int]int // reloads done per project, naming Go builds apart
}

func newReloader(st *stack, out io.Writer, log hclog.Logger, drain time.Duration) *reloader {
	return &reloader{st: st, out: out, log: log.Named("reload"), drain: drain, gen: map[int]int{}}
}

// watch starts watching the projects' files. It returns once every folder is watched, so
// that an edit made after it returns (right after "serving", say) is never missed; run
// then acts on the changes.
func (r *reloader) watch() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch for changes: %w", err)
	}
	for i, p := range r.st.project {
		if err := addTree(w, p.Dir); err != nil {
			w.Close()
			return nil, fmt.Errorf("watch %s: %w", r.st.display[i], err)
		}
	}
	return w, nil
}

// run reloads the projects as w reports changes, until ctx ends; it closes w.
func (r *reloader) run(ctx context.Context, w *fsnotify.Watcher) {
	defer w.Close()
	dirs := map[string]int{} // project dir → index
	for i, p := range r.st.project {
		dirs[p.Dir] = i
	}
	kicks := make([]chan struct{}, len(r.st.project))
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range kicks {
		kicks[i] = make(chan struct{}, 1)
		wg.Go(func() { r.loop(ctx, i, kicks[i]) })
	}
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			r.log.Warn("file watcher", "error", err)
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			i, rel, ok := owner(dirs, ev.Name)
			if !ok || ignoredPath(rel) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					_ = addTree(w, ev.Name) // a new folder's files are watched too
				}
			}
			r.log.Trace("change", "file", ev.Name, "op", ev.Op.String())
			select {
			case kicks[i] <- struct{}{}:
			default: // a reload is already due
			}
		}
	}
}

// loop reloads project i once its files have been quiet for reloadDebounce after a kick.
func (r *reloader) loop(ctx context.Context, i int, kick <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		t := time.NewTimer(reloadDebounce)
	quiet:
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-kick:
				t.Reset(reloadDebounce)
			case <-t.C:
				break quiet
			}
		}
		r.reload(ctx, i)
	}
}

// reload starts project i's runner on its current files and swaps it in.
func (r *reloader) reload(ctx context.Context, i int) {
	st, display, slot := r.st, r.st.display[i], r.st.slots[i]
	old := st.project[i]
	started := time.Now()
	fmt.Fprintf(r.out, "==> %s changed: reloading %s\n", display, old.Name)
	p, err := project.Load(old.Dir)
	if err == nil && p.Name != old.Name {
		err = fmt.Errorf("the agent's name changed from %q to %q: a new name takes a restart", old.Name, p.Name)
	}
	var (
		runner agentRunner
		suffix string
	)
	if err == nil {
		if len(st.extraEnv) > 0 && p.Env == nil {
			p.Env = map[string]string{}
		}
		maps.Copy(p.Env, st.extraEnv)
		p.IsolateEnv = st.isolateEnv
		r.mu.Lock()
		r.gen[i]++
		gen := r.gen[i]
		r.mu.Unlock()
		lo := st.launch
		lo.display = display
		suffix = fmt.Sprintf(".reload%d", gen)
		lo.binarySuffix = suffix
		if slot.serving() && old.IsPython() {
			if in, err := old.FindPython(); err == nil {
				lo.checkedPython = in.Path
			}
		}
		runner, err = startAgentRunner(ctx, p, lo)
		if err != nil && p.Framework == project.FrameworkGo {
			removeBuild(p, lo.binarySuffix)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		r.failed(i, old.Name, slot, err)
		return
	}
	slot.swap(runner, suffix, r.drain, func(prevSuffix string) {
		if old.Framework == project.FrameworkGo {
			removeBuild(old, prevSuffix)
		}
	})
	if p.RunTimeout != old.RunTimeout || p.Description != old.Description {
		// The host's record of the agent is fixed when it starts.
		fmt.Fprintf(r.out, "    note: a changed run_timeout or description of %s takes a restart\n", p.Name)
	}
	st.project[i] = p
	st.runtime.AgentReloaded(p.Name)
	st.runtime.SetAgentError(p.Name, nil)
	st.runtime.SetReloadError(p.Name, nil)
	fmt.Fprintf(r.out, "    reloaded %s in %s: new runs use the new code\n", p.Name, elapsed(started))
	r.log.Info("reloaded", "agent", p.Name, "ms", time.Since(started).Milliseconds())
}

// failed reports a reload that did not produce a runner: the last good version keeps
// serving (or, with none, the agent stays unavailable with the new error).
func (r *reloader) failed(i int, name string, slot *agentSlot, err error) {
	if slot.serving() {
		r.st.runtime.SetReloadError(name, err)
		fmt.Fprintf(r.out, "    reload of %s failed; still serving the last good version:\n%s\n", name, indent(err.Error(), "      "))
		r.log.Error("reload failed; serving the last good version", "agent", name, "error", err)
		return
	}
	slot.setErr(err)
	r.st.runtime.SetAgentError(name, err)
	fmt.Fprintf(r.out, "    %s is still unavailable:\n%s\n", name, indent(err.Error(), "      "))
	r.log.Error("reload failed; the agent stays unavailable", "agent", name, "error", err)
}

// removeBuild deletes a Go runner binary a reload built.
func removeBuild(p *project.Project, suffix string) {
	if suffix == "" {
		return // the first build's binary: the next start reuses it
	}
	_ = os.Remove(filepath.Join(p.StateDir(), "bin", p.Name+suffix))
}

// owner finds the project a path belongs to and the path relative to it.
func owner(dirs map[string]int, path string) (int, string, bool) {
	best, bestLen := -1, -1
	rel := ""
	for dir, i := range dirs {
		r, err := filepath.Rel(dir, path)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			continue
		}
		if len(dir) > bestLen {
			best, bestLen, rel = i, len(dir), r
		}
	}
	return best, rel, best >= 0
}

// ignoredPath reports a project-relative path no change of which reloads.
func ignoredPath(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, d := range parts[:len(parts)-1] {
		if ignoredDir(d) {
			return true
		}
	}
	last := parts[len(parts)-1]
	return ignoredDir(last) || ignoredFile(last)
}

// addTree watches dir and its subdirectories, skipping the ignored ones.
func addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // a folder that went away or cannot be read
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && ignoredDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := w.Add(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}
