package findings

import (
	"strings"
	"testing"
)

// stack_overflow-inequality_index: @d compiled '2017-06-02', run with
// '2009-01-01' — textbook parameter sniffing, silently missed before.
func TestParameterSensitivity(t *testing.T) {
	f := one(t, analyze(t, planOnly(t, "stack_overflow-inequality_index.sqlplan")), "parameter-sensitivity")
	if !strings.Contains(f.Title, "@d = '2017-06-02 00:00:00.000' (ran with '2009-01-01 00:00:00.000')") {
		t.Errorf("title %q", f.Title)
	}
	// Look-alike: compiled and runtime values equal.
	in := planOnly(t, "stack_overflow-inequality_index.sqlplan")
	st := *in.Plan
	st.Parameters = append(st.Parameters[:0:0], st.Parameters...)
	st.Parameters[0].Runtime = st.Parameters[0].Compiled
	in.Plan = &st
	none(t, analyze(t, in), "parameter-sensitivity")
}

func TestImplicitConversion(t *testing.T) {
	f := one(t, analyze(t, studioPlan(t, studio, "convert_implicit_plan.sqlplan", nil)), "implicit-conversion")
	if !strings.Contains(f.Title, "CONVERT_IMPLICIT") {
		t.Errorf("title %q", f.Title)
	}
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "implicit-conversion")
}

func TestNoJoinPredicate(t *testing.T) {
	f := one(t, analyze(t, studioPlan(t, studio, "missing-join-predicate.sqlplan", nil)), "no-join-predicate")
	if len(f.Operators) == 0 || !strings.Contains(f.Operators[0].Name, "Nested Loops") {
		t.Errorf("operators %+v", f.Operators)
	}
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "no-join-predicate")
}

func TestCompileTimeout(t *testing.T) {
	one(t, analyze(t, studioPlan(t, "../showplan/testdata/plans/html-query-plan", "adaptive_join.sqlplan", nil)), "compile-timeout")
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "compile-timeout")
}

func TestNonParallelAndNoStatistics(t *testing.T) {
	f := one(t, analyze(t, studioPlan(t, studio, "udf_plan.sqlplan", nil)), "non-parallel")
	if !strings.HasPrefix(f.Title, "Serial plan: ") {
		t.Errorf("title %q", f.Title)
	}
	none(t, analyze(t, planOnly(t, "parallel-skew.sqlplan")), "non-parallel")
	g := one(t, analyze(t, studioPlan(t, "../showplan/testdata/plans/html-query-plan", "columns_with_no_statistics.sqlplan", nil)), "no-statistics")
	if numberOf(t, g, "columns") == 0 {
		t.Errorf("no columns named: %q", g.Title)
	}
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "no-statistics")
}
