package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BridgeModule is the Python module every Python runner starts: the framework bridges
// on top of the Python runner SDK, shipped inside the agentengine binary.
const BridgeModule = "agentengine_adapters"

// The variables of the host's contract with the Python bridge.
const (
	EnvProjectDir    = "AGENTENGINE_PROJECT_DIR"
	EnvAgentName     = "AGENTENGINE_AGENT_NAME"
	EnvFramework     = "AGENTENGINE_FRAMEWORK"
	EnvEntryPoint    = "AGENTENGINE_ENTRY_POINT"
	EnvAgentVariable = "AGENTENGINE_AGENT_VARIABLE"
	EnvRunnerClass   = "AGENTENGINE_RUNNER_CLASS"
	EnvStateDir      = "AGENTENGINE_STATE_DIR"
)

// pythonLaunch is `<python> -u -m agentengine_adapters` in the project directory, with
// the bridge on PYTHONPATH and the agent described by AGENTENGINE_* variables.
func (p *Project) pythonLaunch(opt BuildOptions) (Launch, error) {
	l := Launch{Dir: p.Dir}
	if len(opt.PythonPath) == 0 {
		return l, errors.New("internal error: the Python bridge was not provided")
	}
	in, err := p.FindPython()
	if err != nil {
		return l, err
	}
	l.Python = in
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		return l, fmt.Errorf("create %s: %w", p.StateDir(), err)
	}
	if l.Env, err = p.PythonEnv(in, opt.PythonPath); err != nil {
		return l, err
	}
	l.Command = []string{in.Path, "-u", "-m", BridgeModule}
	if p.Framework == FrameworkPython {
		spec, err := p.sdkRunnerSpec()
		if err != nil {
			return l, err
		}
		l.Command = []string{in.Path, "-u", "-m", SDKModule, spec}
	}
	return l, nil
}

// SDKModule is the Python runner SDK's module; `python -m agentengine_runner module:attr`
// imports the runner before the handshake, so a broken import never reports ready.
const SDKModule = "agentengine_runner"

// sdkRunnerSpec is the "module:attr" the SDK loads for a `framework: python` project:
// a file path becomes its dotted module name, imported from the project directory (the
// runner's working directory and first import path).
func (p *Project) sdkRunnerSpec() (string, error) {
	e := p.Entry
	mod := e.Module
	if e.File != "" {
		rel, err := filepath.Rel(p.Dir, e.File)
		if err != nil {
			return "", p.fieldErr("entry_point", "%v", err)
		}
		rel = strings.TrimSuffix(filepath.ToSlash(rel), ".py")
		mod = strings.ReplaceAll(rel, "/", ".")
		if !dottedName.MatchString(mod) {
			return "", p.fieldErr("entry_point", "%s cannot be imported as a module (each folder and the file name must be a Python identifier); fix: rename it, or write entry_point as package.module:%s", rel, e.Attr)
		}
	}
	return mod + ":" + e.Attr, nil
}

// PythonEnv is the whole environment of the project's Python bridge (runner and
// doctor alike): the host's basics, the project's env, the active virtualenv, the
// bridge on PYTHONPATH ahead of the project's own, and the AGENTENGINE_* contract.
func (p *Project) PythonEnv(in Interpreter, bridgePath []string) ([]string, error) {
	penv, err := p.ProjectEnv()
	if err != nil {
		return nil, err
	}
	over := map[string]string{
		EnvProjectDir:    p.Dir,
		EnvAgentName:     p.Name,
		EnvFramework:     p.Framework,
		EnvEntryPoint:    p.EntryPoint,
		EnvAgentVariable: p.AgentVariable,
		EnvStateDir:      p.StateDir(),
	}
	if p.RunnerClass != "" {
		over[EnvRunnerClass] = p.RunnerClass
	}
	pp := strings.Join(bridgePath, string(os.PathListSeparator))
	if own := penv["PYTHONPATH"]; own != "" {
		pp += string(os.PathListSeparator) + own
	}
	if shell := os.Getenv("PYTHONPATH"); shell != "" && !p.IsolateEnv {
		pp += string(os.PathListSeparator) + shell
	}
	over["PYTHONPATH"] = pp
	if in.Venv != "" {
		// What `activate` does: tools the agent runs (pip, CLIs) come from its venv.
		path := penv["PATH"]
		if path == "" {
			path = os.Getenv("PATH")
		}
		bin := filepath.Join(in.Venv, "bin")
		if path != "" {
			bin += string(os.PathListSeparator) + path
		}
		over["PATH"] = bin
		over["VIRTUAL_ENV"] = in.Venv
	}
	return p.runnerEnv(over)
}
