package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the golden file at path or, with update (a test binary's
// -update flag), rewrites the file. pkg names the package in the hint on how to update.
func Golden(t testing.TB, path string, got []byte, update bool, pkg string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run go test %s -update to create it): %v", path, pkg, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test %s -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, pkg, got, want)
	}
}
