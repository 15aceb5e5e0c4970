package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Stopped reports (nil) whether every thread of process pid is stopped by a signal (Linux
// /proc). A SIGSTOP takes effect as each thread is next scheduled: on a loaded machine
// one thread of a just-stopped process can still answer a request meanwhile, so a test
// that means to talk to a stopped process waits for this first.
func Stopped(pid int) error {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return fmt.Errorf("process %d has no threads to read (%v)", pid, err)
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		// The state follows the parenthesised command name, which may hold spaces.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		if fields := bytes.Fields(rest); len(fields) == 0 || string(fields[0]) != "T" {
			return fmt.Errorf("%s: not stopped (%q)", f, rest[:min(len(rest), 4)])
		}
	}
	return nil
}
