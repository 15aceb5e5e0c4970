package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"
)

// listenFirst binds the server's address before anything is installed or started, so a
// busy port is reported at once rather than after a minute of pip and runner start.
func listenFirst(host string, port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("port %d on %s is already in use (another agentengine or server is listening there); nothing was installed or started: stop that process, or choose another port with -p (e.g. -p %d, or -p 0 for any free port)",
			port, host, port+1)
	case errors.Is(err, syscall.EACCES):
		return nil, fmt.Errorf("no permission to listen on port %d on %s (ports below 1024 need privileges): choose another port with -p (e.g. -p 8080)", port, host)
	}
	return nil, fmt.Errorf("listen on %s:%d: %w", host, port, err)
}

// elapsed is a duration for progress lines: "2.3s", "1m04s".
func elapsed(since time.Time) string {
	d := time.Since(since)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
