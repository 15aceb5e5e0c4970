// Package pyenv prepares and inspects the Python environment of a project: it creates
// the project's virtualenv and installs what the project declares (with pip's progress
// on the terminal), decides when `agentengine run` must do that by itself, and runs the
// doctor checks that say what is missing and which command fixes it.
package pyenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The oldest Python the bridge supports.
const (
	MinMajor = 3
	MinMinor = 11
)

// MinVersion is MinMajor.MinMinor as a Version.
func MinVersion() Version { return Version{MinMajor, MinMinor, 0} }

// Version is a Python version.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less orders versions.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// ParseVersion reads "3.11.7" (or "3.11").
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("not a Python version: %q", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("not a Python version: %q", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// probeTimeout bounds a quick interpreter query (a cold python3 starts in ~50 ms; a
// loaded 2-core machine can make that seconds).
const probeTimeout = 30 * time.Second

// PythonVersion runs the interpreter to ask its version.
func PythonVersion(ctx context.Context, python string) (Version, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := quiet(ctx, python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])")
	if err != nil {
		return Version{}, err
	}
	return ParseVersion(string(out))
}

// quiet runs a command and returns its stdout; a failure carries stderr's last line.
func quiet(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		if last := lastLine(stderr.String()); last != "" {
			return out, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, last)
		}
		return out, fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return out, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// BasePython finds an interpreter to create virtualenvs with: the newest-named of
// python3, python3.14 … python3.11, python on PATH that is at least MinVersion.
func BasePython(ctx context.Context) (string, Version, error) {
	var tried []string
	for _, name := range []string{"python3", "python3.14", "python3.13", "python3.12", "python3.11", "python"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		v, err := PythonVersion(ctx, path)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", path, err))
			continue
		}
		if v.Less(MinVersion()) {
			tried = append(tried, fmt.Sprintf("%s (%s)", path, v))
			continue
		}
		return path, v, nil
	}
	if len(tried) == 0 {
		return "", Version{}, fmt.Errorf("no python3 on PATH; fix: install Python %d.%d or newer (e.g. `apt-get install python3 python3-venv`)", MinMajor, MinMinor)
	}
	return "", Version{}, fmt.Errorf("no Python %d.%d or newer on PATH (found %s); fix: install a newer Python, or set `python:` in agentengine.yaml",
		MinMajor, MinMinor, strings.Join(tried, ", "))
}

// hostEnv is the environment for setup's own commands (venv, pip). Unlike a runner,
// they run on the user's behalf and need the user's proxy and pip settings.
func hostEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		// An activated venv or a PYTHONPATH of the shell must not redirect the install.
		if k, _, _ := strings.Cut(kv, "="); k == "PYTHONPATH" || k == "PYTHONHOME" || k == "VIRTUAL_ENV" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// errExit is how a failed command is recognised.
func exitCode(err error) (int, bool) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), true
	}
	return 0, false
}
