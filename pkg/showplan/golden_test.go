package showplan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenPlans is the representative dozen: parallelism, spills (sort, hash,
// exchange), adaptive join, batch mode, DML, MERGE, cursors with StmtCond,
// key lookup, spools, warnings and the SQL Server 2005 plan.
var goldenPlans = []string{
	"performancestudio/excellent-parallel-spill.sqlplan",
	"html-query-plan/spilltotempdb.sqlplan",
	"html-query-plan/HashSpillDetails.sqlplan",
	"html-query-plan/adaptive_join.sqlplan",
	"html-query-plan/batch_mode.sqlplan",
	"performancestudio/multi_index_update_plan.sqlplan",
	"html-query-plan/table_merge.sqlplan",
	"html-query-plan/Cursors-Keyset_Cursor.sqlplan",
	"performancestudio/key_lookup_plan.sqlplan",
	"html-query-plan/issue1.sqlplan",
	"html-query-plan/window_spool.sqlplan",
	"performancestudio/missing-join-predicate.sqlplan",
	"performancestudio/eager_index_spool_plan.sqlplan",
}

func TestGolden(t *testing.T) {
	for _, rel := range goldenPlans {
		name := strings.TrimSuffix(strings.ReplaceAll(rel, "/", "__"), ".sqlplan")
		t.Run(name, func(t *testing.T) {
			plan := mustParse(t, rel)
			var js bytes.Buffer
			enc := json.NewEncoder(&js)
			enc.SetIndent("", "  ")
			if err := enc.Encode(NewDocument(plan)); err != nil {
				t.Fatal(err)
			}
			var tree bytes.Buffer
			if err := WriteTree(&tree, plan); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", "golden", name+".json"), js.Bytes())
			compareGolden(t, filepath.Join("testdata", "golden", name+".txt"), tree.Bytes())
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test -update after checking the change)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d", path, len(gl), len(wl))
	}
}
