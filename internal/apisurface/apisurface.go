// Package apisurface reads a package's exported API from its source, as go doc lists it,
// for the tests that keep a public package's API to what its users call.
package apisurface

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Ident is one exported identifier: a constant, variable, function or type ("Serve"), or a
// method or constructor of an exported type ("Emitter.Text").
type Ident struct {
	Name string
	// Refs are the import paths its declaration names (in a signature, a field, a value).
	Refs []string
}

// Read lists the exported identifiers of the package in dir (its non-test files), sorted
// by name.
func Read(dir string) ([]Ident, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("apisurface: no Go files in %s", dir)
	}
	p, err := doc.NewFromFiles(fset, files, "apisurface.test/"+filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	r := reader{fset: fset, files: files}
	var out []Ident
	values := func(prefix string, vs []*doc.Value) {
		for _, v := range vs {
			refs := r.refs(v.Decl)
			for _, n := range v.Names {
				if ast.IsExported(n) {
					out = append(out, Ident{Name: prefix + n, Refs: refs})
				}
			}
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			out = append(out, Ident{Name: prefix + f.Name, Refs: r.refs(f.Decl)})
		}
	}
	values("", p.Consts)
	values("", p.Vars)
	funcs("", p.Funcs)
	for _, t := range p.Types {
		out = append(out, Ident{Name: t.Name, Refs: r.refs(t.Decl)})
		values("", t.Consts)
		values("", t.Vars)
		funcs(t.Name+".", t.Funcs)
		funcs(t.Name+".", t.Methods)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type reader struct {
	fset  *token.FileSet
	files []*ast.File
}

// refs lists the import paths that the selectors in n name.
func (r reader) refs(n ast.Node) []string {
	imports := r.importsOf(n.Pos())
	seen := map[string]bool{}
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := imports[id.Name]; ok && !seen[path] {
					seen[path] = true
					out = append(out, path)
				}
			}
		}
		return true
	})
	sort.Strings(out)
	return out
}

// importsOf maps the local names of the imports of the file holding pos to their paths.
func (r reader) importsOf(pos token.Pos) map[string]string {
	m := map[string]string{}
	for _, f := range r.files {
		if f.FileStart > pos || pos > f.FileEnd {
			continue
		}
		for _, s := range f.Imports {
			path, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				continue
			}
			name := packageName(path)
			if s.Name != nil {
				name = s.Name.Name
			}
			m[name] = path
		}
	}
	return m
}

// packageName guesses the name of the package at path, without loading it, by the usual
// conventions: the last element, without a major version element, a "go-" prefix or a
// ".go" suffix ("github.com/hashicorp/go-plugin" is plugin).
func packageName(path string) string {
	elems := strings.Split(path, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "go-"), ".go")
	return strings.ReplaceAll(name, "-", "_")
}
