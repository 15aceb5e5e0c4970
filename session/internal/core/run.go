package core

import (
	"encoding/json"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// NewRun validates a run to start and returns the record to store; the backend sets
// its times. A run with a terminal status is recorded whole (StartRun's second use): it
// must create its session.
func NewRun(run session.Run) (session.Run, error) {
	if err := ValidKey(run.Key); err != nil {
		return run, err
	}
	if run.InvocationID == "" {
		return run, fmt.Errorf("%w: run needs an invocation id", session.ErrInvalid)
	}
	switch {
	case run.Status == "":
		run.Status = session.StatusInProgress
	case session.IsTerminalStatus(run.Status):
		if !run.CreateSession {
			return run, fmt.Errorf("%w: a run recorded whole (status %q) must create its session", session.ErrInvalid, run.Status)
		}
	case run.Status != session.StatusInProgress:
		return run, fmt.Errorf("%w: a run starts in_progress or is recorded whole with a terminal status, not %q", session.ErrInvalid, run.Status)
	}
	if len(run.Meta) > 0 && !json.Valid(run.Meta) {
		return run, fmt.Errorf("%w: run meta is not valid JSON", session.ErrInvalid)
	}
	run.Deleted = false
	run.Meta = CopyBytes(run.Meta)
	return run, nil
}

// KnownStatus returns the run status constant equal to s, or s: a status decoded from a
// request or an event is a new string, and a store that keeps it need not.
func KnownStatus(s string) string {
	for _, known := range [...]string{session.StatusInProgress, session.StatusCompleted, session.StatusFailed,
		session.StatusCancelled, session.StatusInterrupted} {
		if s == known {
			return known
		}
	}
	return s
}

// CheckFinish validates FinishRun's arguments.
func CheckFinish(key session.Key, invocationID, status string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if invocationID == "" {
		return fmt.Errorf("%w: finish needs an invocation id", session.ErrInvalid)
	}
	if !session.IsTerminalStatus(status) {
		return fmt.Errorf("%w: %q is not a terminal run status", session.ErrInvalid, status)
	}
	return nil
}

// CopyRun deep-copies a run record.
func CopyRun(r session.Run) session.Run {
	r.Meta = CopyBytes(r.Meta)
	return r
}

// Whole reports whether a validated run is recorded whole, start and end in one write.
func Whole(run session.Run) bool { return run.Status != session.StatusInProgress }
