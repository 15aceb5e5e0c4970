package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Per user, each user's files are in their own directory under the root: another user
// neither lists nor reads them, and ids that are not plain names (separators, "..")
// stay inside the root.
func TestPerUserWorkspaces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workspaces")
	w, err := Open(Config{Dir: dir, PerUser: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	if w.Shared() {
		t.Fatal("per-user workspace reports shared")
	}
	ids := []string{"alice", "Alice", "bob", "../escape", "a/b", "..", ".", "~x", "日本", strings.Repeat("u", 256)}
	for _, u := range ids {
		uw, err := w.For(u)
		if err != nil {
			t.Fatalf("For(%q): %v", u, err)
		}
		write(t, uw, "note.txt", "of "+u)
		if again, _ := w.For(u); again != uw {
			t.Errorf("For(%q) opened a second workspace", u)
		}
	}
	for _, u := range ids {
		uw, _ := w.For(u)
		f, _, err := uw.Open("note.txt")
		if err != nil {
			t.Fatalf("%q reads its note: %v", u, err)
		}
		b := make([]byte, 1024)
		n, _ := f.Read(b)
		f.Close()
		if string(b[:n]) != "of "+u {
			t.Errorf("%q reads %q", u, b[:n])
		}
		entries, _, err := uw.List(context.Background(), ".", true)
		if err != nil || len(entries) != 1 {
			t.Errorf("%q lists %v, %v", u, entries, err)
		}
	}
	// Every directory is a direct child of the root; nothing was written beside it.
	got, err := os.ReadDir(dir)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("root holds %d entries (%v), want %d", len(got), err, len(ids))
	}
	if parent, _ := os.ReadDir(filepath.Dir(dir)); len(parent) != 1 {
		t.Errorf("beside the root: %v", parent)
	}
	// The parent itself serves no files.
	if _, _, err := w.List(context.Background(), ".", true); !errors.Is(err, errPerUser) {
		t.Errorf("parent List: %v", err)
	}
	if _, err := w.Write(context.Background(), "x.txt", strings.NewReader("x")); !errors.Is(err, errPerUser) {
		t.Errorf("parent Write: %v", err)
	}
	if _, err := w.For(""); err == nil {
		t.Error("For(\"\") succeeded")
	}
}

// Shared, For is the workspace itself for everyone.
func TestSharedWorkspaceForEveryUser(t *testing.T) {
	w, _ := newWS(t, 0)
	if !w.Shared() {
		t.Fatal("not shared")
	}
	for _, u := range []string{"alice", "bob"} {
		if uw, err := w.For(u); err != nil || uw != w {
			t.Errorf("For(%q) = %p, %v", u, uw, err)
		}
	}
}

func TestUserDir(t *testing.T) {
	if userDir("Alice") == userDir("alice") || strings.EqualFold(userDir("Alice"), userDir("alice")) {
		t.Error("Alice and alice could share a directory on a case-insensitive file system")
	}
	for in, plain := range map[string]bool{"alice": true, "a.b-c_d@x": true, "Alice": false, "..": false, ".hidden": false, "a/b": false, "~x": false, "": false} {
		got := userDir(in)
		if (got == in) != plain || got == "" || strings.ContainsAny(got, "/\\") || got == "." || got == ".." {
			t.Errorf("userDir(%q) = %q", in, got)
		}
	}
}
