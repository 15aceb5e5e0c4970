package core

import (
	"math"
	"sync/atomic"
	"time"
)

// Clock hands out strictly increasing UTC timestamps with nanosecond precision, so
// UpdatedAt ordering is total within a store even when the wall clock is coarse or
// steps back.
type Clock struct {
	last atomic.Int64
}

// Now returns a time strictly after every time this clock returned before.
func (c *Clock) Now() time.Time {
	for {
		last := c.last.Load()
		n := time.Now().UnixNano()
		if n <= last {
			n = last + 1
		}
		if c.last.CompareAndSwap(last, n) {
			return time.Unix(0, n).UTC()
		}
	}
}

// Norm is the canonical form of a stored time: UTC, no monotonic reading, so values
// compare equal across backends and round trips.
func Norm(t time.Time) time.Time {
	return time.Unix(0, t.UnixNano()).UTC()
}

// InRange reports whether t is representable as int64 Unix nanoseconds, the unit every
// backend stores.
func InRange(t time.Time) bool {
	return !t.Before(time.Unix(0, math.MinInt64)) && !t.After(time.Unix(0, math.MaxInt64))
}
