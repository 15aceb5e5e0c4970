package pyenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentengine/agentengine/host/project"
)

// MarkerFile, inside a virtualenv agentengine created, records what was installed.
const MarkerFile = "agentengine-setup.json"

type marker struct {
	// Digest identifies the requirements installed: the project's, the runner's and the
	// packages added for the project's imports.
	Digest string `json:"digest"`
	// Complete is false from venv creation until pip succeeded.
	Complete bool      `json:"complete"`
	Updated  time.Time `json:"updated"`
}

// Options configure Setup and Ensure.
type Options struct {
	// Runner are the runner SDK's own requirements (pybridge.RunnerRequirements: the
	// widest ranges its generated code and gRPC stubs load on). They join the project's
	// requirements in one pip resolve, so a version the project pins wins or pip explains
	// the conflict; agentengine applies no constraints file.
	Runner []string
	// Out receives progress lines and pip's own output. An *os.File terminal lets pip
	// draw its progress bars.
	Out io.Writer
	// DisplayDir is the project directory as the user wrote it, for messages.
	DisplayDir string
}

func (o *Options) out() io.Writer {
	if o.Out == nil {
		return io.Discard
	}
	return o.Out
}

func (o *Options) display(p *project.Project) string {
	if o.DisplayDir != "" {
		return o.DisplayDir
	}
	return p.Dir
}

// Action is what an environment needs before the runner can start.
type Action struct {
	// Create is the virtualenv directory to create, or "".
	Create string
	// Install: requirements must be (re)installed.
	Install bool
	// Reason says why, for the user.
	Reason string
}

// None reports whether nothing needs doing.
func (a Action) None() bool { return a.Create == "" && !a.Install }

// Needed decides what `agentengine run` must do by itself: create .venv and install when
// the project declares requirements but has no environment, and finish or redo an
// install in a virtualenv agentengine made when it did not complete or the requirements
// changed since. Environments agentengine did not create are the user's: left alone.
func Needed(p *project.Project, runner []string) (Action, error) {
	if !p.IsPython() {
		return Action{}, nil
	}
	reqs, err := p.Requirements()
	if err != nil {
		return Action{}, err
	}
	in, err := p.FindPython()
	if err != nil {
		if p.Python != "" {
			return Action{}, err // a wrong `python:` is the user's to fix
		}
		in = project.Interpreter{Source: project.SourcePath}
	}
	if in.Source == project.SourcePath {
		if reqs.Empty() {
			return Action{}, nil
		}
		return Action{
			Create:  p.PlannedVenv(),
			Install: true,
			Reason:  fmt.Sprintf("declares requirements (%s) but has no Python environment", strings.Join(reqs.Sources, ", ")),
		}, nil
	}
	if in.Venv == "" {
		return Action{}, nil
	}
	m, ok := readMarker(in.Venv)
	switch {
	case !ok:
		return Action{}, nil
	case !m.Complete:
		return Action{Install: true, Reason: "the last setup of its environment did not finish"}, nil
	case m.Digest != digest(reqs, runner, Hints(p, reqs)):
		return Action{Install: true, Reason: "its requirements (or the packages its code imports) changed since the last setup"}, nil
	}
	return Action{}, nil
}

// Ensure does what Needed says, telling the user why; it is a no-op for ready projects.
func Ensure(ctx context.Context, p *project.Project, opt Options) error {
	a, err := Needed(p, opt.Runner)
	if err != nil || a.None() {
		return err
	}
	var what string
	if a.Create != "" {
		what = fmt.Sprintf("creating %s and installing them", rel(p.Dir, a.Create))
	} else {
		what = "installing its requirements"
	}
	fmt.Fprintf(opt.out(), "%s %s: %s (once; `agentengine setup %s` does this explicitly)\n",
		opt.display(p), a.Reason, what, shellQuote(opt.display(p)))
	_, err = Setup(ctx, p, opt)
	return err
}

