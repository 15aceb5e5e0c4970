package workspace

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

func newWS(t *testing.T, max int64) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "workspace")
	w, err := Open(Config{Dir: dir, MaxUploadBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	// A secret beside the workspace, which nothing may reach.
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return w, dir
}

func write(t *testing.T, w *Workspace, p, content string) {
	t.Helper()
	if _, err := w.Write(context.Background(), p, strings.NewReader(content)); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// traversals are client paths that must never resolve.
var traversals = []string{
	"../secret.txt", "a/../../secret.txt", "..", "/etc/passwd", "//etc/passwd", "C:/Windows", "c:secret",
	"..\\secret.txt", "a\\..\\..\\secret.txt", "%2e%2e/secret.txt", "%2E%2E%2Fsecret.txt", "a/%2e%2e%2f%2e%2e%2fsecret.txt",
	"..%2fsecret.txt", "..%5csecret.txt", "a%00b", "a\x00/b", "ok/\x00", "a\nb", strings.Repeat("a/", 3000),
}

func TestClean(t *testing.T) {
	for _, p := range traversals {
		if got, err := Clean(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Clean(%q) = %q, %v; want ErrInvalidPath", p, got, err)
		}
	}
	for in, want := range map[string]string{"": ".", ".": ".", "./": ".", "a/b": "a/b", "./a//b/": "a/b", "a/./b": "a/b",
		"100%": "100%", "%41.txt": "%41.txt", "日本/語.txt": "日本/語.txt", "..a/b..": "..a/b.."} {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, p := range append(traversals, "a/b", "./x", "%2e", "") {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := Clean(p)
		if err != nil {
			return
		}
		if rel == "." {
			return
		}
		if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\\\x00") {
			t.Fatalf("Clean(%q) = %q", p, rel)
		}
		for _, el := range strings.Split(rel, "/") {
			if el == "" || el == "." || el == ".." {
				t.Fatalf("Clean(%q) = %q has element %q", p, rel, el)
			}
		}
		if !filepath.IsLocal(rel) {
			t.Fatalf("Clean(%q) = %q is not local", p, rel)
		}
		// A name a JSON client cannot spell would be unreachable (listed with U+FFFD).
		if !utf8.ValidString(rel) {
			t.Fatalf("Clean(%q) = %q is not UTF-8", p, rel)
		}
		if again, err := Clean(rel); err != nil || again != rel {
			t.Fatalf("Clean(Clean(%q)) = %q, %v; want %q", p, again, err, rel)
		}
	})
}

func TestTraversalRejectedEverywhere(t *testing.T) {
	w, dir := newWS(t, 1<<20)
	ctx := context.Background()
	for _, p := range traversals {
		if _, _, err := w.List(ctx, p, true); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("List(%q): %v", p, err)
		}
		if _, _, err := w.Open(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Open(%q): %v", p, err)
		}
		if _, err := w.Write(ctx, p, strings.NewReader("x")); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Write(%q): %v", p, err)
		}
		if err := w.Delete(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Delete(%q): %v", p, err)
		}
		if err := w.ExportZip(ctx, p, io.Discard); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ExportZip(%q): %v", p, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("rejected writes left %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), "secret.txt")); string(b) != "secret" {
		t.Fatal("the secret beside the workspace changed")
	}
}

func TestSymlinks(t *testing.T) {
	w, dir := newWS(t, 1<<20)
	ctx := context.Background()
	base := filepath.Dir(dir)
	write(t, w, "docs/in.txt", "inside")
	must(t, os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(dir, "out-file")))
	must(t, os.Symlink(base, filepath.Join(dir, "out-dir")))
	must(t, os.Symlink("../../secret.txt", filepath.Join(dir, "docs", "rel-out")))
	must(t, os.Symlink("in.txt", filepath.Join(dir, "docs", "in-link")))

	for _, p := range []string{"out-file", "out-dir/secret.txt", "docs/rel-out"} {
		if _, _, err := w.Open(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Open(%q) through a link out: %v", p, err)
		}
	}
	if _, err := w.Write(ctx, "out-dir/planted.txt", strings.NewReader("x")); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("Write through a link out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "planted.txt")); !os.IsNotExist(err) {
		t.Fatal("a write escaped through a symlink")
	}
	if _, _, err := w.List(ctx, "out-dir", false); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("List through a link out: %v", err)
	}
	// A link inside the workspace is followed.
	f, _, err := w.Open("docs/in-link")
	if err != nil {
		t.Fatalf("in-workspace link: %v", err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "inside" {
		t.Fatalf("in-workspace link read %q", b)
	}
	// Listings leave out links that lead out.
	ents, _, err := w.List(ctx, ".", true)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		paths = append(paths, e.Path)
	}
	if strings.Join(paths, ",") != "docs,docs/in-link,docs/in.txt" {
		t.Fatalf("listing %v", paths)
	}
	// Exports skip every link.
	var zb bytes.Buffer
	if err := w.ExportZip(ctx, ".", &zb); err != nil {
		t.Fatal(err)
	}
	if names := zipNames(t, zb.Bytes()); strings.Join(names, ",") != "docs/in.txt" {
		t.Fatalf("export holds %v", names)
	}
	// Deleting a link removes the link, not its target.
	must(t, w.Delete("out-file"))
	if b, _ := os.ReadFile(filepath.Join(base, "secret.txt")); string(b) != "secret" {
		t.Fatal("deleting a link touched its target")
	}
}

