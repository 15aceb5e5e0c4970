// Package project reads an agent project's configuration (agentengine.yaml, compatible
// with KsADK's) and resolves how to launch its runner.
package project

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// ConfigFiles are the file names looked up in a project directory, in order.
var configFiles = []string{"agentengine.yaml", "ksadk.yaml", "ksadk.yml"}

// DefaultAgentVariable is the object a Python entry point without ":attr" names (KsADK's).
const DefaultAgentVariable = "root_agent"

// Frameworks this host can run.
const (
	FrameworkGo         = "go"
	FrameworkLangGraph  = "langgraph"
	FrameworkLangChain  = "langchain"
	FrameworkDeepAgents = "deepagents"
	FrameworkADK        = "adk"
	// FrameworkPython is a runner written on the Python runner SDK (agentengine_runner):
	// entry_point names its Runner ("module:Runner" or "file.py:Runner").
	FrameworkPython = "python"
)

// SDKRunnerVariable is the object a `framework: python` entry point without ":attr"
// names (the SDK's `python -m agentengine_runner module` default).
const SDKRunnerVariable = "runner"

// Project is a loaded agent project.
type Project struct {
	// Dir is the project's absolute directory; ConfigPath the file it was read from
	// (agentengine.yaml, or langgraph.json for a LangGraph project without one).
	Dir        string
	ConfigPath string
	Config
	// LangGraph is the project's langgraph.json, if it has one.
	LangGraph *LangGraphConfig
	// Entry is the parsed entry point of a Python project.
	Entry EntryPoint

	// Warnings are things about the configuration worth saying that do not stop it
	// loading (KsADK keys this host ignores).
	Warnings []string

	// entryFrom is the file the entry point came from when it is not ConfigPath.
	entryFrom string
}

// Config is the content of agentengine.yaml. KsADK's fields come first; the rest are this
// host's additions. An unknown key is an error naming the nearest known one; KsADK's keys
// this host does not use load with a warning (Project.Warnings).
type Config struct {
	Name          string `yaml:"name"`
	Description   string `yaml:"description"`
	Framework     string `yaml:"framework"`
	EntryPoint    string `yaml:"entry_point"`
	AgentVariable string `yaml:"agent_variable"`
	// RunnerClass is KsADK's custom runner (`module.Class`, a subclass of ksadk's
	// BaseRunner): the project answers through that class's stream() instead of an agent
	// object. It needs the ksadk package in the project's environment.
	RunnerClass string `yaml:"runner_class"`

	// Binary is a prebuilt runner executable (Go runners), relative to the project.
	Binary string `yaml:"binary"`
	// Python is the interpreter or virtualenv for Python runners.
	Python string `yaml:"python"`
	// ProcessesSetting is the `processes` field as written: a number of runner
	// processes, or "auto". Read Processes and MaxProcesses instead.
	ProcessesSetting any `yaml:"processes"`
	// Processes is how many runner processes start; MaxProcesses how many the agent's
	// pool may grow to while every one of them is CPU-bound. "auto" (the default of the
	// Python frameworks, whose interpreter lock holds a process to one core) starts one
	// and allows up to AutoMaxProcesses; a number fixes both; Go runners use every core
	// in one process and default to one.
	Processes    int `yaml:"-"`
	MaxProcesses int `yaml:"-"`
	// Env is extra environment for the runner, over the shell's and .env's.
	Env map[string]string `yaml:"env"`
	// IsolateEnv (run --isolate-env): the runner sees only the configured environment
	// (.env, Env), PATH/HOME and the like, and what the host needs to launch it, none
	// of the shell's other variables.
	IsolateEnv bool `yaml:"-"`
	// OpenAICompat selects the OpenAI-compatible API's shapes for this agent: "openai"
	// (default) or "ksadk" (KsADK's tool-call, approval and stream shapes).
	OpenAICompat string `yaml:"openai_compat"`
	// Workspace says who the Web UI's workspace files belong to: "per-user" (default,
	// each user has their own) or "shared" (one workspace for every user of the agent).
	Workspace string `yaml:"workspace"`
	// RunTimeoutSetting is `run_timeout` as written ("10m", "90s", or a number of
	// seconds); read RunTimeout. A run still going after it ends failed (none by default).
	RunTimeoutSetting any           `yaml:"run_timeout"`
	RunTimeout        time.Duration `yaml:"-"`
}

// Workspace modes (Config.Workspace).
const (
	WorkspacePerUser = "per-user"
	WorkspaceShared  = "shared"
)