// Setup prepares the project's environment: it creates the virtualenv when the project
// has none (at `python:` if that names a directory, else <project>/.venv) and installs,
// in one pip resolve, the declared requirements exactly as written, the runner SDK's
// requirements and the packages the code imports that KsADK would have provided. It
// installs only into a virtualenv (or conda environment), never into a system Python.
func Setup(ctx context.Context, p *project.Project, opt Options) (project.Interpreter, error) {
	if !p.IsPython() {
		return project.Interpreter{}, fmt.Errorf("%s is a %s project: it has no Python environment to set up", opt.display(p), p.Framework)
	}
	reqs, err := p.Requirements()
	if err != nil {
		return project.Interpreter{}, err
	}
	start := time.Now()
	w := opt.out()
	in, err := p.FindPython()
	if err != nil || in.Source == project.SourcePath {
		venv := p.PlannedVenv()
		if venv == "" {
			return in, err // `python:` names an interpreter that is not there
		}
		if entries, rerr := os.ReadDir(venv); rerr == nil && len(entries) > 0 {
			// A directory of the user's that is not a virtualenv: never write into it.
			if err == nil {
				err = fmt.Errorf("%s exists and is not a virtualenv; move it away or set `python:`", venv)
			}
			return in, err
		}
		if in, err = createVenv(ctx, venv, w); err != nil {
			return in, err
		}
		if p.Python != "" {
			in.Source = project.SourceConfig
		}
	}
	if in.Venv == "" && !isEnvPrefix(in.Path) {
		return in, fmt.Errorf("%s (%s) is not a virtualenv: agentengine installs only into a project's own environment, never into a system interpreter; "+
			"fix: set `python: .venv` in %s, then run `agentengine setup %s` (it creates the virtualenv), or install the requirements into that interpreter yourself",
			in.Path, in.Source, p.ConfigPath, shellQuote(opt.display(p)))
	}
	hints := Hints(p, reqs)
	// From here on the environment is tracked: an install that fails or is interrupted,
	// or requirements that change later, make the next `run` install again.
	if in.Venv != "" {
		if err := writeMarker(in.Venv, marker{Digest: digest(reqs, opt.Runner, hints)}); err != nil {
			return in, err
		}
	}
	if err := install(ctx, p, in, reqs, hints, opt); err != nil {
		return in, err
	}
	if in.Venv != "" {
		if err := writeMarker(in.Venv, marker{Digest: digest(reqs, opt.Runner, hints), Complete: true}); err != nil {
			return in, err
		}
	}
	fmt.Fprintf(w, "Python environment ready: %s (%s in all)\n", in.Path, since(start))
	return in, nil
}

// isEnvPrefix reports whether an interpreter belongs to an isolated environment that is
// not a virtualenv: a conda environment (its prefix holds conda-meta).
func isEnvPrefix(python string) bool {
	st, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(python)), "conda-meta"))
	return err == nil && st.IsDir()
}

// since is an elapsed time for progress lines ("2.3s", "1m04s").
func since(t time.Time) string {
	d := time.Since(t)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func createVenv(ctx context.Context, dir string, w io.Writer) (project.Interpreter, error) {
	start := time.Now()
	base, v, err := BasePython(ctx)
	if err != nil {
		return project.Interpreter{}, err
	}
	fmt.Fprintf(w, "==> creating virtualenv %s (Python %s from %s)\n", dir, v, base)
	cmd := exec.CommandContext(ctx, base, "-m", "venv", dir)
	cmd.Env = hostEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		fix := "check the message above"
		if strings.Contains(msg, "ensurepip") || strings.Contains(msg, "venv") {
			fix = fmt.Sprintf("install the venv module (Debian/Ubuntu: `apt-get install python3-venv`, or python%d.%d-venv)", v.Major, v.Minor)
		}
		_ = os.RemoveAll(dir) // a half-made venv would be taken for the user's own
		return project.Interpreter{}, fmt.Errorf("create virtualenv %s: %w\n%s\nfix: %s", dir, err, msg, fix)
	}
	py := project.VenvPython(dir)
	if py == "" {
		return project.Interpreter{}, fmt.Errorf("create virtualenv %s: no interpreter in it after `python -m venv`", dir)
	}
	in := project.Interpreter{Path: py, Venv: dir, Source: project.SourceDotVenv}
	if err := writeMarker(dir, marker{}); err != nil {
		return in, err
	}
	fmt.Fprintf(w, "    virtualenv created in %s\n", since(start))
	return in, nil
}

