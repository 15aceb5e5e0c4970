package pyenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentengine/agentengine/host/project"
)

// Check is one doctor finding; the bridge's own doctor prints the same shape.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is the doctor's result.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	if !c.OK {
		r.OK = false
	}
}

// DoctorOptions configure Doctor.
type DoctorOptions struct {
	Options
	// PythonPath is the extracted bridge, for the bridge's own checks.
	PythonPath []string
	// BridgeTimeout bounds the bridge's doctor, which imports the framework (default 120s).
	BridgeTimeout time.Duration
}

// Doctor checks a project from its config to its entry point and says, per problem,
// the command that fixes it. Host-side checks come first (config, interpreter, version,
// environment, requirements); then the bridge's doctor (`python -m agentengine_adapters
// doctor`, run with the runner's environment) checks protobuf, the framework, the entry
// point and the hook signatures from inside Python.
func Doctor(ctx context.Context, dir string, opt DoctorOptions) Report {
	r := Report{OK: true}
	if opt.DisplayDir == "" {
		opt.DisplayDir = dir
	}
	setup := "agentengine setup " + shellQuote(opt.DisplayDir)
	p, err := project.Load(dir)
	if err != nil {
		detail, fix := splitFix(err.Error())
		r.add(Check{Name: "config", Detail: detail, Fix: fix})
		return r
	}
	entry := p.EntryPoint
	if p.IsPython() && p.Entry.AttrFromVariable {
		if p.RunnerClass != "" {
			entry += " (answered by runner_class " + p.RunnerClass + ")"
		} else {
			entry += " (object " + p.AgentVariable + ")"
		}
	}
	r.add(Check{Name: "config", OK: true, Detail: fmt.Sprintf("%s (%s) from %s; entry point %s", p.Name, p.Framework, rel(p.Dir, p.ConfigPath), entry)})
	if _, err := p.ProjectEnv(); err != nil {
		detail, fix := splitFix(err.Error())
		r.add(Check{Name: "env", Detail: detail, Fix: fix})
	}
	if !p.IsPython() {
		r.add(goCheck(p))
		return r
	}
	reqs, err := p.Requirements()
	if err != nil {
		detail, fix := splitFix(err.Error())
		r.add(Check{Name: "requirements", Detail: detail, Fix: fix})
		return r
	}

	in, err := p.FindPython()
	if err != nil {
		detail, fix := splitFix(err.Error())
		if fix == "" || (p.Python == "" && !reqs.Empty()) {
			fix = setup
		}
		r.add(Check{Name: "interpreter", Detail: detail, Fix: fix})
		return r
	}
	r.add(Check{Name: "interpreter", OK: true, Detail: fmt.Sprintf("%s (%s)", in.Path, in.Source)})
	if in.Source == project.SourceConfig && in.Venv == "" && !isEnvPrefix(in.Path) {
		// setup installs only into a virtualenv: `python:` must name one first.
		setup = fmt.Sprintf("set `python: .venv` in %s, then run `%s`", rel(p.Dir, p.ConfigPath), setup)
	}

	v, err := PythonVersion(ctx, in.Path)
	switch {
	case err != nil:
		r.add(Check{Name: "python version", Detail: fmt.Sprintf("cannot run %s: %v", in.Path, err),
			Fix: "point `python:` at a working interpreter, or delete the broken virtualenv and run " + setup})
		return r
	case v.Less(MinVersion()):
		r.add(Check{Name: "python version", Detail: fmt.Sprintf("Python %s is older than %d.%d", v, MinMajor, MinMinor),
			Fix: fmt.Sprintf("install Python %d.%d or newer and set `python:` to it (or recreate the virtualenv with it)", MinMajor, MinMinor)})
		return r
	}
	r.add(Check{Name: "python version", OK: true, Detail: v.String()})

	r.add(envCheck(p, in, reqs, opt.Runner, setup))
	r.add(requirementsCheck(ctx, in, reqs, setup))
	if c, ok := importsCheck(ctx, p, in, reqs, setup); ok {
		r.add(c)
	}

	for _, c := range bridgeDoctor(ctx, p, in, opt) {
		r.add(c)
	}
	return r
}

