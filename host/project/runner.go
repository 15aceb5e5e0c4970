package project

import (
	"context"
	"errors"
	"fmt"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Launch is how to start a project's runner process.
type Launch struct {
	Command []string
	Dir     string
	Env     []string
	// Python is the interpreter of a Python runner (zero for Go runners).
	Python Interpreter
}

// BuildOptions tunes RunnerLaunch.
type BuildOptions struct {
	// Progress receives human-readable progress lines (e.g. "building …").
	Progress io.Writer
	// GoTool is the go command for Go runners (default: "go" on PATH).
	GoTool string
	// PythonPath lists the directories holding the Python bridge (agentengine_runner and
	// agentengine_adapters); required for Python projects.
	PythonPath []string
	// BinarySuffix is appended to a built Go runner's file name: a reload builds next to
	// the binary a running runner executes, never over it.
	BinarySuffix string
}

// RunnerLaunch resolves the command that starts the project's runner, building a Go
// runner from source when the project has no prebuilt binary.
func (p *Project) RunnerLaunch(ctx context.Context, opt BuildOptions) (Launch, error) {
	if p.IsPython() {
		return p.pythonLaunch(opt)
	}
	l := Launch{Dir: p.Dir}
	switch p.Framework {
	case FrameworkGo:
		bin, err := p.goRunner(ctx, opt)
		if err != nil {
			return l, err
		}
		if l.Env, err = p.runnerEnv(nil); err != nil {
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
	if err := p.checkMainPackage(pkg); err != nil {
		return "", err
	}
	goTool := opt.GoTool
	if goTool == "" {
		var err error
		if goTool, err = exec.LookPath("go"); err != nil {
			return "", p.fieldErr("entry_point", "building a Go runner needs the go command on PATH, or set `binary` to a prebuilt runner")
		}
	}
	out := filepath.Join(p.StateDir(), "bin", p.Name+opt.BinarySuffix)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(out), err)
	}
	if opt.Progress != nil {
		fmt.Fprintf(opt.Progress, "building Go runner %s from %s\n", p.Name, pkg)
	}
	// go build is incremental: an unchanged runner links from the build cache quickly.
	// Without the symbol table and DWARF (-s -w) the link takes about half as long, which
	// is most of a reload; panics still print function names and lines.
	cmd := exec.CommandContext(ctx, goTool, "build", "-ldflags=-s -w", "-o", out, ".")
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

// checkMainPackage reports an entry_point that is no Go main package, which go build
// would turn into a non-executable archive (and the start into "permission denied").
func (p *Project) checkMainPackage(dir string) error {
	bp, err := build.ImportDir(dir, 0)
	var noGo *build.NoGoError
	switch {
	case errors.As(err, &noGo):
		return p.fieldErr("entry_point", "%s has no Go files: point entry_point at the directory of your runner's `package main` (whose main calls pluginsdk.Serve)", dir)
	case err != nil:
		return nil // go build reports it, with the compiler's words
	case bp.Name != "main":
		return p.fieldErr("entry_point", "%s is package %s, not a main package: point entry_point at the directory of your runner's `package main` (whose main calls pluginsdk.Serve), or make this package main", dir, bp.Name)
	}
	return nil
}

// Env is the project's own environment for its runner: langgraph.json's "env" object,
// then the .env file (and langgraph.json's env file), then agentengine.yaml's `env:`,
// later ones winning (as Docker Compose lets `environment:` override `env_file`).
// Nothing of the host's environment is in it.
func (p *Project) ProjectEnv() (map[string]string, error) {
	env := map[string]string{}
	if p.LangGraph != nil {
		for k, v := range p.LangGraph.Env {
			env[k] = v
		}
	}
	files := []string{filepath.Join(p.Dir, ".env")}
	if p.LangGraph != nil && p.LangGraph.EnvFile != "" && p.LangGraph.EnvFile != files[0] {
		files = append(files, p.LangGraph.EnvFile)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		vals, err := ParseDotenv(string(data), func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for k, v := range vals {
			env[k] = v
		}
	}
	for k, v := range p.Env {
		env[k] = v
	}
	return env, nil
}

// hostBasics are the variables of the host's environment an isolated runner
// (--isolate-env) still inherits: what a process needs to find programs and files.
var hostBasics = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "SYSTEMROOT"}

// hostSecrets are agentengine's own secrets, never passed to a runner: the API token,
// the session database's DSN (it may hold a password) and libpq's password variables.
var hostSecrets = map[string]bool{
	"AGENTENGINE_TOKEN":        true,
	"AGENTENGINE_TOKENS":       true,
	"KSADK_SESSION_DSN":        true,
	"PGPASSWORD":               true,
	"PGPASSFILE":               true,
	"PLUGIN_MIN_PORT":          true,
	"PLUGIN_MAX_PORT":          true,
	"PLUGIN_PROTOCOL_VERSIONS": true,
}

// HostSecret reports whether the host's variable k stays out of runners' environments.
func HostSecret(k string) bool {
	if hostSecrets[k] {
		return true
	}
	// Any DSN of agentengine's (AGENTENGINE_TEST_PG_DSN, …) and go-plugin's own variables
	// of a host this one runs under.
	return (strings.HasPrefix(k, "AGENTENGINE_") && strings.HasSuffix(k, "_DSN")) || strings.HasPrefix(k, "PLUGIN_")
}

// runnerEnv is the runner's whole environment: the shell's (the host's environment minus
// its secrets; only the basics with IsolateEnv), the project's env (.env, then
// agentengine.yaml's env:), then the overrides (the host's contract with the runner).
func (p *Project) runnerEnv(overrides map[string]string) ([]string, error) {
	env := map[string]string{}
	if p.IsolateEnv {
		for _, k := range hostBasics {
			if v, ok := os.LookupEnv(k); ok {
				env[k] = v
			}
		}
	} else {
		for _, kv := range os.Environ() {
			k, v, ok := strings.Cut(kv, "=")
			if ok && k != "" && !HostSecret(k) {
				env[k] = v
			}
		}
	}
	penv, err := p.ProjectEnv()
	if err != nil {
		return nil, err
	}
	for k, v := range penv {
		env[k] = v
	}
	for k, v := range overrides {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}
