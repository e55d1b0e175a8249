package showplan

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testenv"
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
	testenv.Golden(t, path, got, *update)
}