// pipArgs is the one pip command setup runs: the project's requirements as written, the
// runner's, and the packages added for its imports. No constraints file.
func pipArgs(reqs project.Requirements, runner []string, hints []Hint) []string {
	args := []string{"-m", "pip", "install", "--disable-pip-version-check"}
	for _, f := range reqs.Files {
		args = append(args, "-r", f)
	}
	args = append(args, reqs.Packages...)
	args = append(args, runner...)
	return append(args, hintDists(hints)...)
}

func install(ctx context.Context, p *project.Project, in project.Interpreter, reqs project.Requirements, hints []Hint, opt Options) error {
	start := time.Now()
	args := pipArgs(reqs, opt.Runner, hints)
	w := opt.out()
	what := "the runner's " + strings.Join(opt.Runner, ", ")
	if !reqs.Empty() {
		what = strings.Join(reqs.Sources, ", ") + " (as written) and " + what
	}
	if len(hints) > 0 {
		fmt.Fprintln(w, hintNotice(hints, reqs.Sources))
	}
	fmt.Fprintf(w, "==> installing %s into %s (one pip resolve; this can take a minute)\n", what, in.Path)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	fmt.Fprintf(w, "    %s %s\n", shellQuote(in.Path), strings.Join(quoted, " "))
	cmd := exec.CommandContext(ctx, in.Path, args...)
	cmd.Dir = p.Dir
	cmd.Env = hostEnv()
	if in.Venv != "" {
		cmd.Env = append(cmd.Env, "VIRTUAL_ENV="+in.Venv)
	}
	// pip's output goes to the user as it comes. A terminal gets it directly, so that pip
	// draws its progress bars; elsewhere its tail is kept to explain a conflict.
	tail := &tailBuffer{max: 64 << 10}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		cmd.Stdout, cmd.Stderr = f, f
		tail = nil
	} else {
		mw := io.MultiWriter(w, tail) // one writer: exec then writes from one goroutine
		cmd.Stdout, cmd.Stderr = mw, mw
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pip install interrupted: %w", context.Cause(ctx))
		}
		setup := "agentengine setup " + shellQuote(opt.display(p))
		out := ""
		if tail != nil {
			out = tail.String()
		} else {
			out = explainFailure(ctx, p, in, args)
		}
		if cerr := conflictError(parseConflict(out), opt.Runner, hintDists(hints), reqs.Sources, setup); cerr != nil {
			return cerr
		}
		if req := notFound(out); req != "" {
			return fmt.Errorf("pip found no release of %s for this Python and platform (its output is above); fix: check that requirement's name and version in %s, then run `%s`",
				req, strings.Join(reqs.Sources, ", "), setup)
		}
		if code, ok := exitCode(err); ok {
			return fmt.Errorf("pip install failed (exit status %d; its output is above); fix the requirement it names, then run `%s`", code, setup)
		}
		return fmt.Errorf("run pip: %w", err)
	}
	fmt.Fprintf(w, "    installed in %s\n", since(start))
	return nil
}

// explainFailure asks pip again, without installing, for the output a terminal got: its
// explanation of a resolution conflict. Metadata is cached by then, so this is quick.
func explainFailure(ctx context.Context, p *project.Project, in project.Interpreter, args []string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	dry := append(append([]string{}, args[:3]...), append([]string{"--dry-run"}, args[3:]...)...)
	cmd := exec.CommandContext(ctx, in.Path, dry...)
	cmd.Dir = p.Dir
	cmd.Env = hostEnv()
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// isTerminal reports whether f is a character device (a terminal, not a pipe or file).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

// digest identifies what an install put into an environment.
func digest(reqs project.Requirements, runner []string, hints []Hint) string {
	return reqs.Digest(append(append([]string{}, runner...), hintDists(hints)...)...)
}

func readMarker(venv string) (marker, bool) {
	data, err := os.ReadFile(filepath.Join(venv, MarkerFile))
	if err != nil {
		return marker{}, false
	}
	var m marker
	if json.Unmarshal(data, &m) != nil {
		return marker{}, true // ours but unreadable: treat as incomplete
	}
	return m, true
}

func writeMarker(venv string, m marker) error {
	m.Updated = time.Now().UTC()
	data, _ := json.MarshalIndent(m, "", "  ")
	tmp := filepath.Join(venv, MarkerFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write setup marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(venv, MarkerFile)); err != nil {
		return fmt.Errorf("write setup marker: %w", err)
	}
	return nil
}

func rel(base, path string) string {
	if r, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
