package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	agentengine "github.com/agentengine/agentengine"
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
		// An environment the runner cannot load in (protobuf or grpcio out of range) is
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
	member := func(i int) runnerpool.Member {
		name := p.Name
		if i > 0 || p.Processes > 1 {
			name = fmt.Sprintf("%s#%d", p.Name, i+1)
		}
		var ev runnerproc.Events
		ev.Started, ev.Stopped, ev.Failed = o.metrics.Runner(p.Name)
		return runnerproc.New(runnerproc.Config{
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
	if p.MaxProcesses > p.Processes {
		return runnerpool.NewScaling(runnerpool.ScalingConfig{
			Max: p.MaxProcesses, NewMember: member, Logger: o.log.Named(p.Name).Named("pool"),
		}), nil
	}
	if p.Processes == 1 {
		return member(0).(*runnerproc.Supervisor), nil
	}
	members := make([]runnerpool.Member, p.Processes)
	for i := range members {
		members[i] = member(i)
	}
	return runnerpool.New(members...), nil
}

// startHint adds where to look when a Python runner does not start.
func startHint(p *project.Project, display string, err error) error {
	if !p.IsPython() {
		return err
	}
	return fmt.Errorf("%w\n`agentengine doctor %s` checks the interpreter, the packages and the entry point", err, display)
}
