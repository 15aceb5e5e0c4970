package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/backend"
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
	store       session.Store
	supervisors []*runnerproc.Supervisor
	runtime     *host.Runtime
	log         hclog.Logger
}

type stackOptions struct {
	dirs      []string
	store     storeFlags
	log       hclog.Logger
	progress  io.Writer
	startWait time.Duration
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
		projects = append(projects, p)
	}

	st, err := backend.Open(ctx, backend.Config{
		Backend:    opt.store.backend,
		Path:       opt.store.path,
		DSN:        opt.store.dsn,
		ProjectDir: projects[0].Dir,
		Getenv:     os.Getenv,
	})
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	s := &stack{store: st, log: opt.log}

	agents := make([]host.Agent, 0, len(projects))
	for _, p := range projects {
		l, err := p.RunnerLaunch(ctx, project.BuildOptions{Progress: opt.progress})
		if err != nil {
			s.close(context.Background())
			return nil, err
		}
		sup := runnerproc.New(runnerproc.Config{
			Name:         p.Name,
			Command:      l.Command,
			Dir:          l.Dir,
			Env:          l.Env,
			StartTimeout: opt.startWait,
			Logger:       opt.log.Named(p.Name),
		})
		s.supervisors = append(s.supervisors, sup)
		if opt.progress != nil {
			fmt.Fprintf(opt.progress, "starting runner %s (%s)\n", p.Name, p.Framework)
		}
		if err := sup.Start(ctx); err != nil {
			s.close(context.Background())
			return nil, fmt.Errorf("start runner for %s: %w", p.Name, err)
		}
		agents = append(agents, host.Agent{Name: p.Name, Description: p.Description, Framework: p.Framework, Runner: sup})
	}

	rt, err := host.New(host.Config{Store: st, Agents: agents, Logger: opt.log.Named("runtime")})
	if err != nil {
		s.close(context.Background())
		return nil, err
	}
	s.runtime = rt
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
	for _, sup := range s.supervisors {
		errs = append(errs, sup.Close(ctx))
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}
