//go:build !linux

package prefork

import (
	"errors"
	"syscall"
	"time"
)

// Supported: pre-forking works on this OS (Linux only: it needs SOCK_SEQPACKET unix
// sockets, and the Python runners' fork server is tested there).
const Supported = false

func socketpair() ([2]int, error) {
	return [2]int{}, errors.New("pre-forking runner processes needs Linux")
}

func openPidfd(int) int    { return -1 }
func closePidfd(int)       {}
func pidfdExited(int) bool { return false }

func waitExit(pid, _ int) {
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(100 * time.Millisecond)
	}
}
