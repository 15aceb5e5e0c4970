package runnerproc

import "golang.org/x/sys/unix"

// defunct reports whether pid, a child of this process, has terminated and is not
// reaped yet (a zombie). It asks waitid without reaping (WNOWAIT), so the process's
// own Wait still collects it: one system call, no /proc read, run before every call.
// For anything that is not a waitable child of ours it reports false.
func defunct(pid int) bool {
	if pid <= 0 {
		return false
	}
	var info unix.Siginfo // zeroed: stays so when the child has not exited
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}