// goCheck: a Go runner needs its prebuilt binary, or the go command to build it.
func goCheck(p *project.Project) Check {
	if p.Binary != "" {
		bin := p.Binary
		if !filepath.IsAbs(bin) {
			bin = filepath.Join(p.Dir, bin)
		}
		if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return Check{Name: "runner binary", Detail: fmt.Sprintf("%s is not an executable file", bin),
				Fix: "build it, or remove `binary` so that agentengine builds entry_point"}
		}
		return Check{Name: "runner binary", OK: true, Detail: bin}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return Check{Name: "go toolchain", Detail: "building the runner needs the go command, which is not on PATH",
			Fix: "install Go, or set `binary` to a prebuilt runner"}
	}
	return Check{Name: "go toolchain", OK: true, Detail: goTool}
}

func envCheck(p *project.Project, in project.Interpreter, reqs project.Requirements, runner []string, setup string) Check {
	c := Check{Name: "environment", OK: true}
	switch {
	case in.Venv == "" && in.Source == project.SourcePath && !reqs.Empty():
		c.OK = false
		c.Detail = fmt.Sprintf("no virtualenv: the project declares requirements (%s) but would run on %s", strings.Join(reqs.Sources, ", "), in.Path)
		c.Fix = setup
	case in.Venv == "":
		c.Detail = fmt.Sprintf("no virtualenv; using %s", in.Path)
	default:
		c.Detail = "virtualenv " + in.Venv
		if a, err := Needed(p, runner); err == nil && a.Install {
			c.OK = false
			c.Detail += ": " + a.Reason
			c.Fix = setup
		}
	}
	return c
}

// requirementsCheck compares the declared requirements with what the interpreter has
// installed (names, and versions where a requirement pins one with ==).
func requirementsCheck(ctx context.Context, in project.Interpreter, reqs project.Requirements, setup string) Check {
	c := Check{Name: "requirements"}
	list, err := project.ParseRequirements(reqs)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	if len(list) == 0 {
		c.OK = true
		c.Detail = "the project declares none (requirements.txt or pyproject.toml)"
		return c
	}
	names := make([]string, len(list))
	for i, r := range list {
		names[i] = r.Name
	}
	installed, err := installedVersions(ctx, in.Path, names)
	if err != nil {
		c.Detail = fmt.Sprintf("cannot list installed packages: %v", err)
		c.Fix = setup
		return c
	}
	var missing, wrong []string
	for _, r := range list {
		got := installed[r.Name]
		switch {
		case got == "":
			missing = append(missing, r.Name)
		case r.Pin != "" && got != r.Pin:
			wrong = append(wrong, fmt.Sprintf("%s %s (wants %s)", r.Name, got, r.Pin))
		}
	}
	if len(missing) == 0 && len(wrong) == 0 {
		c.OK = true
		c.Detail = fmt.Sprintf("%d installed (%s)", len(list), strings.Join(reqs.Sources, ", "))
		return c
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing: "+strings.Join(missing, ", "))
	}
	if len(wrong) > 0 {
		parts = append(parts, "other versions: "+strings.Join(wrong, ", "))
	}
	c.Detail = strings.Join(parts, "; ")
	c.Fix = setup
	return c
}

