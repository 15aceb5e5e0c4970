package session

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

type sqlStateErr string

func (e sqlStateErr) Error() string    { return "sqlstate " + string(e) }
func (e sqlStateErr) SQLState() string { return string(e) }

func TestIsUnavailable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("boom"), false},
		{fmt.Errorf("read: %w", ErrNotFound), false},
		{fmt.Errorf("append: %w", ErrInvalid), false},
		{fmt.Errorf("store closed: %w", ErrUnavailable), true},
		{fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{fmt.Errorf("query: %w", sqlStateErr("08006")), true},   // connection failure
		{fmt.Errorf("query: %w", sqlStateErr("57P01")), true},   // admin shutdown
		{fmt.Errorf("insert: %w", sqlStateErr("23505")), false}, // unique violation
		{fmt.Errorf("insert: %w", sqlStateErr("53100")), false}, // disk full: the store answers
	} {
		if got := IsUnavailable(tt.err); got != tt.want {
			t.Errorf("IsUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
