package project

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Interpreter is the Python a project's runner uses.
type Interpreter struct {
	// Path is the absolute path of the executable. Symlinks are kept: a virtualenv's
	// python is a link to the base interpreter and only its own path makes it the venv's.
	Path string
	// Venv is the virtualenv directory Path belongs to, or "".
	Venv string
	// Source says how it was found, for messages ("python: in agentengine.yaml", …).
	Source string
}

// Where interpreters come from, in discovery order.
const (
	SourceConfig  = "`python:` in agentengine.yaml"
	SourceDotVenv = "the project's .venv"
	SourceVenv    = "the project's venv"
	SourcePath    = "python3 on PATH"
)

// ErrNoPython: no interpreter was found; the message says how to get one.
var ErrNoPython = errors.New("no Python interpreter found")

// FindPython discovers the project's interpreter: `python:` (an interpreter or a
// virtualenv directory), then <project>/.venv, then <project>/venv, then python3 on PATH.
// A configured `python:` that does not exist is an error, never a fallback.
func (p *Project) FindPython() (Interpreter, error) {
	if p.Python != "" {
		return p.configuredPython()
	}
	for _, c := range []struct{ dir, source string }{{".venv", SourceDotVenv}, {"venv", SourceVenv}} {
		dir := filepath.Join(p.Dir, c.dir)
		if py := VenvPython(dir); py != "" {
			return Interpreter{Path: py, Venv: dir, Source: c.source}, nil
		}
	}
	py, err := LookPython()
	if err != nil {
		return Interpreter{}, fmt.Errorf("%w for %s: no .venv in the project and %v; fix: install Python 3.11 or newer, or set `python:` in %s",
			ErrNoPython, p.Dir, err, p.ConfigPath)
	}
	return Interpreter{Path: py, Source: SourcePath}, nil
}

// PlannedVenv is where `agentengine setup` creates the project's virtualenv: the
// directory `python:` names if it is not an interpreter, else <project>/.venv. It is ""
// when `python:` names an interpreter (nothing to create).
func (p *Project) PlannedVenv() string {
	if p.Python == "" {
		return filepath.Join(p.Dir, ".venv")
	}
	path := p.resolvePath(p.Python)
	if looksLikeInterpreter(path) {
		return ""
	}
	return path
}

func (p *Project) configuredPython() (Interpreter, error) {
	path := p.resolvePath(p.Python)
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		if py := VenvPython(path); py != "" {
			return Interpreter{Path: py, Venv: path, Source: SourceConfig}, nil
		}
		return Interpreter{}, p.fieldErr("python", "%s is a directory but not a virtualenv (no bin/python and pyvenv.cfg); fix: `agentengine setup %s` creates it, or point `python:` at an interpreter", path, ShellQuote(p.Dir))
	case err == nil:
		if st.Mode()&0o111 == 0 && runtime.GOOS != "windows" {
			return Interpreter{}, p.fieldErr("python", "%s is not executable", path)
		}
		return Interpreter{Path: path, Venv: venvOf(path), Source: SourceConfig}, nil
	case !strings.ContainsAny(p.Python, `/\`):
		// A bare name ("python3.12") is looked up on PATH.
		if found, err := exec.LookPath(p.Python); err == nil {
			abs, _ := filepath.Abs(found)
			return Interpreter{Path: abs, Venv: venvOf(abs), Source: SourceConfig}, nil
		}
		return Interpreter{}, p.fieldErr("python", "%q is neither a file in the project nor a command on PATH; fix: set it to an interpreter path or a virtualenv directory", p.Python)
	}
	fix := "point it at an existing interpreter or virtualenv"
	if !looksLikeInterpreter(path) {
		fix = fmt.Sprintf("run `agentengine setup %s` to create the virtualenv there, or %s", ShellQuote(p.Dir), fix)
	}
	return Interpreter{}, p.fieldErr("python", "%s does not exist; fix: %s", path, fix)
}

// resolvePath makes a configured path absolute relative to the project ("~/" is home).
func (p *Project) resolvePath(s string) string {
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(s) {
		return filepath.Clean(s)
	}
	return filepath.Join(p.Dir, s)
}

func looksLikeInterpreter(path string) bool {
	return strings.HasPrefix(strings.ToLower(filepath.Base(path)), "python")
}

// VenvPython returns the interpreter of the virtualenv in dir, or "" if dir is none.
func VenvPython(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "pyvenv.cfg")); err != nil {
		return ""
	}
	cands := []string{filepath.Join(dir, "bin", "python3"), filepath.Join(dir, "bin", "python")}
	if runtime.GOOS == "windows" {
		cands = []string{filepath.Join(dir, "Scripts", "python.exe")}
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	return ""
}

// venvOf returns the virtualenv an interpreter path lives in (…/venv/bin/python), or "".
func venvOf(py string) string {
	dir := filepath.Dir(filepath.Dir(py))
	if _, err := os.Stat(filepath.Join(dir, "pyvenv.cfg")); err == nil {
		return dir
	}
	return ""
}

// LookPython finds a Python 3 on PATH: python3, else python.
func LookPython() (string, error) {
	for _, name := range []string{"python3", "python"} {
		if p, err := exec.LookPath(name); err == nil {
			return filepath.Abs(p)
		}
	}
	return "", errors.New("neither python3 nor python is on PATH")
}

// ShellQuote quotes a word for a POSIX shell, so that a printed command works when pasted.
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
