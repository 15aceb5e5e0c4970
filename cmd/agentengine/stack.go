package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/host/pybridge"
	"github.com/agentengine/agentengine/host/workspace"
	"github.com/agentengine/agentengine/internal/memtrim"
	"github.com/agentengine/agentengine/internal/metrics"
	"github.com/agentengine/agentengine/internal/tracing"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/backend"
	"github.com/agentengine/agentengine/session/postgres"
)

// storeFlags select the session backend; empty values fall back to the seed's env vars
// and then to the first project's .agentengine/ui/sessions.sqlite.
type storeFlags struct {
	backend string
	path    string
	dsn     string
}

// stack is everything a serving or interactive agentengine process runs: the store,
// one runner supervisor per project and the runtime on top.
type stack struct {
	store   session.Store
	backend string // the selected session backend's name
	// uploads and workspaces back the Web UI's file actions.
	uploads    *attach.Store
	workspaces map[string]*workspace.Workspace
	runners    []agentRunner
	// slots are the agents' runners by project, in the order given (reload swaps them).
	slots   []*agentSlot
	project []*project.Project
	display []string // each project's directory as the user wrote it
	launch  launchOptions
	// loadOpts are applied to a project each time it is loaded (again, on reload).
	extraEnv   map[string]string
	isolateEnv bool
	runtime    *host.Runtime
	log        hclog.Logger

	// traces are the recent traces (nil when tracing is off).
	traces *tracing.Recent

	// ksadkAgents are the agents whose project sets openai_compat: ksadk.
	ksadkAgents []string
}

type stackOptions struct {
	dirs      []string
	store     storeFlags
	log       hclog.Logger
	progress  io.Writer
	startWait time.Duration
	// stallWait bounds a run's silence before its runner must answer a health check.
	stallWait time.Duration
	// env is set in every project's runner environment, over its own (run --model).
	env map[string]string
	// maxRunsPerUser caps each user's runs in progress (0: no cap).
	maxRunsPerUser int
	// maxStateBytes bounds each state tier (0: the default, negative: none).
	maxStateBytes int64
	// strict: any agent that fails to build, import or start stops the server (else it
	// is marked unavailable and the others serve).
	strict bool
	// isolateEnv gives runners only their configured environment (run --isolate-env).
	isolateEnv bool
	// metrics, when set, receives the runtime's and the runners' metrics.
	metrics *metrics.Metrics
	// tracing, when set, traces the turns.
	tracing *tracing.Tracing
}

