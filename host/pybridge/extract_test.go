package pybridge

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	agentengine "github.com/agentengine/agentengine"
)

func tree() fstest.MapFS {
	return fstest.MapFS{
		"pluginsdk/python/src/agentengine_runner/__init__.py":               {Data: []byte("# sdk\n")},
		"pluginsdk/python/src/agentengine_runner/_proto/__init__.py":        {Data: []byte("")},
		"pluginsdk/python/src/agentengine_runner/__pycache__/x.cpython.pyc": {Data: []byte("bytecode")},
		"adapters/agentengine_adapters/__init__.py":                         {Data: []byte("# adapters\n")},
		"adapters/agentengine_adapters/tests/test_x.py":                     {Data: []byte("def test(): pass\n")},
		"adapters/agentengine_adapters/test_inline.py":                      {Data: []byte("def test(): pass\n")},
		"pluginsdk/python/constraints.txt":                                  {Data: []byte("grpcio==1.85.1\n")},
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(r))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestExtractWritesTheTreeOnce(t *testing.T) {
	root := t.TempDir()
	b, err := Extract(tree(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		completeMarker,
		"adapters/agentengine_adapters/__init__.py",
		"pluginsdk/python/constraints.txt",
		"pluginsdk/python/src/agentengine_runner/__init__.py",
		"pluginsdk/python/src/agentengine_runner/_proto/__init__.py",
	}
	if got := files(t, b.Dir); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("extracted %v\nwant %v", got, want)
	}
	if filepath.Dir(b.Dir) != root || filepath.Base(b.Dir) != b.Digest {
		t.Fatalf("dir %s digest %s", b.Dir, b.Digest)
	}
	if pp := b.PythonPath(); pp[0] != filepath.Join(b.Dir, "pluginsdk/python/src") || pp[1] != filepath.Join(b.Dir, "adapters") {
		t.Fatalf("python path %v", pp)
	}
	if data, err := os.ReadFile(b.Constraints()); err != nil || string(data) != "grpcio==1.85.1\n" {
		t.Fatalf("constraints %q %v", data, err)
	}
	// A second extraction finds it (a file changed on disk is not rewritten).
	stamp := filepath.Join(b.Dir, "adapters/agentengine_adapters/__init__.py")
	if err := os.WriteFile(stamp, []byte("touched"), 0o644); err != nil {
		t.Fatal(err)
	}
	b2, err := Extract(tree(), root)
	if err != nil || b2 != b {
		t.Fatalf("second extract %+v %v", b2, err)
	}
	if data, _ := os.ReadFile(stamp); string(data) != "touched" {
		t.Fatal("an existing extraction was rewritten")
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Fatalf("leftovers in the cache: %v", entries)
	}
}

func TestDigestFollowsContentOnly(t *testing.T) {
	a, _ := collect(tree())
	m := tree()
	m["pluginsdk/python/src/agentengine_runner/__pycache__/y.pyc"] = &fstest.MapFile{Data: []byte("other")}
	b, _ := collect(m)
	if digest(a) != digest(b) {
		t.Fatal("bytecode caches changed the digest")
	}
	m["adapters/agentengine_adapters/__init__.py"] = &fstest.MapFile{Data: []byte("# changed\n")}
	c, _ := collect(m)
	if digest(a) == digest(c) {
		t.Fatal("a source change kept the digest")
	}
}

func TestConcurrentExtractions(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	results := make([]Bridge, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = Extract(tree(), root) })
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i] != results[0] {
			t.Fatalf("extraction %d: %+v %v", i, results[i], errs[i])
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || !complete(results[0].Dir) {
		t.Fatalf("cache holds %v", entries)
	}
}

func TestIncompleteLeftoverIsReplaced(t *testing.T) {
	root := t.TempDir()
	a, _ := collect(tree())
	stale := filepath.Join(root, digest(a))
	if err := os.MkdirAll(filepath.Join(stale, "junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Extract(tree(), root)
	if err != nil || !complete(b.Dir) {
		t.Fatalf("%+v %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "junk")); err == nil {
		t.Fatal("the incomplete leftover was kept")
	}
}

func TestEmptyBridgeIsAnError(t *testing.T) {
	if _, err := Extract(fstest.MapFS{}, t.TempDir()); err == nil {
		t.Fatal("want an error")
	}
}

// The binary's embedded bridge has everything the runner imports.
func TestEmbeddedBridge(t *testing.T) {
	b, err := Extract(agentengine.PythonBridge, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		"pluginsdk/python/src/agentengine_runner/__init__.py",
		"pluginsdk/python/src/agentengine_runner/__main__.py",
		"pluginsdk/python/src/agentengine_runner/_proto/runner/v1/runner_pb2.py",
		"pluginsdk/python/src/agentengine_runner/_ksadk_compat/ksadk/__init__.py",
		"pluginsdk/python/src/agentengine_runner/_ksadk_compat/ksadk/runtime_context.py",
		"adapters/agentengine_adapters/__init__.py",
		"adapters/agentengine_adapters/__main__.py",
		"adapters/agentengine_adapters/doctor.py",
		"pluginsdk/python/constraints.txt",
		"pluginsdk/python/runner-requirements.txt",
		"pluginsdk/python/src/agentengine_runner/_proto/grpc_health/v1/health_pb2.py",
	} {
		if _, err := os.Stat(filepath.Join(b.Dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	for _, f := range files(t, b.Dir) {
		if strings.Contains(f, "__pycache__") || strings.HasSuffix(f, ".pyc") || strings.Contains(f, "/tests/") {
			t.Errorf("extracted %s", f)
		}
	}
}

func TestPruneRemovesOldExtractionsAndLeftovers(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-60 * 24 * time.Hour)
	mk := func(name string, marker bool, mtime time.Time) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		target := dir
		if marker {
			target = filepath.Join(dir, completeMarker)
			if err := os.WriteFile(target, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(target, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stale := mk("aaaa", true, old)
	recent := mk("bbbb", true, time.Now())
	crashed := mk(".tmp-cccc-1", false, old)
	fresh := mk(".tmp-dddd-2", false, time.Now())
	b, err := Extract(tree(), root)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{stale: false, recent: true, crashed: false, fresh: true, b.Dir: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s exists %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}
