package workspace

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO in the workspace (or a socket, a device) is no workspace file: reading it must
// not wait for a writer for ever, listing leaves it out, and exporting skips it (or
// refuses it by name before writing anything).
func TestFIFOIsNotAFile(t *testing.T) {
	w, dir := newWS(t, 1<<20)
	write(t, w, "a.txt", "hello")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err) // no FIFOs on this file system
	}

	done := make(chan error, 1)
	go func() {
		f, _, err := w.Open("pipe")
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrConflict) {
			t.Errorf("Open(pipe) = %v, want ErrConflict", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open(pipe) still waiting after 5 s")
	}

	if _, err := w.Stat("pipe"); !errors.Is(err, ErrConflict) {
		t.Errorf("Stat(pipe) = %v, want ErrConflict", err)
	}
	entries, _, err := w.List(context.Background(), ".", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "pipe" {
			t.Errorf("listed %+v", e)
		}
	}
	var buf bytes.Buffer
	if err := w.ExportZip(context.Background(), "pipe", &buf); !errors.Is(err, ErrConflict) || buf.Len() != 0 {
		t.Errorf("ExportZip(pipe) = %v with %d bytes written, want ErrConflict and nothing", err, buf.Len())
	}
	buf.Reset()
	if err := w.ExportZip(context.Background(), ".", &buf); err != nil {
		t.Fatal(err)
	}
	if names := zipNames(t, buf.Bytes()); len(names) != 1 || names[0] != "a.txt" {
		t.Errorf("zip has %v, want [a.txt]", names)
	}
}
