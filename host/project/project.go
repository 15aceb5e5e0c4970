// Package project reads an agent project's configuration (agentengine.yaml, compatible
// with KsADK's) and resolves how to launch its runner.
package project

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

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
)

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

	// entryFrom is the file the entry point came from when it is not ConfigPath.
	entryFrom string
}

// Config is the content of agentengine.yaml. KsADK's fields come first; the rest are this
// host's additions. Unknown fields are ignored so KsADK projects load unchanged.
type Config struct {
	Name          string `yaml:"name"`
	Description   string `yaml:"description"`
	Framework     string `yaml:"framework"`
	EntryPoint    string `yaml:"entry_point"`
	AgentVariable string `yaml:"agent_variable"`

	// Binary is a prebuilt runner executable (Go runners), relative to the project.
	Binary string `yaml:"binary"`
	// Python is the interpreter or virtualenv for Python runners.
	Python string `yaml:"python"`
	// Processes is the number of runner processes (Python pools); default 1.
	Processes int `yaml:"processes"`
	// Env is extra environment for the runner; the runner sees only this, PATH/HOME
	// and what the host needs to launch it.
	Env map[string]string `yaml:"env"`
	// OpenAICompat selects the OpenAI-compatible API's shapes for this agent: "openai"
	// (default) or "ksadk" (KsADK's tool-call, approval and stream shapes).
	OpenAICompat string `yaml:"openai_compat"`
	// Workspace says who the Web UI's workspace files belong to: "per-user" (default,
	// each user has their own) or "shared" (one workspace for every user of the agent).
	Workspace string `yaml:"workspace"`
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
	case FrameworkGo, FrameworkLangGraph, FrameworkLangChain, FrameworkDeepAgents, FrameworkADK:
	case "":
		return p.fieldErr("framework", "missing: set it to one of go, langgraph, langchain, deepagents, adk")
	default:
		return p.fieldErr("framework", "unknown framework %q: use one of go, langgraph, langchain, deepagents, adk", p.Framework)
	}
	if p.Processes < 0 {
		return p.fieldErr("processes", "must be 1 or more")
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
	if p.Processes == 0 {
		p.Processes = 1
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

// IsPython reports whether the project's runner is a Python framework bridge.
func (p *Project) IsPython() bool {
	switch p.Framework {
	case FrameworkLangGraph, FrameworkLangChain, FrameworkDeepAgents, FrameworkADK:
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
