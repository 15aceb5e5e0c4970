package runnerproc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// defunct reports whether pid, a child of this process, has terminated: a zombie not
// reaped yet, or already reaped by go-plugin's Wait before its done context is closed.
// It asks waitid without reaping (WNOWAIT), so the process's own Wait still collects
// it: one system call on the hot path, run before every call. A pid that is not a
// waitable child (ECHILD) is dead only if it no longer exists at all.
func defunct(pid int) bool {
	if pid <= 0 {
		return false
	}
	var info unix.Siginfo // zeroed: stays so when the child has not exited
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if errors.Is(err, unix.ECHILD) {
		return errors.Is(unix.Kill(pid, 0), unix.ESRCH)
	}
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}
