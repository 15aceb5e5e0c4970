package main

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Go project's SDK copy holds the SDK and what it imports: the runner documents (wire),
// the protocol and the internal packages Serve needs, no tests and nothing of the host.
func TestGoProjectSDKCopyHoldsOnlyTheSDK(t *testing.T) {
	dst := t.TempDir()
	if err := copySDK(dst); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	err := filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			t.Errorf("the copy has a test: %s", path)
		}
		rel, _ := filepath.Rel(dst, filepath.Dir(path))
		dirs[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for d := range dirs {
		got = append(got, d)
	}
	slices.Sort(got)
	want := []string{".", "internal/gopool", "internal/jsonscan", "internal/protolimit", "internal/runnerplugin",
		"pluginsdk", "pluginsdk/internal/service", "pluginsdk/proto/runner/v1", "wire"}
	if !slices.Equal(got, want) {
		t.Errorf("the SDK copy's directories are %v, want %v", got, want)
	}
}
