package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// AgentInfo describes a hosted agent.
type AgentInfo struct {
	Name        string
	Description string
	Framework   string
}

// Agents lists the hosted agents that can serve, in the order they were configured (the
// command line's): the first is every surface's default agent. Unavailable lists the others.
func (rt *Runtime) Agents() []AgentInfo {
	out := make([]AgentInfo, 0, len(rt.order))
	rt.mu.Lock()
	for _, n := range rt.order {
		a := rt.agents[n]
		if _, bad := rt.agentErrs[n]; bad {
			continue
		}
		out = append(out, AgentInfo{Name: a.Name, Description: a.Description, Framework: a.Framework})
	}
	rt.mu.Unlock()
	return out
}

// DefaultUser is the user of requests that name none.
func (rt *Runtime) DefaultUser() string { return rt.defUser }

func (rt *Runtime) agent(name string) (Agent, error) {
	if a, ok := rt.agents[name]; ok {
		if reason := rt.agentError(a.Name); reason != "" {
			return Agent{}, unavailableErr(a.Name, reason)
		}
		return a, nil
	}
	if name == "" && len(rt.agents) == 1 {
		for _, a := range rt.agents {
			if reason := rt.agentError(a.Name); reason != "" {
				return Agent{}, unavailableErr(a.Name, reason)
			}
			return a, nil
		}
	}
	if name == "" {
		// Of several agents only one can serve (the others are unavailable): it is the default.
		if up := rt.Agents(); len(up) == 1 {
			return rt.agents[up[0].Name], nil
		}
	}
	names := make([]string, 0, len(rt.agents))
	for n := range rt.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	if name == "" {
		return Agent{}, clientErr(ErrUnknownAgent, "model", "model is required: this server hosts %s", strings.Join(names, ", "))
	}
	return Agent{}, clientErr(ErrUnknownAgent, "model", "the model %q does not exist; this server hosts: %s", name, strings.Join(names, ", "))
}

// ResolveModel resolves an OpenAI-style "model" field, which names a hosted agent or
// overrides the model (KsADK's "model or agent name override"): a name that is no hosted
// agent goes to the only agent when there is just one, and comes back as override for
// TurnRequest.Model; with several agents it is ErrUnknownAgent naming them.
func (rt *Runtime) ResolveModel(model string) (agent AgentInfo, override string, err error) {
	agent, err = rt.ResolveAgent(model)
	if err == nil || model == "" || len(rt.agents) != 1 {
		return agent, "", err
	}
	for _, a := range rt.agents {
		agent = AgentInfo{Name: a.Name, Description: a.Description, Framework: a.Framework}
	}
	return agent, model, nil
}

// ResolveAgent returns the agent a request's model names (the only agent when empty and
// there is just one).
func (rt *Runtime) ResolveAgent(name string) (AgentInfo, error) {
	a, err := rt.agent(name)
	if err != nil {
		return AgentInfo{}, err
	}
	return AgentInfo{Name: a.Name, Description: a.Description, Framework: a.Framework}, nil
}

// NativeCall is the Call method the host makes for an agent's framework-native
// description when its runner's Describe carried none. A runner for which that
// description is costly answers it here, on first need, rather than at every process
// start: the ADK bridge's (ADK's app info and dev UI graphs) imports ADK's dev server and
// Graphviz, about 33 MB and a second a process, which a process serving turns never uses.
const NativeCall = "agent.native"

// AgentNative returns the framework-native description of the agent (nil when its
// runner has none): what it reported in Describe (DescribeResponse.native_json), else its
// answer to NativeCall, kept until the agent reloads. The ADK bridge's is the app info
// and graphs ADK's dev UI shows.
func (rt *Runtime) AgentNative(ctx context.Context, name string) (native json.RawMessage, err error) {
	ag, err := rt.agent(name)
	if err != nil {
		return nil, err
	}
	// One question at a time per agent: the dev UI asks for the app info and both modes'
	// graphs at once, and each answer may cost a runner process a second and 22 MB.
	var asking chan struct{}
	for asking == nil {
		rt.mu.Lock()
		kept, ok := rt.natives[ag.Name]
		other, busy := rt.nativeAsks[ag.Name]
		if !ok && !busy {
			asking = make(chan struct{})
			rt.nativeAsks[ag.Name] = asking
		}
		rt.mu.Unlock()
		if ok {
			return kept, nil
		}
		if busy {
			select {
			case <-other: // answered (or failed: then this caller asks)
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
			}
		}
	}
	defer func() {
		rt.mu.Lock()
		// A reload meanwhile forgot this question: its answer is the replaced runner's.
		if rt.nativeAsks[ag.Name] == asking {
			delete(rt.nativeAsks, ag.Name)
			if err == nil {
				rt.natives[ag.Name] = native
			}
		}
		rt.mu.Unlock()
		close(asking)
	}()
	return rt.askNative(ctx, ag)
}

// askNative asks the agent's runner for its native description: Describe's, else its
// answer to NativeCall.
func (rt *Runtime) askNative(ctx context.Context, ag Agent) (json.RawMessage, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := ag.Runner.Describe(dctx, &runnerv1.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("%w: describe the agent's runner: %w", ErrUnavailable, err)
	}
	native := json.RawMessage(d.GetNativeJson())
	if len(native) == 0 {
		resp, err := ag.Runner.Call(dctx, &runnerv1.CallRequest{Method: NativeCall, Json: []byte("null")})
		if err != nil && !refused(err) {
			return nil, callError(ag.Name, NativeCall, err)
		}
		if err != nil {
			// A runner without it (or whose own call method refuses names it does not
			// know some other way): no native description, which every caller has a
			// fallback for.
			if status.Code(err) != codes.Unimplemented {
				rt.log.Warn("the agent's runner refused its native description", "agent", ag.Name, "error", err)
			}
		} else {
			native = resp.GetJson()
		}
	}
	if len(native) == 0 || !json.Valid(native) || string(native) == "null" {
		return nil, nil
	}
	return native, nil
}

// refused reports whether a call's error is the runner's answer rather than a failure to
// reach it: asking again would get the same.
func refused(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch st.Code() { //nolint:exhaustive // the rest are answers
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted, codes.ResourceExhausted:
		return false
	}
	return true
}

// capabilities returns what the agent's runner reported in Describe (the supervisor
// asks when a runner process starts and answers from that), or nil when it cannot tell:
// the caller then assumes nothing is missing and lets the run report what fails.
func (rt *Runtime) capabilities(ctx context.Context, ag Agent) *runnerv1.Capabilities {
	rt.mu.Lock()
	c, ok := rt.caps[ag.Name]
	rt.mu.Unlock()
	if ok {
		return c
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := ag.Runner.Describe(dctx, &runnerv1.DescribeRequest{})
	if err != nil {
		rt.log.Warn("could not describe the agent's runner", "agent", ag.Name, "error", err)
		return nil
	}
	c = d.GetCapabilities()
	if c == nil {
		c = &runnerv1.Capabilities{}
	}
	rt.mu.Lock()
	rt.caps[ag.Name] = c
	if !c.Summarize {
		rt.noSummarize[ag.Name] = true // compaction uses its extractive summary
	}
	rt.mu.Unlock()
	return c
}
