package project

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Requirements are the Python packages a project declares.
type Requirements struct {
	// Files are requirement files (pip -r), absolute.
	Files []string
	// Packages are requirement specifiers: pyproject.toml's [project].dependencies and
	// the package entries of langgraph.json's "dependencies".
	Packages []string
	// Sources name where they were declared, relative to the project, for messages.
	Sources []string
}

// Empty reports whether nothing is declared.
func (r Requirements) Empty() bool { return len(r.Files) == 0 && len(r.Packages) == 0 }

// Digest identifies the declared requirements (file contents included), so a setup can
// tell when they changed.
func (r Requirements) Digest(extra ...string) string {
	h := sha256.New()
	for _, f := range r.Files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(h, "file %s %d\n", f, len(data))
		h.Write(data)
	}
	for _, p := range r.Packages {
		fmt.Fprintf(h, "pkg %s\n", p)
	}
	for _, e := range extra {
		fmt.Fprintf(h, "extra %s\n", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Requirements finds what the project declares: requirements.txt, else pyproject.toml's
// [project].dependencies (the project itself is not installed: the runner imports it
// from the project directory), plus langgraph.json's "dependencies" (local directories
// are read the same way, other entries are pip specifiers).
func (p *Project) Requirements() (Requirements, error) {
	var r Requirements
	seen := map[string]bool{}
	addDir := func(dir string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		rel := func(f string) string {
			s, err := filepath.Rel(p.Dir, f)
			if err != nil {
				return f
			}
			return filepath.ToSlash(s)
		}
		req := filepath.Join(dir, "requirements.txt")
		if st, err := os.Stat(req); err == nil && !st.IsDir() {
			r.Files = append(r.Files, req)
			r.Sources = append(r.Sources, rel(req))
			return nil
		}
		pyproj := filepath.Join(dir, "pyproject.toml")
		deps, found, err := pyprojectDeps(pyproj)
		if err != nil {
			return err
		}
		if found {
			r.Packages = append(r.Packages, deps...)
			r.Sources = append(r.Sources, rel(pyproj))
		}
		return nil
	}
	if err := addDir(p.Dir); err != nil {
		return r, err
	}
	if p.LangGraph != nil {
		for _, d := range p.LangGraph.Dependencies {
			if d == "." || strings.HasPrefix(d, "./") || strings.HasPrefix(d, "../") {
				dir, err := p.contained(filepath.FromSlash(d))
				if err != nil {
					return r, fmt.Errorf("%s: field %q: %v", p.LangGraph.Path, "dependencies", err)
				}
				if err := addDir(dir); err != nil {
					return r, err
				}
				continue
			}
			r.Packages = append(r.Packages, d)
			if !seen[p.LangGraph.Path] {
				seen[p.LangGraph.Path] = true
				r.Sources = append(r.Sources, LangGraphFile)
			}
		}
	}
	return r, nil
}

// pyprojectDeps reads [project].dependencies; found is false without a [project] table.
func pyprojectDeps(path string) (deps []string, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	var doc struct {
		Project *struct {
			Dependencies []string `toml:"dependencies"`
		} `toml:"project"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("%s is not valid TOML: %w", path, err)
	}
	if doc.Project == nil {
		return nil, false, nil
	}
	return doc.Project.Dependencies, true, nil
}

// Requirement is one parsed requirement line: its distribution name and, for "==" pins,
// the version.
type Requirement struct {
	Name string
	Pin  string
	// Extras are the requested extras ("ksadk[adk]" → ["adk"]), lower case.
	Extras []string
}

// NormalizeName is a distribution name in its canonical form (PEP 503): lower case,
// runs of "-", "_" and "." as one "-".
func NormalizeName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r == '-' || r == '_' || r == '.' {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// ParseRequirements reads the names and exact pins of requirement lines, following -r
// includes. Options, URLs and editable installs are skipped: they cannot be checked
// without pip.
func ParseRequirements(r Requirements) ([]Requirement, error) {
	var out []Requirement
	seen := map[string]bool{}
	var readFile func(string, int) error
	readFile = func(path string, depth int) error {
		if seen[path] || depth > 8 {
			return nil
		}
		seen[path] = true
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, " #"); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			for _, opt := range []string{"-r ", "--requirement "} {
				if inc, ok := strings.CutPrefix(line, opt); ok {
					inc = strings.TrimSpace(inc)
					if !filepath.IsAbs(inc) {
						inc = filepath.Join(filepath.Dir(path), inc)
					}
					if err := readFile(inc, depth+1); err != nil {
						return err
					}
				}
			}
			if req, ok := parseRequirement(line); ok {
				out = append(out, req)
			}
		}
		return nil
	}
	for _, f := range r.Files {
		if err := readFile(f, 0); err != nil {
			return nil, err
		}
	}
	for _, p := range r.Packages {
		if req, ok := parseRequirement(p); ok {
			out = append(out, req)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func parseRequirement(line string) (Requirement, bool) {
	if line == "" || line[0] == '#' || line[0] == '-' || strings.Contains(line, "://") {
		return Requirement{}, false
	}
	line, _, _ = strings.Cut(line, ";") // environment markers
	end := 0
	for end < len(line) && (isKeyByte(line[end], end == 0) || line[end] >= '0' && line[end] <= '9') {
		end++
	}
	if end == 0 {
		return Requirement{}, false
	}
	req := Requirement{Name: line[:end]}
	rest := strings.TrimSpace(line[end:])
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			for _, e := range strings.Split(rest[1:j], ",") {
				if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
					req.Extras = append(req.Extras, e)
				}
			}
			rest = strings.TrimSpace(rest[j+1:])
		}
	}
	if v, ok := strings.CutPrefix(rest, "=="); ok && !strings.ContainsAny(v, ",*") {
		req.Pin = strings.TrimSpace(v)
	}
	return req, true
}
