package runnerproc

import "errors"

// BreakLane breaks the current process's run lane as a runner's death does, before the
// supervisor has noticed the death any other way. It reports whether there was a lane.
func BreakLane(s *Supervisor) bool {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p == nil || p.lane == nil {
		return false
	}
	p.lane.fail(errors.New("broken by the test"))
	return true
}
