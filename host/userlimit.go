package host

import "sync"

// userRuns counts each user's runs in progress, for Config.MaxRunsPerUser.
type userRuns struct {
	mu sync.Mutex
	n  map[string]int
}

// reserveRun takes one of user's run slots; false when all are taken.
func (rt *Runtime) reserveRun(user string) bool {
	if rt.maxRunsPerUser <= 0 {
		return true
	}
	u := &rt.userRuns
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[user] >= rt.maxRunsPerUser {
		return false
	}
	if u.n == nil {
		u.n = map[string]int{}
	}
	u.n[user]++
	return true
}

// releaseRun gives back a slot taken by reserveRun.
func (rt *Runtime) releaseRun(user string) {
	if rt.maxRunsPerUser <= 0 {
		return
	}
	u := &rt.userRuns
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[user]--; u.n[user] <= 0 {
		delete(u.n, user)
	}
}
