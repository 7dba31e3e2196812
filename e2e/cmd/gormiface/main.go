// Command gormiface is the part of scripts/check-imports.sh that awk cannot do: it fails when
// an interface or a function type declared in a service outside internal/store names a gorm
// type (gorm.io/gorm), directly or through a type defined as one (type Tx = *gorm.DB, in any
// package of the tree).
// Usage: gormiface TREE, TREE being a workspace laid out like this repository. It prints
// file:line and the interface for each finding and exits 1 when there is one.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	root = "github.com/motionstudio/platform/"
	gorm = "gorm.io/gorm"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gormiface TREE")
		os.Exit(2)
	}
	findings, err := check(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gormiface:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println("check-imports:", f)
	}
	if len(findings) > 0 {
		os.Exit(1)
	}
}

// file is one parsed Go file: its directory relative to the tree, the tree directory of each
// package of the platform it imports by the name it uses there, and its name for gorm ("" when
// it does not import gorm).
type file struct {
	dir     string
	ast     *ast.File
	imports map[string]string
	gorm    string
}

// check parses every Go file under TREE/services and returns the findings, sorted.
func check(tree string) ([]string, error) {
	fset := token.NewFileSet()
	var files []*file
	err := filepath.WalkDir(filepath.Join(tree, "services"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(tree, filepath.Dir(path))
		if err != nil {
			return err
		}
		files = append(files, parse(filepath.ToSlash(rel), f))
		return nil
	})
	if err != nil {
		return nil, err
	}
	tainted := taint(files)
	var out []string
	for _, f := range files {
		if inStore(f.dir) {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			what := contract(n)
			if what == "" {
				return true
			}
			if spec, ok := n.(*ast.TypeSpec); ok {
				n = spec.Type
			}
			if ref := mentions(f, n, tainted); ref != nil {
				out = append(out, fmt.Sprintf("%s: %s names %s: only internal/store may name gorm types (give the store a method that does the whole step)",
					fset.Position(ref.Pos()), what, ref))
			}
			return false
		})
	}
	sort.Strings(out)
	return out, nil
}

func parse(dir string, f *ast.File) *file {
	out := &file{dir: dir, ast: f, imports: map[string]string{}}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if p == gorm {
			out.gorm = name
		}
		if strings.HasPrefix(p, root) {
			out.imports[name] = strings.TrimPrefix(p, root)
		}
	}
	return out
}

// inStore reports whether dir is a service's internal/store or one of its sub-packages.
func inStore(dir string) bool {
	parts := strings.Split(dir, "/")
	return len(parts) >= 4 && parts[0] == "services" && parts[2] == "internal" && parts[3] == "store"
}

// taint returns "dir.Name" of every type, in any package, that is defined as or aliases a gorm
// type (other than a struct, whose gorm fields stay inside it), to a fixed point.
func taint(files []*file) map[string]bool {
	tainted := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			for _, decl := range f.ast.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.TYPE {
					continue
				}
				for _, s := range gen.Specs {
					spec := s.(*ast.TypeSpec)
					key := f.dir + "." + spec.Name.Name
					if _, isStruct := spec.Type.(*ast.StructType); isStruct || tainted[key] {
						continue
					}
					if mentions(f, spec.Type, tainted) != nil {
						tainted[key] = true
						changed = true
					}
				}
			}
		}
	}
	return tainted
}

// reference is where a declaration names a gorm type, directly or through a type defined as one.
type reference struct {
	ast.Expr
	name string
}

func (r *reference) String() string { return r.name }

// mentions returns the first expression inside n that names a gorm type or a tainted one.
func mentions(f *file, n ast.Node, tainted map[string]bool) *reference {
	var found *reference
	ast.Inspect(n, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch e := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				name := x.Name + "." + e.Sel.Name
				if f.gorm != "" && x.Name == f.gorm {
					found = &reference{e, name}
				} else if tainted[f.imports[x.Name]+"."+e.Sel.Name] {
					found = &reference{e, name + ", defined as a gorm type"}
				}
			}
			return false
		case *ast.Ident:
			if tainted[f.dir+"."+e.Name] {
				found = &reference{e, e.Name + ", defined as a gorm type"}
			}
		}
		return true
	})
	return found
}

// contract names n when it is an interface, or a declared interface or function type: the
// shapes through which one package asks another for work.
func contract(n ast.Node) string {
	switch n := n.(type) {
	case *ast.InterfaceType:
		return "an interface literal"
	case *ast.TypeSpec:
		switch n.Type.(type) {
		case *ast.InterfaceType:
			return "interface " + n.Name.Name
		case *ast.FuncType:
			return "function type " + n.Name.Name
		}
	}
	return ""
}