// namePattern keeps agent names usable as OpenAI model ids and URL path segments.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Load reads the project in dir.
func Load(dir string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("project %s: not a directory", dir)
	}
	p := &Project{Dir: abs}
	for _, name := range configFiles {
		path := filepath.Join(abs, name)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		p.ConfigPath = path
		// KsADK reads these files as utf-8-sig.
		data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		warnings, err := checkKeys(path, data)
		if err != nil {
			return nil, err
		}
		p.Warnings = warnings
		if err := yaml.Unmarshal(data, &p.Config); err != nil {
			return nil, fmt.Errorf("%s is not valid YAML: %w", path, err)
		}
		break
	}
	lg, err := readLangGraph(abs)
	if err != nil {
		return nil, err
	}
	p.LangGraph = lg
	if p.ConfigPath == "" {
		if lg == nil {
			return nil, fmt.Errorf("no agentengine.yaml (or langgraph.json) in %s: create a project with `agentengine init NAME -f langgraph`, or write agentengine.yaml with at least `name`, `framework` and `entry_point`", abs)
		}
		// A LangGraph project as langgraph-cli knows it: its one graph is the agent.
		p.ConfigPath = lg.Path
		p.Framework = FrameworkLangGraph
	}
	if err := p.normalise(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Project) fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%s: field %q: %s", p.ConfigPath, field, fmt.Sprintf(format, args...))
}

func (p *Project) normalise() error {
	if p.Name == "" {
		p.Name = filepath.Base(p.Dir)
	}
	if !namePattern.MatchString(p.Name) {
		return p.fieldErr("name", "%q is not a valid agent name: use letters, digits, '.', '_' and '-' (it becomes the OpenAI model id)", p.Name)
	}
	p.Framework = strings.ToLower(strings.TrimSpace(p.Framework))
	switch p.Framework {
	case FrameworkGo, FrameworkLangGraph, FrameworkLangChain, FrameworkDeepAgents, FrameworkADK, FrameworkPython:
	case "":
		return p.fieldErr("framework", "missing: set it to one of go, python, langgraph, langchain, deepagents, adk")
	default:
		return p.fieldErr("framework", "unknown framework %q: use one of go, python (a runner on the Python SDK), langgraph, langchain, deepagents, adk", p.Framework)
	}
	if err := p.normaliseProcesses(); err != nil {
		return err
	}
	if err := p.normaliseRunTimeout(); err != nil {
		return err
	}
	p.OpenAICompat = strings.ToLower(strings.TrimSpace(p.OpenAICompat))
	if p.OpenAICompat != "" && p.OpenAICompat != "openai" && p.OpenAICompat != "ksadk" {
		return p.fieldErr("openai_compat", "unknown value %q: use openai or ksadk", p.OpenAICompat)
	}
	switch p.Workspace = strings.ToLower(strings.TrimSpace(p.Workspace)); p.Workspace {
	case "":
		p.Workspace = WorkspacePerUser
	case WorkspacePerUser, WorkspaceShared:
	default:
		return p.fieldErr("workspace", "unknown value %q: use per-user or shared", p.Workspace)
	}
	if p.IsPython() {
		return p.normalisePython()
	}
	if p.Python != "" {
		return p.fieldErr("python", "only Python frameworks use an interpreter; remove it or set `framework` to langgraph, langchain, deepagents or adk")
	}
	if p.Binary != "" {
		if _, err := p.contained(p.Binary); err != nil {
			return p.fieldErr("binary", "%v", err)
		}
		return nil
	}
	if p.EntryPoint == "" {
		p.EntryPoint = "."
	}
	if _, err := p.contained(p.EntryPoint); err != nil {
		return p.fieldErr("entry_point", "%v", err)
	}
	return nil
}

// IsPython reports whether the project's runner is Python: a framework bridge or a
// runner on the Python SDK.
func (p *Project) IsPython() bool {
	switch p.Framework {
	case FrameworkLangGraph, FrameworkLangChain, FrameworkDeepAgents, FrameworkADK, FrameworkPython:
		return true
	}
	return false
}

