package pyenv

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentengine/agentengine/host/project"
)

// CheckRunner tells, before a runner starts, whether the project's interpreter has what
// the runner SDK needs (protobuf in the runner's range). An environment that
// cannot host the runner is an error naming the package, what is installed, what the
// runner needs and what to change; otherwise the runner would die on import with a
// protobuf version error. A failed probe is not an error: the runner's own start reports.
func CheckRunner(ctx context.Context, p *project.Project, runner []string, display string) error {
	if !p.IsPython() || len(runner) == 0 {
		return nil
	}
	in, err := p.FindPython()
	if err != nil {
		return nil // the launch reports a missing interpreter with its own fix
	}
	names := make([]string, len(runner))
	for i, r := range runner {
		names[i] = distName(r)
	}
	installed, err := installedVersions(ctx, in.Path, names)
	if err != nil {
		return nil
	}
	var problems, wants []string
	for i, r := range runner {
		have := installed[names[i]]
		_, spec := splitRequirement(r)
		switch {
		case have == "":
			problems = append(problems, fmt.Sprintf("%s is not installed (the runner needs %s)", names[i], r))
		case !satisfies(have, spec):
			problems = append(problems, fmt.Sprintf("%s is %s; the runner needs %s", names[i], have, r))
		default:
			continue
		}
		wants = append(wants, shellQuote(r))
	}
	if len(problems) == 0 {
		return nil
	}
	fix := "agentengine setup " + shellQuote(display)
	if in.Venv != "" || isEnvPrefix(in.Path) {
		fix = fmt.Sprintf("%s -m pip install %s", shellQuote(in.Path), strings.Join(wants, " "))
	}
	return fmt.Errorf("the Python environment of %s (%s) cannot host the agentengine runner: %s (where the project's requirements pin another version, change that requirement); fix: %s",
		display, in.Path, strings.Join(problems, "; "), fix)
}

// CheckRunnerClass tells, before a runner starts, whether a project that names a KsADK
// runner class (`runner_class`) has the ksadk package its class builds on. Without it the
// class cannot even be imported, and the project has no agent object to fall back on, so
// this is an error naming the field and the fix. A failed probe is not an error: the
// runner's own start reports.
func CheckRunnerClass(ctx context.Context, p *project.Project, display string) error {
	if !p.IsPython() || p.RunnerClass == "" {
		return nil
	}
	in, err := p.FindPython()
	if err != nil {
		return nil
	}
	installed, err := installedVersions(ctx, in.Path, []string{"ksadk"})
	if err != nil || installed["ksadk"] != "" {
		return nil
	}
	fix := fmt.Sprintf("add ksadk to %s, then run `agentengine setup %s`", filepath.Join(p.Dir, "requirements.txt"), shellQuote(display))
	if in.Venv != "" || isEnvPrefix(in.Path) {
		fix += fmt.Sprintf(" (or install it now: %s -m pip install ksadk)", shellQuote(in.Path))
	}
	return fmt.Errorf("%s: field \"runner_class\": %s is a KsADK runner class, which needs the ksadk package, and ksadk is not installed in %s; fix: %s",
		p.ConfigPath, p.RunnerClass, in.Path, fix)
}

// satisfies reports whether version meets a specifier set of >=, >, <=, <, ==, !=
// clauses on release numbers (what the runner's requirements use); other clauses are not
// held against a version.
func satisfies(version, spec string) bool {
	have := releaseOf(version)
	for _, clause := range strings.Split(spec, ",") {
		clause = strings.TrimSpace(clause)
		op := ""
		for _, o := range []string{">=", "<=", "==", "!=", ">", "<"} {
			if strings.HasPrefix(clause, o) {
				op = o
				break
			}
		}
		if op == "" {
			continue
		}
		c := compareRelease(have, releaseOf(strings.TrimSpace(clause[len(op):])))
		ok := map[string]bool{">=": c >= 0, "<=": c <= 0, "==": c == 0, "!=": c != 0, ">": c > 0, "<": c < 0}[op]
		if !ok {
			return false
		}
	}
	return true
}

// releaseOf is the numeric release of a version: "7.36.2" → [7 36 2], "1.62.0rc1" → [1 62 0].
func releaseOf(v string) []int {
	var out []int
	for _, part := range strings.Split(v, ".") {
		end := 0
		for end < len(part) && part[end] >= '0' && part[end] <= '9' {
			end++
		}
		if end == 0 {
			break
		}
		n, _ := strconv.Atoi(part[:end])
		out = append(out, n)
		if end < len(part) {
			break
		}
	}
	return out
}

func compareRelease(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
