package standin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExecute runs arbitrary batches through the engine: it must answer
// with rows or a SQL Server error, never panic.
func FuzzExecute(f *testing.F) {
	files, _ := filepath.Glob("testdata/seeds/*.sql")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		for _, stmt := range strings.Split(string(b), ";") {
			f.Add(stmt)
		}
	}
	srv := New(Options{})
	c := session(f, srv, 51)
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Contains(strings.ToUpper(src), "WAITFOR") {
			return
		}
		_, _ = run(c, src)
	})
}
