package host

import (
	"sort"
	"strings"
)

// SetAgentError marks an agent unavailable with the reason it cannot serve (its runner
// failed to build, import or start), or available again when err is nil. An unavailable
// agent is left out of Agents (so of /v1/models and the UIs' lists), and a turn for it is
// ErrUnavailable naming the reason; the other agents serve on.
func (rt *Runtime) SetAgentError(name string, err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	setAgentError(rt.agentErrs, name, err)
}

// AgentError is an agent that cannot serve, and why.
type AgentError struct {
	Name  string
	Error string
}

// Unavailable lists the agents marked unavailable, by name.
func (rt *Runtime) Unavailable() []AgentError {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return agentErrorList(rt.agentErrs)
}

// agentError is why the named agent cannot serve, or "".
func (rt *Runtime) agentError(name string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.agentErrs[name]
}

// unavailableErr is the error of a turn for an unavailable agent. The reason is the
// runner's start error, written for the agent's author, who is this server's user.
func unavailableErr(name, reason string) *ClientError {
	return clientErr(ErrUnavailable, "model", "agent %q is unavailable: %s", name, strings.TrimSpace(reason))
}

// SetReloadError records that reloading the agent's changed code failed (its new runner
// did not build, import or start) while its last good version keeps serving; nil clears
// it. It is reported, not enforced: turns still go to the agent.
func (rt *Runtime) SetReloadError(name string, err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	setAgentError(rt.reloadErrs, name, err)
}

// ReloadErrors lists the agents whose last reload failed, by name.
func (rt *Runtime) ReloadErrors() []AgentError {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return agentErrorList(rt.reloadErrs)
}

// AgentReloaded forgets what the agent's previous runner reported of itself
// (capabilities, native description), so the next use asks the new one.
func (rt *Runtime) AgentReloaded(name string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.caps, name)
	delete(rt.natives, name)
	delete(rt.nativeAsks, name)
	delete(rt.noSummarize, name)
}

// setAgentError records err as the named agent's in m, or clears it when err is nil.
// The caller holds rt.mu.
func setAgentError(m map[string]string, name string, err error) {
	if err == nil {
		delete(m, name)
		return
	}
	m[name] = err.Error()
}

// agentErrorList is m as a list, by name. The caller holds rt.mu.
func agentErrorList(m map[string]string) []AgentError {
	out := make([]AgentError, 0, len(m))
	for n, e := range m {
		out = append(out, AgentError{Name: n, Error: e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
