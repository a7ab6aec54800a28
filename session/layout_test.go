package session_test

// The package's structs keep the house rule "a mutex sits right above the fields it guards"
// checkable: a struct holds one mutex at most, which says what it guards, so that the
// fields a lock guards are the ones of its struct. Session holds none of its own: its state
// is in groups, one struct per concern, each with its lock (session.go).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOneMutexPerStruct(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			var mutexes []string
			for _, field := range st.Fields.List {
				if !isMutex(field.Type) {
					continue
				}
				for _, id := range field.Names {
					mutexes = append(mutexes, id.Name)
				}
				if field.Doc == nil || !strings.Contains(field.Doc.Text(), "guards") {
					t.Errorf("%s: mutex %s does not say what it guards", fset.Position(field.Pos()), fieldName(field))
				}
			}
			checked += len(mutexes)
			if len(mutexes) > 1 {
				t.Errorf("%s: a struct holds %d mutexes (%s); give each the struct of the fields it guards", fset.Position(st.Pos()), len(mutexes), strings.Join(mutexes, ", "))
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "Session" {
				return true
			}
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				if isMutex(field.Type) {
					t.Errorf("%s: Session holds the mutex %s itself; put it in the group of the fields it guards", fset.Position(field.Pos()), fieldName(field))
				}
			}
			return false
		})
	}
	if checked == 0 {
		t.Fatal("no mutex found: the test reads no file of the package")
	}
}

// isMutex reports whether a field's type is sync.Mutex or sync.RWMutex.
func isMutex(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "sync" && (sel.Sel.Name == "Mutex" || sel.Sel.Name == "RWMutex")
}

func fieldName(f *ast.Field) string {
	if len(f.Names) == 0 {
		return "(embedded)"
	}
	return f.Names[0].Name
}