// importsCheck names the packages the project's code imports that are neither installed
// nor listed in its requirements, where KsADK would have provided them (litellm for
// ADK's LiteLlm, python-dotenv, …). ok is false when there is nothing to report on.
func importsCheck(ctx context.Context, p *project.Project, in project.Interpreter, reqs project.Requirements, setup string) (Check, bool) {
	hints := Hints(p, reqs)
	if len(hints) == 0 {
		return Check{}, false
	}
	c := Check{Name: "imports"}
	names := make([]string, len(hints))
	for i, h := range hints {
		names[i] = distName(h.Dist)
	}
	installed, err := installedVersions(ctx, in.Path, names)
	if err != nil {
		c.Detail = fmt.Sprintf("cannot list installed packages: %v", err)
		c.Fix = setup
		return c, true
	}
	var missing, dists []string
	for _, h := range hints {
		if installed[distName(h.Dist)] == "" {
			missing = append(missing, fmt.Sprintf("%s (%s)", distName(h.Dist), h.Where()))
			dists = append(dists, h.Dist)
		}
	}
	if len(missing) == 0 {
		c.OK = true
		c.Detail = fmt.Sprintf("installed, though %s does not list them: %s", listedIn(reqs), strings.Join(names, ", "))
		return c, true
	}
	c.Detail = fmt.Sprintf("not installed and not in %s: %s", listedIn(reqs), strings.Join(missing, ", "))
	// setup installs them only into a virtualenv; an interpreter of the system is never
	// the target of a fix.
	c.Fix = setup
	if in.Venv != "" {
		if _, ours := readMarker(in.Venv); !ours {
			quoted := make([]string, len(dists))
			for i, d := range dists {
				quoted[i] = shellQuote(d)
			}
			c.Fix = fmt.Sprintf("%s -m pip install %s", shellQuote(in.Path), strings.Join(quoted, " "))
		}
	}
	return c, true
}

func listedIn(reqs project.Requirements) string {
	if len(reqs.Sources) == 0 {
		return "the project's requirements (it declares none)"
	}
	return strings.Join(reqs.Sources, ", ")
}

const versionsScript = `import json, sys
from importlib import metadata
out = {}
for name in sys.argv[1:]:
    try:
        out[name] = metadata.version(name)
    except Exception:
        out[name] = ""
print(json.dumps(out))`

func installedVersions(ctx context.Context, python string, names []string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := quiet(ctx, python, append([]string{"-c", versionsScript}, names...)...)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(bytes.TrimSpace(out), &m); err != nil {
		return nil, fmt.Errorf("unexpected output %q", out)
	}
	return m, nil
}

// bridgeDoctor runs the bridge's own checks with the runner's environment.
func bridgeDoctor(ctx context.Context, p *project.Project, in project.Interpreter, opt DoctorOptions) []Check {
	fail := func(detail string) []Check {
		return []Check{{Name: "bridge", Detail: detail, Fix: "agentengine setup " + shellQuote(opt.DisplayDir)}}
	}
	env, err := p.PythonEnv(in, opt.PythonPath)
	if err != nil {
		return fail(err.Error())
	}
	timeout := opt.BridgeTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.Path, "-m", project.BridgeModule, "doctor")
	cmd.Dir = p.Dir
	// Whether the interpreter is the project's own environment: only then may the bridge's
	// fixes name its pip; otherwise they say `agentengine setup`.
	projectEnv := "0"
	if in.Venv != "" || isEnvPrefix(in.Path) {
		projectEnv = "1"
	}
	cmd.Env = append(env, "AGENTENGINE_DOCTOR_PROJECT_ENV="+projectEnv)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if code, ok := exitCode(runErr); runErr != nil && (!ok || code > 1) {
		return fail(fmt.Sprintf("`python -m %s doctor` failed (%v): %s", project.BridgeModule, runErr, lastLine(stderr.String())))
	}
	// The report is one JSON object; tolerate stray output before it.
	text := stdout.String()
	if i := strings.Index(text, "{"); i >= 0 {
		text = text[i:]
	}
	var rep Report
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &rep); err != nil || len(rep.Checks) == 0 {
		detail := fmt.Sprintf("`python -m %s doctor` printed no report", project.BridgeModule)
		if l := lastLine(stderr.String()); l != "" {
			detail += ": " + l
		}
		return fail(detail)
	}
	return rep.Checks
}

// splitFix separates "…; fix: …" or "…\nfix: …" in an error message.
func splitFix(msg string) (detail, fix string) {
	for _, sep := range []string{"\nfix: ", "; fix: ", " fix: "} {
		if i := strings.Index(msg, sep); i >= 0 {
			return strings.TrimSpace(msg[:i]), strings.TrimSpace(msg[i+len(sep):])
		}
	}
	return msg, ""
}

// shellQuote quotes a path for a command the user copies.
func shellQuote(s string) string { return project.ShellQuote(s) }
