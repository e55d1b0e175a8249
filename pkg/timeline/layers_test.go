package timeline

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoIOInTheModel: pkg/timeline is the pure model. Reading files or
// streams (a catalog's JSON included) belongs to the parser layer
// (pkg/catalogfile) or the commands, so no non-test file here may import a
// package that reads or writes.
func TestNoIOInTheModel(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{"io": true, "os": true, "bufio": true, "net": true, "net/http": true, "log": true, "log/slog": true, "io/fs": true}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[path] {
				t.Errorf("%s imports %s: the model package must not do I/O", name, path)
			}
		}
	}
}
