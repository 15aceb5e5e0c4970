// Package testutil holds helpers shared by the repository's tests.
package testutil

import (
	"fmt"
	"testing"
	"time"
)

// Eventually calls check until it returns nil and fails the test if it has not within
// timeout. check describes what it is still waiting for in its error, so that the failure
// reports the last state seen rather than the state when the wait began. The interval
// between calls starts at a millisecond and grows to 50ms: quick conditions are seen at
// once, slow ones are not polled in a busy loop.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	if err := Wait(timeout, check); err != nil {
		t.Fatal(err)
	}
}

// Wait is Eventually for code that cannot fail the test itself (a goroutine other than the
// test's, a helper that returns an error): it returns check's last error, prefixed with
// the timeout, or nil once check has passed.
func Wait(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	interval := time.Millisecond
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s: %w", timeout, err)
		}
		time.Sleep(interval)
		interval = min(2*interval, 50*time.Millisecond)
	}
}
