package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	agentengine "github.com/agentengine/agentengine"
	"github.com/agentengine/agentengine/host/prefork"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/host/pybridge"
	"github.com/agentengine/agentengine/host/pyenv"
	"github.com/agentengine/agentengine/host/runnerpool"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/metrics"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// Default runner start timeouts: a Python runner imports its framework before the
// handshake (langchain + langgraph take seconds on a cold 2-core machine).
const (
	goStartTimeout     = 60 * time.Second
	pythonStartTimeout = 120 * time.Second
)

// extractBridge puts the embedded Python bridge into the user's cache directory.
func extractBridge() (pybridge.Bridge, error) {
	return pybridge.Extract(agentengine.PythonBridge, pybridge.CacheRoot())
}

// pythonEnvOptions are the setup options for a project: the runner SDK's requirements
// come from the embedded runner-requirements.txt.
func pythonEnvOptions(out io.Writer, display string) (pyenv.Options, error) {
	runner, err := pybridge.RunnerRequirements(agentengine.PythonBridge)
	if err != nil {
		return pyenv.Options{}, err
	}
	return pyenv.Options{Runner: runner, Out: out, DisplayDir: display}, nil
}

// agentRunner is one agent's runner: a supervisor, or a pool of them.
type agentRunner interface {
	runnerv1.RunnerClient
	Start(ctx context.Context) error
	Close(ctx context.Context) error
}

// launchOptions are what newAgentRunner needs besides the project.
type launchOptions struct {
	display   string // the project dir as the user wrote it
	startWait time.Duration
	// stallWait is the runners' stall timeout (0: runnerproc's default).
	stallWait time.Duration
	progress  io.Writer
	log       hclog.Logger
	bridge    func() (pybridge.Bridge, error)
	// binarySuffix names a reload's Go runner build apart from the running one's.
	binarySuffix string
	// checkedPython is an interpreter whose environment already passed CheckRunner (the
	// running version's, on a reload): unless setup installs into it, it is not checked
	// again, which saves a Python start per reload.
	checkedPython string
	metrics       *metrics.Metrics
}

// newAgentRunner prepares a project's environment and returns its (unstarted) runner.
// A Python project that declares requirements but has no environment gets one first,
// with pip's progress on the terminal.
func newAgentRunner(ctx context.Context, p *project.Project, o launchOptions) (agentRunner, error) {
	bo := project.BuildOptions{Progress: o.progress, BinarySuffix: o.binarySuffix}
	timeout := o.startWait
	if p.IsPython() {
		b, err := o.bridge()
		if err != nil {
			return nil, err
		}
		opt, err := pythonEnvOptions(o.progress, o.display)
		if err != nil {
			return nil, err
		}
		need, err := pyenv.Needed(p, opt.Runner)
		if err != nil {
			return nil, fmt.Errorf("prepare the Python environment of %s: %w", o.display, err)
		}
		if err := pyenv.Ensure(ctx, p, opt); err != nil {
			return nil, fmt.Errorf("prepare the Python environment of %s: %w", o.display, err)
		}
		// An environment the runner cannot load in (protobuf out of range) is
		// reported here, naming the package, rather than as a failed runner start.
		in, _ := p.FindPython()
		if need.None() && o.checkedPython != "" && in.Path == o.checkedPython {
			// Checked when the running version started, and nothing was installed since.
		} else if err := pyenv.CheckRunner(ctx, p, opt.Runner, o.display); err != nil {
			return nil, err
		}
		if err := pyenv.CheckRunnerClass(ctx, p, o.display); err != nil {
			return nil, err
		}
		bo.PythonPath = b.PythonPath()
		if timeout <= 0 {
			timeout = pythonStartTimeout
		}
	} else {
		if err := checkSDKCopy(p, o.display); err != nil {
			return nil, err
		}
		if timeout <= 0 {
			timeout = goStartTimeout
		}
	}
	l, err := p.RunnerLaunch(ctx, bo)
	if err != nil {
		return nil, err
	}
	// AGENTENGINE_PREFORK=on: a Python agent's processes fork from a zygote that
	// imported the agent once (host/prefork) instead of each starting an interpreter.
	var zygote *prefork.Zygote
	if p.IsPython() && prefork.Supported && preforkOn(os.Getenv("AGENTENGINE_PREFORK")) {
		zygote = prefork.New(prefork.Config{
			Command: l.Command, Dir: l.Dir, Env: l.Env, StartTimeout: timeout,
			Logger: o.log.Named(p.Name),
		})
	}
	member := func(i int) runnerpool.Member {
		name := p.Name
		if i > 0 || p.Processes > 1 {
			name = fmt.Sprintf("%s#%d", p.Name, i+1)
		}
		var ev runnerproc.Events
		ev.Started, ev.Stopped, ev.Failed = o.metrics.Runner(p.Name)
		var fork runnerproc.ForkFunc
		if zygote != nil {
			fork = func(ctx context.Context, env []string, stdout, stderr *os.File) (runnerproc.Forked, error) {
				c, err := zygote.Fork(ctx, env, stdout, stderr)
				if err != nil {
					return nil, err
				}
				return c, nil
			}
		}
		return runnerproc.New(runnerproc.Config{
			Fork:         fork,
			Events:       ev,
			Name:         name,
			Command:      l.Command,
			Dir:          l.Dir,
			Env:          l.Env,
			StartTimeout: timeout,
			StallTimeout: o.stallWait,
			Logger:       o.log.Named(p.Name),
		})
	}
	var r agentRunner
	switch {
	case p.MaxProcesses > p.Processes:
		r = runnerpool.NewScaling(runnerpool.ScalingConfig{
			Max: p.MaxProcesses, NewMember: member, Logger: o.log.Named(p.Name).Named("pool"),
		})
	case p.Processes == 1:
		r = member(0).(*runnerproc.Supervisor)
	default:
		members := make([]runnerpool.Member, p.Processes)
		for i := range members {
			members[i] = member(i)
		}
		r = runnerpool.New(members...)
	}
	if zygote != nil {
		return &zygoteRunner{agentRunner: r, zygote: zygote}, nil
	}
	return r, nil
}

// preforkOn reads AGENTENGINE_PREFORK.
func preforkOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "on", "true", "yes":
		return true
	}
	return false
}

// zygoteRunner is a runner whose processes fork from a zygote: closing it stops the
// zygote after the processes.
type zygoteRunner struct {
	agentRunner
	zygote *prefork.Zygote
}

func (r *zygoteRunner) Close(ctx context.Context) error {
	err := r.agentRunner.Close(ctx)
	return errors.Join(err, r.zygote.Close(ctx))
}

// Startable forwards to the runner's (see agentSlot).
func (r *zygoteRunner) Startable() error {
	if s, ok := r.agentRunner.(interface{ Startable() error }); ok {
		return s.Startable()
	}
	return nil
}

// startHint adds where to look when a Python runner does not start.
func startHint(p *project.Project, display string, err error) error {
	if !p.IsPython() {
		return err
	}
	return fmt.Errorf("%w\n`agentengine doctor %s` checks the interpreter, the packages and the entry point", err, display)
}
