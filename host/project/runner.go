package project

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// Launch is how to start a project's runner process.
type Launch struct {
	Command []string
	Dir     string
	Env     []string
}

// BuildOptions tunes RunnerLaunch.
type BuildOptions struct {
	// Progress receives human-readable progress lines (e.g. "building …").
	Progress io.Writer
	// GoTool is the go command for Go runners (default: "go" on PATH).
	GoTool string
}

// RunnerLaunch resolves the command that starts the project's runner, building a Go
// runner from source when the project has no prebuilt binary.
func (p *Project) RunnerLaunch(ctx context.Context, opt BuildOptions) (Launch, error) {
	l := Launch{Dir: p.Dir, Env: p.runnerEnv()}
	switch p.Framework {
	case FrameworkGo:
		bin, err := p.goRunner(ctx, opt)
		if err != nil {
			return l, err
		}
		l.Command = []string{bin}
		return l, nil
	}
	return l, fmt.Errorf("%s: no runner for framework %q", p.ConfigPath, p.Framework)
}

func (p *Project) goRunner(ctx context.Context, opt BuildOptions) (string, error) {
	if p.Binary != "" {
		bin, _ := p.contained(p.Binary)
		st, err := os.Stat(bin)
		if err != nil {
			return "", p.fieldErr("binary", "%v; build it or remove `binary` to let agentengine build entry_point", err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", p.fieldErr("binary", "%s is not an executable file", bin)
		}
		return bin, nil
	}
	pkg, _ := p.contained(p.EntryPoint)
	if _, err := os.Stat(pkg); err != nil {
		return "", p.fieldErr("entry_point", "%v: it must be the directory of the runner's Go main package", err)
	}
	goTool := opt.GoTool
	if goTool == "" {
		var err error
		if goTool, err = exec.LookPath("go"); err != nil {
			return "", p.fieldErr("entry_point", "building a Go runner needs the go command on PATH, or set `binary` to a prebuilt runner")
		}
	}
	out := filepath.Join(p.StateDir(), "bin", p.Name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(out), err)
	}
	if opt.Progress != nil {
		fmt.Fprintf(opt.Progress, "building Go runner %s from %s\n", p.Name, pkg)
	}
	// go build is incremental: an unchanged runner links from the build cache quickly.
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, ".")
	cmd.Dir = pkg
	cmd.Env = os.Environ()
	msg, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s: building the Go runner in %s failed:\n%s", p.ConfigPath, pkg, msg)
		}
		return "", fmt.Errorf("%s: run go build: %w", p.ConfigPath, err)
	}
	return out, nil
}

// runnerEnv is the runner's whole environment: the project's env plus the basics a
// process needs. Secrets in the host's environment are not passed on.
func (p *Project) runnerEnv() []string {
	env := map[string]string{}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range p.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
