package findings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// studioPlan parses a real plan of pkg/showplan's test set, optionally
// edited first (an attribute flipped, a predicate replaced).
func studioPlan(t *testing.T, dir, name string, edit func(string) string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		data = []byte(edit(string(data)))
	}
	p, err := showplan.ParseBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvents()
	ev.batch(0, 5000)
	tr, st := build(t, p, nil, ev)
	return Input{Trace: tr, Plan: st, Server: ServerOf("", p)}
}

const studio = "../showplan/testdata/plans/performancestudio"

const genericIndex = "An index keyed on the predicate's columns"

func TestAdviceNonSargable(t *testing.T) {
	// CONVERT_IMPLICIT(nvarchar(40), [ub].[DisplayName]) = @d: no index on
	// DisplayName can be sought.
	f := one(t, analyze(t, studioPlan(t, studio, "convert_implicit_plan.sqlplan", nil)), "residual-predicate")
	if !strings.Contains(f.Hint, "non-sargable") || !strings.Contains(f.Hint, "CONVERT_IMPLICIT(nvarchar(40)") || strings.Contains(f.Hint, genericIndex) {
		t.Errorf("convert: %q", f.Hint)
	}
	f = one(t, analyze(t, studioPlan(t, studio, "isnull_plan.sqlplan", nil)), "residual-predicate")
	if !strings.Contains(f.Hint, "non-sargable") || !strings.Contains(f.Hint, "isnull(") {
		t.Errorf("isnull: %q", f.Hint)
	}
	// Look-alike: Reputation > 100000 is sargable; the generic advice stands.
	f = one(t, analyze(t, studioPlan(t, studio, "eager_index_spool_plan.sqlplan", nil)), "residual-predicate")
	if strings.Contains(f.Hint, "non-sargable") || strings.Contains(f.Hint, "arithmetic") {
		t.Errorf("sargable predicate called non-sargable: %q", f.Hint)
	}
}

func TestAdviceArithmeticAndForced(t *testing.T) {
	arith := func(s string) string {
		return strings.Replace(s, "[StackOverflow2013].[dbo].[Posts].[PostTypeId] as [p].[PostTypeId]=(2)",
			"[StackOverflow2013].[dbo].[Posts].[Score] as [p].[Score]*[StackOverflow2013].[dbo].[Posts].[ViewCount] as [p].[ViewCount]&gt;(8500)", 1)
	}
	in := studioPlan(t, "testdata/plans", "parallel-skew.sqlplan", arith)
	if !strings.Contains(in.Plan.OperatorByID(firstScan(t, in)).Predicate, "*") {
		t.Fatal("edit did not apply")
	}
	f := one(t, analyze(t, in), "residual-predicate")
	if !strings.Contains(f.Hint, "computed column") || strings.Contains(f.Hint, genericIndex) || f.Reference != refComputedColumns {
		t.Errorf("arithmetic: %q", f.Hint)
	}
	forced := func(s string) string { return strings.Replace(s, `ForcedIndex="false"`, `ForcedIndex="true"`, -1) }
	in = studioPlan(t, "testdata/plans", "parallel-skew.sqlplan", forced)
	f = one(t, analyze(t, in), "residual-predicate")
	if !strings.Contains(f.Hint, "forces this index") || strings.Contains(f.Hint, genericIndex) {
		t.Errorf("forced: %q", f.Hint)
	}
}

func firstScan(t *testing.T, in Input) int {
	for _, o := range in.Plan.Operators {
		if o.Predicate != "" && strings.Contains(o.PhysicalOp, "Scan") {
			return o.NodeID
		}
	}
	t.Fatal("no scan with a predicate")
	return -1
}

// The plan's own MissingIndexGroup (impact 96.3%) is the advice for the
// Posts scan; a scan that returns most of what it reads gets no index.
func TestAdviceMissingIndexAndSelectivity(t *testing.T) {
	f := one(t, analyze(t, planOnly(t, "stack_overflow-inequality_index.sqlplan")), "reads-concentrated")
	if !strings.Contains(f.Hint, "96.3%") || !strings.Contains(f.Hint, "PostTypeId, Score") || f.Reference != refMissingIndexes {
		t.Errorf("missing index: %q", f.Hint)
	}
	// excellent-parallel-spill: PostTypeId = 1 keeps 35% of the rows: an
	// index may still pay (a covering one), and the selectivity is said.
	in := studioPlan(t, "testdata/plans", "excellent-parallel-spill.sqlplan", nil)
	f = one(t, analyze(t, in), "reads-concentrated")
	if !strings.Contains(f.Hint, "35%") {
		t.Errorf("selectivity not said: %q", f.Hint)
	}
	// 99.5% of the rows read returned: no index reads fewer.
	st := &showplan.Statement{Operators: []*showplan.Operator{{NodeID: 1, PhysicalOp: "Clustered Index Scan", Predicate: "[o].[Qty]>(0)"}}}
	a := &analysis{cfg: DefaultConfig(), p: &Profile{}, in: Input{Plan: st}}
	o := &OperatorStats{NodeID: 1, Name: "Clustered Index Scan", PhysicalOp: "Clustered Index Scan",
		Counters: &Counters{Rows: 995, RowsRead: 1000, HasRowsRead: true}}
	if h, _ := a.indexAdvice(o); strings.Contains(h, genericIndex) || !strings.Contains(h, "most rows qualify") {
		t.Errorf("99.5%% scan: %q", h)
	}
	o.Counters.Rows = 5
	if h, _ := a.indexAdvice(o); !strings.Contains(h, genericIndex) {
		t.Errorf("0.5%% scan: %q", h)
	}
}
