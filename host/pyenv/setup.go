package pyenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// SDKRequirements are the runner SDK's own dependencies, installed into every project
// environment; the constraints file pins their versions.
func SDKRequirements() []string { return []string{"grpcio", "grpcio-health-checking", "protobuf"} }

// MarkerFile, inside a virtualenv agentengine created, records what was installed.
const MarkerFile = "agentengine-setup.json"

type marker struct {
	// Digest identifies the requirements, constraints and SDK requirements installed.
	Digest string `json:"digest"`
	// Complete is false from venv creation until pip succeeded.
	Complete bool      `json:"complete"`
	Updated  time.Time `json:"updated"`
}

// Options configure Setup and Ensure.
type Options struct {
	// Constraints is the pip constraints file (the bridge's extracted constraints.txt).
	Constraints string
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
func Needed(p *project.Project, constraints string) (Action, error) {
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
	case m.Digest != digest(reqs, constraints):
		return Action{Install: true, Reason: "its requirements changed since the last setup"}, nil
	}
	return Action{}, nil
}

// Ensure does what Needed says, telling the user why; it is a no-op for ready projects.
func Ensure(ctx context.Context, p *project.Project, opt Options) error {
	a, err := Needed(p, opt.Constraints)
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
		opt.display(p), a.Reason, what, opt.display(p))
	_, err = Setup(ctx, p, opt)
	return err
}

// Setup prepares the project's environment: it creates the virtualenv when the project
// has none (at `python:` if that names a directory, else <project>/.venv) and installs the
// declared requirements plus the runner SDK's, all under the constraints file.
func Setup(ctx context.Context, p *project.Project, opt Options) (project.Interpreter, error) {
	if !p.IsPython() {
		return project.Interpreter{}, fmt.Errorf("%s is a %s project: it has no Python environment to set up", opt.display(p), p.Framework)
	}
	reqs, err := p.Requirements()
	if err != nil {
		return project.Interpreter{}, err
	}
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
	// From here on the environment is tracked: an install that fails or is interrupted,
	// or requirements that change later, make the next `run` install again.
	if in.Venv != "" {
		if err := writeMarker(in.Venv, marker{Digest: digest(reqs, opt.Constraints)}); err != nil {
			return in, err
		}
	}
	if err := install(ctx, p, in, reqs, opt); err != nil {
		return in, err
	}
	if in.Venv != "" {
		if err := writeMarker(in.Venv, marker{Digest: digest(reqs, opt.Constraints), Complete: true}); err != nil {
			return in, err
		}
	}
	fmt.Fprintf(w, "Python environment ready: %s\n", in.Path)
	return in, nil
}

func createVenv(ctx context.Context, dir string, w io.Writer) (project.Interpreter, error) {
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
	return in, nil
}

func install(ctx context.Context, p *project.Project, in project.Interpreter, reqs project.Requirements, opt Options) error {
	args := []string{"-m", "pip", "install", "--disable-pip-version-check"}
	if opt.Constraints != "" {
		args = append(args, "-c", opt.Constraints)
	}
	for _, f := range reqs.Files {
		args = append(args, "-r", f)
	}
	args = append(args, reqs.Packages...)
	args = append(args, SDKRequirements()...)
	w := opt.out()
	what := "the runner SDK's requirements"
	if !reqs.Empty() {
		what = strings.Join(reqs.Sources, ", ") + " and " + what
	}
	fmt.Fprintf(w, "==> installing %s into %s (pinned by the constraints file; this can take a minute)\n", what, in.Path)
	fmt.Fprintf(w, "    %s %s\n", in.Path, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, in.Path, args...)
	cmd.Dir = p.Dir
	cmd.Env = hostEnv()
	if in.Venv != "" {
		cmd.Env = append(cmd.Env, "VIRTUAL_ENV="+in.Venv)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pip install interrupted: %w", context.Cause(ctx))
		}
		if code, ok := exitCode(err); ok {
			return fmt.Errorf("pip install failed (exit status %d; its output is above); fix the requirement it names, then run `agentengine setup %s`", code, opt.display(p))
		}
		return fmt.Errorf("run pip: %w", err)
	}
	return nil
}

// digest identifies what an install put into an environment.
func digest(reqs project.Requirements, constraints string) string {
	h := sha256.New()
	c, _ := os.ReadFile(constraints)
	h.Write(c)
	fmt.Fprintf(h, "\x00%s\x00%s", strings.Join(SDKRequirements(), ","), reqs.Digest())
	return hex.EncodeToString(h.Sum(nil))[:16]
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
