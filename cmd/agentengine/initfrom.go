package main

// init --from-agent: wrap existing agent code (a .py file or a directory) as a project
// without touching the code: find the entry object, tell the framework from the imports,
// write agentengine.yaml and requirements.txt, and for a LangGraph graph with its own
// state schema an entry module with a ksadk_prepare_state hook that fills that state.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/host/project"
)

// adapterFile is the entry module written for LangGraph graphs with a custom state.
const adapterFile = "agentengine_entry.py"

var (
	reFromImport = regexp.MustCompile(`^\s*from\s+([A-Za-z_][\w.]*)\s+import\s`)
	reImport     = regexp.MustCompile(`^\s*import\s+(.+)$`)
	// A top-level assignment: NAME [: annotation] = value.
	reAssign    = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*(.+)$`)
	reClass     = regexp.MustCompile(`^class\s+([A-Za-z_]\w*)\s*\(([^)]*)\)\s*:`)
	reField     = regexp.MustCompile(`^\s+([A-Za-z_]\w*)\s*:\s*([^=#]+)`)
	reStateOf   = regexp.MustCompile(`StateGraph\(\s*(?:state_schema\s*=\s*)?([A-Za-z_]\w*)`)
	reIdent     = regexp.MustCompile(`^[A-Za-z_]\w*$`)
	reADKAgent  = regexp.MustCompile(`^(?:\w+\.)*(?:Agent|LlmAgent|SequentialAgent|ParallelAgent|LoopAgent)\(`)
	reGraphCall = regexp.MustCompile(`^(?:\w+\.)*(?:create_react_agent|create_agent|create_deep_agent|create_supervisor|create_swarm)\(`)
)

// entryCandidate is an object a module defines at top level that could be the agent.
type entryCandidate struct {
	file  string // relative to the project, slash-separated
	name  string
	kind  string // "graph", "agent" (ADK) or "alias"
	score int
}

// pyFile is what the scan learnt about one Python file.
type pyFile struct {
	rel     string
	imports []string // dotted module names
	// builders are names bound to StateGraph(...) builders (never the entry).
	builders map[string]string // name -> state class
	assigns  []entryCandidate
	classes  map[string]pyClass
	hooks    bool // defines ksadk_prepare_state
	usesLite bool // mentions ADK's LiteLlm
}

type pyClass struct {
	bases  string
	fields []pyField
}

type pyField struct{ name, typ string }

func runInitFromAgent(cmd *cobra.Command, from string, args []string, framework string, frameworkSet bool) error {
	abs, err := filepath.Abs(from)
	if err != nil {
		return fmt.Errorf("--from-agent %s: %w", from, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("--from-agent %s: %w", from, err)
	}
	dir, only := abs, ""
	if !fi.IsDir() {
		if filepath.Ext(abs) != ".py" {
			return fmt.Errorf("--from-agent %s: give a Python file (.py) or a directory", from)
		}
		dir, only = filepath.Dir(abs), filepath.Base(abs)
	}
	for _, name := range []string{"agentengine.yaml", "ksadk.yaml", "ksadk.yml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s already has %s: it is a project already (agentengine run %s)", dir, name, dir)
		}
	}
	name := filepath.Base(dir)
	if len(args) == 1 {
		name = args[0]
	}
	if !validProjectName.MatchString(name) {
		return fmt.Errorf("%q is not a valid project name: use letters, digits, '.', '_' and '-' (pass the name as an argument: init --from-agent PATH NAME)", name)
	}

	files, err := scanPython(dir, only)
	if err != nil {
		return err
	}
	entry, err := pickEntry(files)
	if err != nil {
		return fmt.Errorf("--from-agent %s: %w", from, err)
	}
	ef := fileByRel(files, entry.file)
	if !frameworkSet {
		if framework = detectFramework(ef, files); framework == "" {
			return fmt.Errorf("--from-agent %s: cannot tell the framework from the imports of %s; pass it with -f langgraph|langchain|deepagents|adk", from, entry.file)
		}
	} else {
		framework = strings.ToLower(strings.TrimSpace(framework))
		if _, ok := pythonScaffolds()[framework]; !ok {
			return fmt.Errorf("--framework %q: --from-agent wraps langgraph, langchain, deepagents or adk code", framework)
		}
	}

	out := cmd.OutOrStdout()
	written := []string{}
	entryPoint, variable := entry.file, entry.name
	if framework == project.FrameworkLangGraph && !ef.hooks {
		if state, fields, ok := customState(ef, files); ok {
			src := adapterSource(entry, state, fields)
			if err := writeNew(filepath.Join(dir, adapterFile), src); err != nil {
				return err
			}
			written = append(written, adapterFile)
			entryPoint, variable = adapterFile, project.DefaultAgentVariable
		}
	}
	yaml := fmt.Sprintf("# Written by `agentengine init --from-agent`. `agentengine run .` serves it.\nname: %s\nframework: %s\nentry_point: %s\nagent_variable: %s\n",
		name, framework, entryPoint, variable)
	if err := writeNew(filepath.Join(dir, "agentengine.yaml"), []byte(yaml)); err != nil {
		return err
	}
	written = append(written, "agentengine.yaml")

	reqs := requirementsFromImports(dir, files, framework)
	reqPath := filepath.Join(dir, "requirements.txt")
	if _, err := os.Stat(reqPath); err == nil {
		fmt.Fprintf(out, "kept the existing requirements.txt (its imports suggest: %s)\n", strings.Join(reqs, " "))
	} else {
		var b bytes.Buffer
		b.WriteString("# From the imports of the agent's code (init --from-agent); add versions as needed.\n")
		for _, r := range reqs {
			b.WriteString(r + "\n")
		}
		if err := writeNew(reqPath, b.Bytes()); err != nil {
			return err
		}
		written = append(written, "requirements.txt")
	}
	fmt.Fprintf(out, "wrapped %s (%s): the agent is %s in %s\nwrote %s in %s\nrun it:  agentengine run %s\ncheck:   agentengine doctor %s\n",
		from, framework, entry.name, entry.file, strings.Join(written, ", "), dir, dir, dir)
	return nil
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; agentengine does not overwrite it", path)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// skipDirs are never scanned: environments, caches, tests.
func skipDirs() map[string]bool {
	return map[string]bool{
		".venv": true, "venv": true, "env": true, ".git": true, "__pycache__": true, "node_modules": true,
		"site-packages": true, ".agentengine": true, "tests": true, "test": true, "build": true, "dist": true,
		".tox": true, ".mypy_cache": true, ".pytest_cache": true,
	}
}

// scanPython reads the project's Python files (only the one named, if set).
func scanPython(dir, only string) ([]*pyFile, error) {
	var files []*pyFile
	skip := skipDirs()
	read := func(path string) error {
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, parsePython(filepath.ToSlash(rel), data))
		return nil
	}
	if only != "" {
		if err := read(filepath.Join(dir, only)); err != nil {
			return nil, err
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (skip[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(dir, path); strings.Count(rel, string(filepath.Separator)) >= 3 {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".py") || strings.HasPrefix(d.Name(), "test_") || (only != "" && path == filepath.Join(dir, only)) {
			return nil
		}
		return read(path)
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if only != "" {
		// Only the named file can be the entry; the rest still counts for imports.
		for _, f := range files[1:] {
			f.assigns = nil
		}
	}
	return files, nil
}

// parsePython reads what matters without a Python parser: imports, top-level
// assignments, class bodies and the hook's definition.
func parsePython(rel string, data []byte) *pyFile {
	f := &pyFile{rel: rel, builders: map[string]string{}, classes: map[string]pyClass{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var class string
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if strings.Contains(line, "LiteLlm") {
			f.usesLite = true
		}
		if m := reFromImport.FindStringSubmatch(line); m != nil {
			f.imports = append(f.imports, m[1])
		} else if m := reImport.FindStringSubmatch(line); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				if fields := strings.Fields(part); len(fields) > 0 {
					f.imports = append(f.imports, fields[0])
				}
			}
		}
		if class != "" {
			if line == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
				if m := reField.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "def ") {
					c := f.classes[class]
					c.fields = append(c.fields, pyField{m[1], strings.TrimSpace(m[2])})
					f.classes[class] = c
				}
				continue
			}
			class = ""
		}
		if m := reClass.FindStringSubmatch(line); m != nil {
			class = m[1]
			f.classes[class] = pyClass{bases: m[2]}
			continue
		}
		if strings.HasPrefix(line, "def ksadk_prepare_state") || strings.HasPrefix(line, "async def ksadk_prepare_state") {
			f.hooks = true
		}
		m := reAssign.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, rhs := m[1], strings.TrimSpace(m[2])
		switch {
		case strings.HasPrefix(rhs, "StateGraph("):
			state := ""
			if s := reStateOf.FindStringSubmatch(rhs); s != nil {
				state = s[1]
			}
			f.builders[name] = state
		case strings.Contains(rhs, ".compile("):
			f.assigns = append(f.assigns, entryCandidate{file: rel, name: name, kind: "graph"})
		case reGraphCall.MatchString(rhs):
			f.assigns = append(f.assigns, entryCandidate{file: rel, name: name, kind: "graph"})
		case reADKAgent.MatchString(rhs):
			f.assigns = append(f.assigns, entryCandidate{file: rel, name: name, kind: "agent"})
		case reIdent.MatchString(rhs):
			f.assigns = append(f.assigns, entryCandidate{file: rel, name: name, kind: "alias:" + rhs})
		}
	}
	// An alias counts only if it names an entry object of the same file.
	kept := f.assigns[:0]
	known := map[string]bool{}
	for _, a := range f.assigns {
		if !strings.HasPrefix(a.kind, "alias:") {
			known[a.name] = true
		}
	}
	for _, a := range f.assigns {
		if target, ok := strings.CutPrefix(a.kind, "alias:"); ok {
			if !known[target] {
				continue
			}
			a.kind = "alias"
		}
		kept = append(kept, a)
	}
	f.assigns = kept
	return f
}

// pickEntry chooses the agent: root_agent (KsADK's default name) first, then entry
// files named like one, then the last compiled graph or agent defined.
func pickEntry(files []*pyFile) (entryCandidate, error) {
	var all []entryCandidate
	for _, f := range files {
		for i, a := range f.assigns {
			a.score = i // later definitions win within a file (the final, composed agent)
			switch a.name {
			case project.DefaultAgentVariable:
				a.score += 10000
			case "graph", "agent", "app", "workflow":
				a.score += 1000
			}
			switch strings.TrimSuffix(filepath.Base(a.file), ".py") {
			case "agent", "graph", "main", "app":
				a.score += 500
			}
			if strings.HasSuffix(a.file, "__init__.py") {
				a.score -= 100 // re-exports: prefer where the object is built
			}
			all = append(all, a)
		}
	}
	if len(all) == 0 {
		var builders []string
		for _, f := range files {
			for b := range f.builders {
				builders = append(builders, f.rel+": "+b)
			}
		}
		if len(builders) > 0 {
			sort.Strings(builders)
			return entryCandidate{}, fmt.Errorf("found only StateGraph builders (%s) and no compiled graph: add `graph = builder.compile()` at module level", strings.Join(builders, ", "))
		}
		return entryCandidate{}, errors.New("found no agent object at module level (a compiled LangGraph graph, create_agent/create_deep_agent result or a Google ADK Agent); name it root_agent")
	}
	best := all[0]
	for _, a := range all[1:] {
		if a.score > best.score {
			best = a
		}
	}
	return best, nil
}

func fileByRel(files []*pyFile, rel string) *pyFile {
	for _, f := range files {
		if f.rel == rel {
			return f
		}
	}
	return nil
}

// detectFramework reads the entry file's imports, then the project's.
func detectFramework(entry *pyFile, files []*pyFile) string {
	if fw := frameworkOf(entry.imports); fw != "" {
		return fw
	}
	var all []string
	for _, f := range files {
		all = append(all, f.imports...)
	}
	return frameworkOf(all)
}

func frameworkOf(imports []string) string {
	has := func(prefix string) bool {
		return slices.ContainsFunc(imports, func(m string) bool { return m == prefix || strings.HasPrefix(m, prefix+".") })
	}
	switch {
	case has("google.adk"):
		return project.FrameworkADK
	case has("deepagents"):
		return project.FrameworkDeepAgents
	case has("langchain.agents"):
		return project.FrameworkLangChain
	case has("langgraph"):
		return project.FrameworkLangGraph
	case has("langchain"):
		return project.FrameworkLangChain
	}
	return ""
}

// customState returns the graph's state class when it is the project's own schema
// without a messages field (the default input mapping then has nowhere to go).
func customState(entry *pyFile, files []*pyFile) (string, []pyField, bool) {
	var state string
	for _, s := range entry.builders {
		if s != "" {
			state = s
			break
		}
	}
	if state == "" || state == "MessagesState" {
		return "", nil, false
	}
	c, ok := entry.classes[state]
	if !ok {
		for _, f := range files {
			if c, ok = f.classes[state]; ok {
				break
			}
		}
	}
	if !ok || strings.Contains(c.bases, "MessagesState") {
		return "", nil, false
	}
	for _, fld := range c.fields {
		if fld.name == "messages" {
			return "", nil, false
		}
	}
	return state, c.fields, true
}

// inputFieldNames take the user's input, in order of preference.
var inputFieldNames = []string{"input", "query", "question", "prompt", "task", "user_input", "request", "message", "text", "topic"}

func adapterSource(entry entryCandidate, state string, fields []pyField) []byte {
	module := strings.TrimSuffix(entry.file, ".py")
	module = strings.TrimSuffix(module, "/__init__")
	module = strings.TrimPrefix(module, "src/") // src/ is on the import path too
	module = strings.ReplaceAll(module, "/", ".")

	inputField := ""
	for _, want := range inputFieldNames {
		for _, f := range fields {
			if f.name == want {
				inputField = f.name
				break
			}
		}
		if inputField != "" {
			break
		}
	}
	if inputField == "" {
		for _, f := range fields {
			if f.typ == "str" {
				inputField = f.name
				break
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, `"""Entry module written by agentengine init --from-agent.

%s's graph keeps its own state (%s), not a list of messages, so this hook builds that
state from each turn: the runner calls ksadk_prepare_state(payload, session_context)
and passes what it returns to the graph. Adjust it to your graph; %s is unchanged.
"""

from %s import %s as root_agent


def ksadk_prepare_state(payload: dict, session_context: dict) -> dict:
    if session_context.get("is_resume"):
        # Resuming after an approval: the graph gets the answer as its resume value.
        return payload.get("input")
    state: dict = {}
`, entry.file, state, entry.file, module, entry.name)
	for _, f := range fields {
		switch {
		case f.name == inputField:
			fmt.Fprintf(&b, "    state[%q] = payload.get(\"input\", \"\")\n", f.name)
		case f.name == "history" || f.name == "chat_history":
			fmt.Fprintf(&b, "    # Earlier turns of the conversation, as {\"role\", \"content\"} dicts.\n    state[%q] = session_context.get(\"history\", [])\n", f.name)
		case f.name == "attachments" || f.name == "attachment_results":
			fmt.Fprintf(&b, "    state[%q] = payload.get(%q, [])\n", f.name, f.name)
		default:
			fmt.Fprintf(&b, "    # %s (%s): not set from the request; set it here if the graph needs it on input.\n", f.name, f.typ)
		}
	}
	if inputField == "" {
		b.WriteString("    # No field of the state looked like the user's input: put payload[\"input\"] where it belongs.\n")
	}
	b.WriteString("    return state\n")
	return []byte(b.String())
}

// packageOf maps import names to the packages that provide them where they differ.
func packageOf() map[string]string {
	return map[string]string{
		"google.adk": "google-adk", "google.genai": "google-genai", "dotenv": "python-dotenv", "yaml": "pyyaml",
		"PIL": "pillow", "bs4": "beautifulsoup4", "sklearn": "scikit-learn", "cv2": "opencv-python",
		"dateutil": "python-dateutil", "docx": "python-docx", "fitz": "pymupdf", "jwt": "pyjwt",
		"langchain_core": "langchain-core", "langchain_openai": "langchain-openai",
		"langchain_community": "langchain-community", "langchain_anthropic": "langchain-anthropic",
		"langchain_google_genai": "langchain-google-genai", "langchain_mcp_adapters": "langchain-mcp-adapters",
		"langchain_text_splitters": "langchain-text-splitters", "langgraph_supervisor": "langgraph-supervisor",
		"langgraph_swarm": "langgraph-swarm",
	}
}

// requirementsFromImports lists the third-party packages the code imports (standard
// library and the project's own modules left out), plus what the framework needs.
func requirementsFromImports(dir string, files []*pyFile, framework string) []string {
	set := map[string]bool{}
	std, pkgs := stdlib(), packageOf()
	for _, f := range files {
		for _, imp := range f.imports {
			if strings.HasPrefix(imp, ".") {
				continue
			}
			top, _, _ := strings.Cut(imp, ".")
			if std[top] || isLocalModule(dir, top) {
				continue
			}
			if top == "google" {
				parts := strings.SplitN(imp, ".", 3)
				if len(parts) < 2 {
					continue
				}
				top = "google." + parts[1]
			}
			pkg, ok := pkgs[top]
			if !ok {
				if strings.HasPrefix(top, "google.") {
					continue // google.protobuf and friends come with what imports them
				}
				pkg = strings.ReplaceAll(top, "_", "-")
			}
			set[pkg] = true
		}
		if f.usesLite {
			set["litellm"] = true // ADK's LiteLlm needs it and google-adk does not install it
		}
	}
	switch framework {
	case project.FrameworkADK:
		set["google-adk"] = true
	case project.FrameworkLangGraph:
		set["langgraph"] = true
	case project.FrameworkLangChain:
		set["langchain"] = true
	case project.FrameworkDeepAgents:
		set["deepagents"] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func isLocalModule(dir, name string) bool {
	for _, base := range []string{dir, filepath.Join(dir, "src")} {
		if _, err := os.Stat(filepath.Join(base, name+".py")); err == nil {
			return true
		}
		if fi, err := os.Stat(filepath.Join(base, name)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// stdlib is the standard library's top-level modules that agent code commonly imports
// (a subset of sys.stdlib_module_names).
func stdlib() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`__future__ abc argparse ast asyncio base64 binascii bisect builtins
		calendar collections concurrent contextlib contextvars copy csv dataclasses datetime decimal
		difflib email enum errno functools gc getpass glob gzip hashlib heapq hmac html http importlib
		inspect io ipaddress itertools json keyword logging math mimetypes multiprocessing numbers
		operator os pathlib pickle platform pprint queue random re sched secrets select shlex shutil
		signal socket sqlite3 ssl stat statistics string struct subprocess sys tempfile textwrap
		threading time timeit traceback types typing unicodedata unittest urllib uuid warnings weakref
		xml zipfile zlib zoneinfo`) {
		m[n] = true
	}
	return m
}

// fromAgentHelp is init's help on --from-agent.
const fromAgentHelp = `

Wrapping existing code (--from-agent PATH [NAME]):
  Writes agentengine.yaml (and requirements.txt unless there is one) next to the code,
  which is left as it is. NAME defaults to the directory's name.
  - The agent is the module-level object to serve: root_agent if defined, else the
    compiled LangGraph graph (graph = builder.compile(), never the StateGraph builder),
    a create_agent / create_react_agent / create_deep_agent result, or a Google ADK Agent.
  - The framework comes from the imports (google.adk, deepagents, langchain.agents,
    langgraph, langchain); -f overrides it.
  - requirements.txt lists the third-party packages the code imports (plus litellm for
    ADK's LiteLlm).
  - A LangGraph graph whose state is its own schema without "messages" gets
    agentengine_entry.py: it re-exports the graph as root_agent and defines
    ksadk_prepare_state(payload, session_context), which fills that state from each turn.`
