package cuckoo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestLicense checks that the module carries its BSD 3-Clause license.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The cuckoo Authors",
		"Redistributions of source code must retain",
		"Redistributions in binary form must reproduce",
		"Neither the name of the copyright holder",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}

// TestReadmeInstallAndGoVersions checks that the README tells how to install
// the command and states the Go version each module's go.mod requires.
func TestReadmeInstallAndGoVersions(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "go install github.com/seed25b00da8/cuckoo/cmd/cuckoo@latest") {
		t.Error("README lacks the go install line for the cuckoo command")
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`)
	for _, tc := range []struct{ mod, want string }{
		{"go.mod", "library: Go %s or newer"},
		{"bench/go.mod", "needs Go %s"},
	} {
		data, err := os.ReadFile(tc.mod)
		if err != nil {
			t.Fatal(err)
		}
		m := goLine.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s has no go line", tc.mod)
		}
		want := strings.Replace(tc.want, "%s", string(m[1]), 1)
		if !strings.Contains(string(readme), want) {
			t.Errorf("README does not say %q (from %s)", want, tc.mod)
		}
	}
}

// TestEveryExportedIdentifierHasAnExample checks that every exported
// function, type and method of the package has a runnable example
// (ExampleName, ExampleType, ExampleType_Method) in some _test.go file.
// Constants and variables are covered by the examples that use them.
func TestEveryExportedIdentifierHasAnExample(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{}
	var want []string
	for _, pkg := range pkgs {
		for name, file := range pkg.Files {
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if strings.HasSuffix(name, "_test.go") {
						if strings.HasPrefix(d.Name.Name, "Example") {
							examples[d.Name.Name] = true
						}
						continue
					}
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						want = append(want, "Example"+d.Name.Name)
						continue
					}
					recv := d.Recv.List[0].Type
					if star, ok := recv.(*ast.StarExpr); ok {
						recv = star.X
					}
					if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
						want = append(want, "Example"+id.Name+"_"+d.Name.Name)
					}
				case *ast.GenDecl:
					if strings.HasSuffix(name, "_test.go") || d.Tok != token.TYPE {
						continue
					}
					for _, spec := range d.Specs {
						if ts := spec.(*ast.TypeSpec); ts.Name.IsExported() {
							want = append(want, "Example"+ts.Name.Name)
						}
					}
				}
			}
		}
	}
	if len(want) < 50 {
		t.Fatalf("found only %d exported identifiers; the parse went wrong", len(want))
	}
	sort.Strings(want)
	for _, w := range want {
		if !examples[w] {
			t.Errorf("no %s", w)
		}
	}
}