// normalisePython fills a Python project's defaults and checks its entry point, so a
// wrong one is reported before any process starts.
func (p *Project) normalisePython() error {
	if p.Binary != "" {
		return p.fieldErr("binary", "only Go runners use `binary`; a %s project names its agent with `entry_point`", p.Framework)
	}
	if p.AgentVariable == "" {
		p.AgentVariable = DefaultAgentVariable
		if p.Framework == FrameworkPython {
			p.AgentVariable = SDKRunnerVariable
		}
	}
	if p.RunnerClass = strings.TrimSpace(p.RunnerClass); p.RunnerClass != "" {
		if err := p.checkRunnerClass(); err != nil {
			return err
		}
	}
	if p.EntryPoint == "" {
		switch {
		case p.LangGraph != nil:
			ep, err := p.LangGraph.pickGraph(p.Dir, p.LangGraph.Path != p.ConfigPath)
			if err != nil {
				return err
			}
			p.EntryPoint, p.entryFrom = ep, p.LangGraph.Path
		default:
			if _, err := os.Stat(filepath.Join(p.Dir, "agent.py")); err != nil {
				return p.fieldErr("entry_point", "missing, and there is no agent.py (KsADK's default); fix: set it to the file that defines your agent, e.g. `entry_point: %s`", suggestEntry(p.Dir))
			}
			p.EntryPoint = "agent.py"
		}
	}
	e, err := p.parseEntry()
	if err != nil {
		return err
	}
	p.Entry = e
	return nil
}

// runnerClassPattern is a dotted Python path with at least a module and a class.
var runnerClassPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

func (p *Project) checkRunnerClass() error {
	if p.Framework == FrameworkADK {
		return p.fieldErr("runner_class", "KsADK runner classes run LangGraph, LangChain and DeepAgents projects; remove it from this adk project")
	}
	if !runnerClassPattern.MatchString(p.RunnerClass) {
		return p.fieldErr("runner_class", "%q is not a fully-qualified class path: write module.Class, e.g. `runner_class: agent.CustomRunner`", p.RunnerClass)
	}
	return nil
}

// contained resolves rel inside the project directory.
func (p *Project) contained(rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel), nil
	}
	path := filepath.Join(p.Dir, rel)
	if r, err := filepath.Rel(p.Dir, path); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q points outside the project directory", rel)
	}
	return path, nil
}

// StateDir is the project's local runtime state directory (.agentengine).
func (p *Project) StateDir() string { return filepath.Join(p.Dir, ".agentengine") }

// DefaultSessionPath is the default SQLite session file (KsADK's path).
func (p *Project) DefaultSessionPath() string {
	return filepath.Join(p.StateDir(), "ui", "sessions.sqlite")
}

// AutoMaxProcesses is the most runner processes `processes: auto` grows to: one per CPU,
// at most four (each Python process holds its own copy of the agent's libraries).
func AutoMaxProcesses() int {
	return min(runtime.NumCPU(), 4)
}

func (p *Project) normaliseProcesses() error {
	auto := p.IsPython()
	switch v := p.ProcessesSetting.(type) {
	case nil:
	case string:
		if strings.ToLower(strings.TrimSpace(v)) != "auto" {
			return p.fieldErr("processes", "%q is not a number of processes: use a number (1 or more) or auto", v)
		}
		auto = true
	default:
		n, ok := wholeNumber(v)
		if ok && n == 0 {
			break // 0 is the default, as it always was
		}
		if !ok || n < 1 {
			return p.fieldErr("processes", "%v is not a number of processes: use a number (1 or more) or auto", v)
		}
		if n > maxProcesses {
			return p.fieldErr("processes", "%d is too many: at most %d", n, maxProcesses)
		}
		p.Processes, p.MaxProcesses = int(n), int(n)
		return nil
	}
	p.Processes, p.MaxProcesses = 1, 1
	if auto && p.IsPython() {
		p.MaxProcesses = AutoMaxProcesses()
	}
	return nil
}

// maxProcesses bounds a fixed `processes`: more would only hold memory.
const maxProcesses = 64

// wholeNumber reads a YAML number that is a whole number.
func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// normaliseRunTimeout reads `run_timeout`: a Go duration ("90s", "10m") or a number of
// seconds; 0 or absent is no limit.
func (p *Project) normaliseRunTimeout() error {
	bad := func(v any) error {
		return p.fieldErr("run_timeout", "%v is not a time limit: write a duration such as 90s or 10m, or a number of seconds (0 or absent: no limit)", v)
	}
	switch v := p.RunTimeoutSetting.(type) {
	case nil:
		return nil
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return bad(fmt.Sprintf("%q", v))
		}
		p.RunTimeout = d
	default:
		n, ok := v.(float64)
		if !ok {
			w, isWhole := wholeNumber(v)
			if !isWhole {
				return bad(v)
			}
			n = float64(w)
		}
		if n < 0 || n > float64(math.MaxInt64/int64(time.Second)) {
			return bad(v)
		}
		p.RunTimeout = time.Duration(n * float64(time.Second))
	}
	return nil
}
