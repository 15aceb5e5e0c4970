package prefork

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Supported: pre-forking works on this OS.
const Supported = true

// socketpair makes the zygote's control socket: SOCK_SEQPACKET keeps each request and
// answer one message, with the descriptors it carries.
func socketpair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
}

// openPidfd returns a pidfd for pid, or -1 (gone already, or a kernel without pidfds).
func openPidfd(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closePidfd(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// pidfdExited: a pidfd is readable once its process has exited (zombie included).
func pidfdExited(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// waitExit returns once pid has exited (a zombie counts: the process is not our child,
// and whoever reaps it may be slow): when its pidfd becomes readable, or else by polling.
func waitExit(pid, pidfd int) {
	if pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}
	for !exited(pid) {
		time.Sleep(100 * time.Millisecond)
	}
}

// exited: pid is gone or a zombie.
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}
