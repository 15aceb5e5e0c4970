package attach

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	RunWorkerIfRequested() // the test binary doubles as the PDF worker
	// Race-enabled workers would sleep a second at exit.
	_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func newStore(t *testing.T, mod func(*Config)) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	cfg := Config{Dir: dir, ExtractTimeout: 30 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

// listDir returns the names in dir other than the cache directory.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != cacheDir {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestParseRef(t *testing.T) {
	valid := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		ref string
		ok  bool
	}{
		{"ksadk-upload://" + valid, true},
		{"ksadk-upload://" + strings.ToUpper(valid), false},
		{"KSADK-UPLOAD://" + valid, false},
		{"ksadk-upload://" + valid[:31], false},
		{"ksadk-upload://" + valid + "0", false},
		{"ksadk-upload://" + valid + "/", false},
		{"ksadk-upload://" + valid + "?x=1", false},
		{"ksadk-upload://" + valid + "#f", false},
		{"ksadk-upload://../../../../etc/hostname", false},
		{"ksadk-upload://..%2f..%2f..%2fetc%2fpasswd", false},
		{"ksadk-upload://%2e%2e%2f%2e%2e%2fetc%2fhostname", false},
		{"ksadk-upload:///etc/passwd", false},
		{"ksadk-upload://" + valid[:31] + "\x00", false},
		{"ksadk-upload://" + valid[:30] + "/.", false},
		{"ksadk-upload://" + valid[:31] + "g", false},
		{"ae-upload://" + valid, false},
		{valid, false},
		{"", false},
	} {
		id, err := ParseRef(tc.ref)
		if tc.ok != (err == nil) {
			t.Errorf("ParseRef(%q) = %q, %v; want ok=%v", tc.ref, id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidRef) {
			t.Errorf("ParseRef(%q) error %v is not ErrInvalidRef", tc.ref, err)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	f.Add("ksadk-upload://0123456789abcdef0123456789abcdef")
	f.Add("ksadk-upload://../../etc/passwd")
	f.Add("ksadk-upload://%2e%2e/")
	f.Fuzz(func(t *testing.T, ref string) {
		id, err := ParseRef(ref)
		if err != nil {
			return
		}
		if !ValidID(id) || Ref(id) != ref || strings.ContainsAny(id, "./\\%\x00") {
			t.Fatalf("ParseRef(%q) accepted id %q", ref, id)
		}
	})
}

func TestPutStreamsAndOpens(t *testing.T) {
	s, dir := newStore(t, nil)
	m, err := s.Put(context.Background(), "../../notes.md", "application/x-evil", strings.NewReader("# Title\nbody"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !ValidID(m.ID) || m.Name != "notes.md" || m.MimeType != "text/markdown" || m.Kind != KindText || m.SizeBytes != 12 {
		t.Fatalf("meta = %+v", m)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("upload dir mode = %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, m.ID)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("upload file mode = %v, %v", fi, err)
	}
	f, got, err := s.OpenRef(m.URI())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if string(b) != "# Title\nbody" || got.ID != m.ID || got.SHA256 != m.SHA256 || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("open = %q %+v", b, got)
	}
	if names := listDir(t, dir); len(names) != 2 {
		t.Fatalf("upload dir holds %v, want the file and its sidecar", names)
	}
}

func TestPutOverLimitLeavesNothing(t *testing.T) {
	s, dir := newStore(t, func(c *Config) { c.MaxUploadBytes = 1024 })
	for _, limit := range []int64{0, 100, 1 << 30} {
		_, err := s.Put(context.Background(), "big.bin", "", bytes.NewReader(make([]byte, 2048)), limit)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("limit %d: err = %v, want ErrTooLarge", limit, err)
		}
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Fatalf("rejected uploads left %v", names)
	}
	// Exactly at the limit is fine.
	if _, err := s.Put(context.Background(), "ok.bin", "", bytes.NewReader(make([]byte, 1024)), 0); err != nil {
		t.Fatal(err)
	}
}

func TestPutFailedReadLeavesNothing(t *testing.T) {
	s, dir := newStore(t, nil)
	r := io.MultiReader(strings.NewReader("partial"), errReader{})
	if _, err := s.Put(context.Background(), "x", "", r, 0); err == nil {
		t.Fatal("want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, "x", "", strings.NewReader("data"), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled put: %v", err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Fatalf("failed uploads left %v", names)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestIDsNeverBecomePaths(t *testing.T) {
	s, dir := newStore(t, nil)
	outside := filepath.Join(filepath.Dir(dir), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../secret.txt", "..%2fsecret.txt", "/etc/hostname", "%2e%2e%2fsecret.txt",
		"0123456789abcdef0123456789abcde\x00", "0123456789ABCDEF0123456789ABCDEF", "cache", ""} {
		if _, _, err := s.Open(id); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("Open(%q) = %v, want ErrInvalidRef", id, err)
		}
		if _, err := s.Result(context.Background(), id); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("Result(%q) = %v, want ErrInvalidRef", id, err)
		}
		if err := s.Delete(id); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidRef", id, err)
		}
	}
	// A well-formed id planted as a symlink out of the store is refused by os.Root.
	id := "0123456789abcdef0123456789abcdef"
	if err := os.Symlink(outside, filepath.Join(dir, id+metaSuffix)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(id); err == nil {
		t.Fatalf("Open through a symlink out of the store succeeded")
	}
	if _, err := s.Stat("fedcba9876543210fedcba9876543210"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestDelete(t *testing.T) {
	s, dir := newStore(t, nil)
	m, err := s.Put(context.Background(), "a.txt", "", strings.NewReader("hello"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(m.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(m.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open after delete: %v", err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Fatalf("delete left %v", names)
	}
}
