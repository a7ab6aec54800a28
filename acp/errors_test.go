package acp

// ACP's errors are mapped in one place (issue 33 item 3): no file but errors.go names an error
// code, builds an rpcError, or writes the text a kind of failure starts with ("Invalid
// params: ..."); handlers wrap the kinds instead. Read from the package's own source.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestErrorsMappedInOnePlace(t *testing.T) {
	kinds := []*codedError{errParse, errInvalidRequest, errMethodNotFound, errInvalidParams, errInternal, errNotFound, errSessionUnreadable, errFolderMissing}
	codes := map[string]bool{"codeParseError": true, "codeInvalidRequest": true, "codeMethodNotFound": true,
		"codeInvalidParams": true, "codeInternalError": true, "codeNotFound": true, "codeRequestFailed": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if name == "errors.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if codes[n.Name] || n.Name == "errorf" {
					t.Errorf("%s: %s outside errors.go", fset.Position(n.Pos()), n.Name)
				}
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "rpcError" {
					t.Errorf("%s: an rpcError built outside errors.go", fset.Position(n.Pos()))
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					break
				}
				for _, k := range kinds {
					if strings.HasPrefix(s, k.text) {
						t.Errorf("%s: the text of %q written out (wrap the kind with %%w instead)", fset.Position(n.Pos()), k.text)
					}
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("only %d files checked: the test does not see the package", checked)
	}
}
