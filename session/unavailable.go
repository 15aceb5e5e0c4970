package session

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// ErrUnavailable: the store cannot be reached or takes no requests at the moment (a
// database that is down or restarting, a closed store). Retrying later may succeed.
var ErrUnavailable = errors.New("session store unavailable")

// IsUnavailable reports whether err means the store is unavailable rather than that the
// request failed: ErrUnavailable, a network failure reaching it (refused, reset, closed,
// cut short), or a database's SQLSTATE of a lost connection (class 08) or of a server
// shutting down or starting up (57P01-57P03). Errors are recognised by their standard
// types and the SQLState method drivers give them, so no backend is named here.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var (
		ne *net.OpError
		sq interface{ SQLState() string }
	)
	switch {
	case errors.Is(err, ErrUnavailable), errors.As(err, &ne),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF):
		// A connection cut mid-answer: pgx returns it bare, with nothing else to tell.
		return true
	case errors.As(err, &sq):
		code := sq.SQLState()
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
	}
	return false
}
