package project

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Import is one module a project's Python code imports, where it is first seen.
type Import struct {
	// Module is the dotted module path; for `from m import a` both "m" and "m.a" are
	// reported (a name imported from a package may be a submodule or a lazy attribute).
	Module string
	// File is relative to the project directory (slash-separated); Line is 1-based.
	File string
	Line int
}

// Bounds of the scan: it runs before every `run`, so it stays cheap on large trees.
const (
	maxScanFiles    = 2000
	maxScanFileSize = 1 << 20
)

var (
	fromImport  = regexp.MustCompile(`^\s*from\s+([A-Za-z_][\w.]*)\s+import\s+\(?\s*([^#]*)`)
	plainImport = regexp.MustCompile(`^\s*import\s+([^#]+)`)
)

// Imports scans the project's .py files for import statements, the way a reader would:
// top-level and indented `import` / `from … import` lines. Virtualenvs, hidden
// directories, caches and node_modules are skipped; relative imports are ignored.
// Modules that are the project's own (a .py file or package at the project root) are
// not reported.
func (p *Project) Imports() []Import {
	seen := map[string]bool{}
	var out []Import
	files := 0
	_ = filepath.WalkDir(p.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts of the tree are not the scan's business
		}
		name := d.Name()
		if d.IsDir() {
			if path != p.Dir && skipScanDir(path, name) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".py") {
			return nil
		}
		if files++; files > maxScanFiles {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(p.Dir, path)
		for _, im := range scanImports(path) {
			if seen[im.Module] {
				continue
			}
			seen[im.Module] = true
			im.File = filepath.ToSlash(rel)
			out = append(out, im)
		}
		return nil
	})
	own := p.ownModules()
	kept := out[:0]
	for _, im := range out {
		top, _, _ := strings.Cut(im.Module, ".")
		if !own[top] {
			kept = append(kept, im)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Module < kept[j].Module })
	return kept
}

func skipScanDir(path, name string) bool {
	if strings.HasPrefix(name, ".") || name == "__pycache__" || name == "node_modules" || name == "site-packages" {
		return true
	}
	// A virtualenv under any name (venv, env, …).
	_, err := os.Stat(filepath.Join(path, "pyvenv.cfg"))
	return err == nil
}

// ownModules are the top-level names the project itself provides: its root's .py files
// and directories (packages, and folders such as a shared common/ put on sys.path).
func (p *Project) ownModules() map[string]bool {
	own := map[string]bool{}
	entries, _ := os.ReadDir(p.Dir)
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() && !strings.HasPrefix(name, "."):
			own[name] = true
		case strings.HasSuffix(name, ".py"):
			own[strings.TrimSuffix(name, ".py")] = true
		}
	}
	return own
}

func scanImports(path string) []Import {
	st, err := os.Stat(path)
	if err != nil || st.Size() > maxScanFileSize {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []Import
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxScanFileSize)
	n := 0
	inString := false
	// open is the module of a `from m import (` whose names continue on later lines.
	open, openLine := "", 0
	names := func(module, list string, line int) {
		for _, name := range strings.Split(list, ",") {
			name, _, _ = strings.Cut(strings.TrimSpace(name), " ")
			name = strings.Trim(name, "()\\ ")
			if isIdent(name) {
				out = append(out, Import{Module: module + "." + name, Line: line})
			}
		}
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		// Skip the bodies of triple-quoted strings (docstrings with example code).
		if c := strings.Count(line, `"""`) + strings.Count(line, `'''`); c%2 == 1 {
			inString = !inString
			continue
		}
		if inString {
			continue
		}
		if open != "" {
			list, _, _ := strings.Cut(line, "#")
			names(open, list, openLine)
			if strings.Contains(list, ")") {
				open = ""
			}
			continue
		}
		if m := fromImport.FindStringSubmatch(line); m != nil {
			out = append(out, Import{Module: m[1], Line: n})
			names(m[1], m[2], n)
			if code, _, _ := strings.Cut(line, "#"); strings.Contains(code, "(") && !strings.Contains(code, ")") {
				open, openLine = m[1], n
			}
			continue
		}
		if m := plainImport.FindStringSubmatch(line); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				mod, _, _ := strings.Cut(strings.TrimSpace(part), " ")
				if mod != "" && isDotted(mod) {
					out = append(out, Import{Module: mod, Line: n})
				}
			}
		}
	}
	return out
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isDotted(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !isIdent(part) {
			return false
		}
	}
	return true
}