func openStack(ctx context.Context, opt stackOptions) (*stack, error) {
	if len(opt.dirs) == 0 {
		opt.dirs = []string{"."}
	}
	projects := make([]*project.Project, 0, len(opt.dirs))
	seen := map[string]string{}
	for _, d := range opt.dirs {
		p, err := project.Load(d)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[p.Name]; dup {
			return nil, fmt.Errorf("two projects are named %q (%s and %s): agent names must be unique; rename one in its agentengine.yaml", p.Name, other, p.Dir)
		}
		seen[p.Name] = p.Dir
		if len(opt.env) > 0 && p.Env == nil {
			p.Env = map[string]string{}
		}
		maps.Copy(p.Env, opt.env)
		p.IsolateEnv = opt.isolateEnv
		projects = append(projects, p)
	}

	storeCfg := backend.Config{
		Backend:    opt.store.backend,
		Path:       opt.store.path,
		DSN:        opt.store.dsn,
		ProjectDir: projects[0].Dir,
		Getenv:     os.Getenv,
	}
	sel, err := backend.Select(storeCfg)
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	st, err := backend.Open(ctx, storeCfg)
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	s := &stack{store: st, backend: sel.Backend, log: opt.log, extraEnv: opt.env, isolateEnv: opt.isolateEnv, traces: opt.tracing.Recent()}

	agents := make([]host.Agent, 0, len(projects))
	lo := launchOptions{startWait: opt.startWait, stallWait: opt.stallWait, progress: opt.progress, log: opt.log, bridge: onceBridge(), metrics: opt.metrics}
	s.launch = lo
	var failed []error
	for i, p := range projects {
		lo.display = opt.dirs[i]
		for _, w := range p.Warnings {
			opt.log.Warn(w)
		}
		r, err := startAgentRunner(ctx, p, lo)
		if err != nil && (opt.strict || ctx.Err() != nil) {
			s.close(context.Background())
			return nil, err
		}
		if err != nil {
			failed = append(failed, err)
			opt.log.Error("agent unavailable: its runner did not start; the other agents serve", "agent", p.Name, "error", err)
			if opt.progress != nil {
				fmt.Fprintf(opt.progress, "    agent %s is unavailable:\n%s\n", p.Name, indent(err.Error(), "      "))
			}
		}
		slot := newSlot(p.Name, r, err)
		s.slots = append(s.slots, slot)
		s.project = append(s.project, p)
		s.display = append(s.display, opt.dirs[i])
		s.runners = append(s.runners, slot)
		agents = append(agents, host.Agent{Name: p.Name, Description: p.Description, Framework: p.Framework, Runner: slot, RunTimeout: p.RunTimeout})
		if p.OpenAICompat == "ksadk" {
			s.ksadkAgents = append(s.ksadkAgents, p.Name)
		}
	}
	if len(failed) == len(projects) {
		s.close(context.Background())
		return nil, errors.Join(failed...)
	}

	// Uploads live with the sessions of the first project; each agent has its workspace,
	// one per user unless the project shares it.
	s.uploads, err = attach.New(attach.Config{Dir: attach.DefaultDir(projects[0].Dir), IsolatePDF: true, Logger: opt.log.Named("attach")})
	if err != nil {
		s.close(context.Background())
		return nil, fmt.Errorf("open upload store: %w", err)
	}
	s.workspaces = map[string]*workspace.Workspace{}
	for i, p := range projects {
		wc := workspace.Config{Dir: workspace.UsersDir(p.Dir), PerUser: true}
		if p.Workspace == project.WorkspaceShared {
			wc = workspace.Config{Dir: workspace.DefaultDir(p.Dir)}
		}
		w, err := workspace.Open(wc)
		if err != nil {
			s.close(context.Background())
			return nil, fmt.Errorf("open workspace of %s: %w", p.Name, err)
		}
		s.workspaces[p.Name] = w
		agents[i].Workspace = w // the agent's own files (workspace.file events) land here
	}

	// The server gives finished runs' memory back to the operating system after bursts;
	// the runtime only says how much it let go of.
	trim := &memtrim.Trimmer{}
	cfg := host.Config{Store: st, Agents: agents, Logger: opt.log.Named("runtime"), Attachments: s.uploads.ForHost(),
		MaxRunsPerUser: opt.maxRunsPerUser, MemoryFreed: trim.Add,
		StateBudget: host.StateBudget{App: opt.maxStateBytes, User: opt.maxStateBytes, Session: opt.maxStateBytes},
		Metrics:     opt.metrics, StoreBackend: s.backend,
		// The GenAI conventions' opt-in: tool arguments and results on the host's spans.
		TraceContent: strings.EqualFold(os.Getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "true")}
	if opt.tracing != nil {
		cfg.Tracer = opt.tracing.Tracer() // none at all when off: an untraced turn skips even no-op spans
		cfg.KeptTracer = opt.tracing.KeptTracer()
	}
	if pg, ok := st.(*postgres.Store); ok && pg.Clustered() {
		cfg.Cluster = pg // replicas share this store: runs relay, cancel and hand over through it
	}
	rt, err := host.New(cfg)
	if err != nil {
		s.close(context.Background())
		return nil, err
	}
	trim.Shed = rt.ShedIdle
	s.runtime = rt
	for _, slot := range s.slots {
		if slot.err != nil {
			rt.SetAgentError(slot.name, slot.err)
		}
	}
	if err := rt.Recover(ctx); err != nil {
		s.close(context.Background())
		return nil, err
	}
	return s, nil
}

// close stops runs (they end interrupted), then runners, then the store.
func (s *stack) close(ctx context.Context) error {
	var errs []error
	if s.runtime != nil {
		errs = append(errs, s.runtime.Close(ctx))
	}
	for _, r := range s.runners {
		errs = append(errs, r.Close(ctx))
	}
	if s.uploads != nil {
		errs = append(errs, s.uploads.Close())
	}
	for _, w := range s.workspaces {
		errs = append(errs, w.Close())
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}

// onceBridge extracts the Python bridge on first use only: Go-only stacks never touch
// the cache directory.
func onceBridge() func() (pybridge.Bridge, error) {
	return sync.OnceValues(extractBridge)
}

// startAgentRunner prepares, builds and starts a project's runner.
func startAgentRunner(ctx context.Context, p *project.Project, lo launchOptions) (agentRunner, error) {
	r, err := newAgentRunner(ctx, p, lo)
	if err != nil {
		return nil, err
	}
	if lo.progress != nil {
		fmt.Fprintf(lo.progress, "==> starting runner %s (%s)\n", p.Name, p.Framework)
	}
	started := time.Now()
	if err := r.Start(ctx); err != nil {
		_ = r.Close(context.Background())
		return nil, startHint(p, lo.display, fmt.Errorf("start runner for %s: %w", p.Name, err))
	}
	if lo.progress != nil {
		fmt.Fprintf(lo.progress, "    runner %s started in %s\n", p.Name, elapsed(started))
	}
	return r, nil
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