func TestWriteListReadDelete(t *testing.T) {
	w, _ := newWS(t, 1<<20)
	ctx := context.Background()
	write(t, w, "a/b/c.txt", "hello")
	write(t, w, "a/b/c.txt", "replaced")
	write(t, w, "top.html", "<p>x</p>")
	ents, trunc, err := w.List(ctx, ".", false)
	if err != nil || trunc {
		t.Fatal(err)
	}
	if len(ents) != 2 || ents[0].Path != "a" || !ents[0].IsDir() || ents[0].SizeBytes != nil || ents[1].Path != "top.html" ||
		*ents[1].MimeType != "text/html; charset=utf-8" || *ents[1].SizeBytes != 8 || ents[1].ModifiedAt == "" {
		t.Fatalf("listing %+v", ents)
	}
	f, e, err := w.Open("a/b/c.txt")
	must(t, err)
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "replaced" || e.Name != "c.txt" {
		t.Fatalf("read %q %+v", b, e)
	}
	if _, _, err := w.Open("a/b"); !errors.Is(err, ErrConflict) {
		t.Fatalf("open a directory: %v", err)
	}
	if _, err := w.Write(ctx, "a/b", strings.NewReader("x")); !errors.Is(err, ErrConflict) {
		t.Fatalf("write over a directory: %v", err)
	}
	if _, err := w.Write(ctx, "top.html/x", strings.NewReader("x")); !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("write under a file: %v", err)
	}
	if err := w.Delete("a"); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("delete a non-empty dir: %v", err)
	}
	if err := w.Delete("."); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("delete the root: %v", err)
	}
	if err := w.Delete("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete a missing file: %v", err)
	}
	must(t, w.Delete("a/b/c.txt"))
	must(t, w.Delete("a/b"))
	if _, _, err := w.List(ctx, "top.html", false); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("list a file: %v", err)
	}
}

func TestWriteOverLimitLeavesNothing(t *testing.T) {
	w, dir := newWS(t, 1024)
	_, err := w.Write(context.Background(), "sub/big.bin", bytes.NewReader(make([]byte, 1025)))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	st, err := w.Stage(context.Background(), bytes.NewReader(make([]byte, 1025)))
	if !errors.Is(err, ErrTooLarge) || st != nil {
		t.Fatalf("stage: %v", err)
	}
	st, err = w.Stage(context.Background(), strings.NewReader("ok"))
	must(t, err)
	st.Discard()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("rejected writes left %v", ents)
	}
}

func TestExportZip(t *testing.T) {
	w, _ := newWS(t, 1<<20)
	write(t, w, "site/index.html", "<h1>hi</h1>")
	write(t, w, "site/css/a.css", "p{}")
	write(t, w, "other.txt", "x")
	var b bytes.Buffer
	must(t, w.ExportZip(context.Background(), "site", &b))
	if names := zipNames(t, b.Bytes()); strings.Join(names, ",") != "css/a.css,index.html" {
		t.Fatalf("export %v", names)
	}
	b.Reset()
	must(t, w.ExportZip(context.Background(), "other.txt", &b))
	if names := zipNames(t, b.Bytes()); strings.Join(names, ",") != "other.txt" {
		t.Fatalf("single-file export %v", names)
	}
	if err := w.ExportZip(context.Background(), "missing", io.Discard); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func zipNames(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	must(t, err)
	var out []string
	for _, f := range zr.File {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
