package project

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// EntryPoint is a parsed Python entry point: "path/to/file.py[:attr]", "pkg/dir[:attr]" or
// "package.module[:attr]"; without ":attr" the object is agent_variable.
type EntryPoint struct {
	// Raw is the entry point as written.
	Raw string
	// File is the absolute file or package directory for the path forms, else "".
	File string
	// Module is the dotted module name for the module form, else "".
	Module string
	// Attr is the object to load (from ":attr" or agent_variable).
	Attr string
	// AttrFromVariable: Attr came from agent_variable, not the entry point.
	AttrFromVariable bool
}

var (
	dottedName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	// topLevelAssign finds names a module visibly binds (assignments, defs, imports as).
	topLevelAssign = regexp.MustCompile(`(?m)^(?:([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=\n]*)?=[^=]|(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)|class\s+([A-Za-z_][A-Za-z0-9_]*))`)
)

// parseEntry splits and checks the entry point of a Python project: the file or package
// must exist in the project, names must be Python identifiers, and a .py file must at
// least mention the object it is supposed to define (KsADK silently falls back to
// heuristics here; this host says what is wrong instead).
func (p *Project) parseEntry() (EntryPoint, error) {
	e := EntryPoint{Raw: p.EntryPoint}
	field, fixWhat := "entry_point", "point entry_point at"
	if p.entryFrom != "" {
		field, fixWhat = "graphs", "point the graph's path at"
	}
	ferr := func(format string, args ...any) error {
		return fmt.Errorf("%s: field %q: %s", p.entrySource(), field, fmt.Sprintf(format, args...))
	}
	target, attr := p.EntryPoint, ""
	if i := strings.LastIndexByte(target, ':'); i >= 0 {
		target, attr = target[:i], target[i+1:]
		if attr == "" {
			return e, ferr("%q ends with ':': name the object after it, e.g. %s:graph", p.EntryPoint, target)
		}
	}
	e.Attr = attr
	if attr == "" {
		e.Attr, e.AttrFromVariable = p.AgentVariable, true
	}
	if !dottedName.MatchString(e.Attr) {
		if e.AttrFromVariable {
			return e, p.fieldErr("agent_variable", "%q is not a Python identifier", e.Attr)
		}
		return e, ferr("%q: %q after ':' is not a Python identifier", p.EntryPoint, attr)
	}
	if target == "" {
		return e, ferr("%q names no file or module; e.g. agent.py:graph", p.EntryPoint)
	}
	isPath := strings.HasSuffix(target, ".py") || strings.ContainsAny(target, `/\`) || strings.HasPrefix(target, ".")
	if !isPath {
		if !dottedName.MatchString(target) {
			return e, ferr("%q is neither a file path nor a module name; e.g. agent.py:graph or my_agent.agent:graph", p.EntryPoint)
		}
		e.Module = target
		// A module may also come from an installed package, so absence here is no error;
		// when it is a local file, the attribute check below still applies.
		if f := p.findModule(target); f != "" {
			return e, p.checkDefines(e, f, ferr)
		}
		return e, nil
	}
	path, err := p.contained(filepath.FromSlash(target))
	if err != nil {
		return e, ferr("%v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return e, ferr("%s does not exist in %s%s; fix: %s the file that defines your agent, e.g. %s",
			target, p.Dir, p.nearbyPy(target), fixWhat, suggestEntry(p.Dir))
	}
	e.File = path
	if st.IsDir() {
		init := filepath.Join(path, "__init__.py")
		if _, err := os.Stat(init); err != nil {
			return e, ferr("%s is a directory without __init__.py; fix: name the .py file that defines your agent, e.g. `entry_point: %s/agent.py:%s`",
				target, strings.TrimSuffix(target, "/"), e.Attr)
		}
		return e, p.checkDefines(e, init, ferr)
	}
	if !strings.HasSuffix(path, ".py") {
		return e, ferr("%s is not a .py file", target)
	}
	return e, p.checkDefines(e, path, ferr)
}

// checkDefines reports a .py file that does not mention the object it should define.
func (p *Project) checkDefines(e EntryPoint, file string, ferr func(string, ...any) error) error {
	if p.RunnerClass != "" {
		return nil // KsADK's runner class answers: the object is not used
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return ferr("read %s: %v", file, err)
	}
	name, _, _ := strings.Cut(e.Attr, ".")
	text := string(src)
	if regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(text) || strings.Contains(text, "import *") {
		return nil
	}
	rel, _ := filepath.Rel(p.Dir, file)
	var names []string
	for _, m := range topLevelAssign.FindAllStringSubmatch(text, -1) {
		for _, n := range m[1:] {
			if n != "" && !strings.HasPrefix(n, "_") {
				names = append(names, n)
			}
		}
	}
	hint := ""
	if len(names) > 0 {
		hint = "; it defines " + strings.Join(firstN(names, 8), ", ")
	}
	if e.AttrFromVariable {
		return p.fieldErr("agent_variable", "%s does not define %q%s; fix: set `agent_variable` to the name of your graph, or write entry_point as %s:<name>",
			rel, name, hint, e.Raw)
	}
	what := "your compiled graph"
	if p.Framework == FrameworkPython {
		what = "your Runner (class, instance or factory)"
	}
	return ferr("%s does not define %q%s; fix: write the name of %s after ':'", rel, name, hint, what)
}

// findModule resolves a dotted module name to a file in the project (or its src/).
func (p *Project) findModule(mod string) string {
	rel := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
	for _, root := range []string{p.Dir, filepath.Join(p.Dir, "src")} {
		for _, cand := range []string{rel + ".py", filepath.Join(rel, "__init__.py")} {
			f := filepath.Join(root, cand)
			if st, err := os.Stat(f); err == nil && !st.IsDir() {
				return f
			}
		}
	}
	return ""
}

// entrySource is the file the entry point was read from.
func (p *Project) entrySource() string {
	if p.entryFrom != "" {
		return p.entryFrom
	}
	return p.ConfigPath
}

// nearbyPy lists the .py files next to a missing entry file, to spot a typo.
func (p *Project) nearbyPy(target string) string {
	dir := filepath.Join(p.Dir, filepath.Dir(filepath.FromSlash(target)))
	m, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	if len(m) == 0 {
		return ""
	}
	names := make([]string, 0, len(m))
	for _, f := range m {
		r, _ := filepath.Rel(p.Dir, f)
		names = append(names, filepath.ToSlash(r))
	}
	return " (Python files there: " + strings.Join(firstN(names, 8), ", ") + ")"
}

// suggestEntry proposes an entry point for a fix message.
func suggestEntry(dir string) string {
	for _, f := range []string{"agent.py", "graph.py", "main.py", "app.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return f + ":graph"
		}
	}
	return "agent.py:graph"
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
