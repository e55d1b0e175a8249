package findings

import (
	"strings"
	"testing"
)

// spilltotempdb (SQL Server 14.0, CE 140): DesiredMemory 2,348,360 KB,
// granted 413,792 KB = MaxQueryMemory. The grant hit the per-query cap; it is
// no bad estimate, and MIN_GRANT_PERCENT cannot raise it past the cap.
func TestGrantCappedAtMaxQueryMemory(t *testing.T) {
	r := analyze(t, planOnly(t, "spilltotempdb.sqlplan"))
	f := one(t, r, "grant-too-small")
	if !strings.Contains(f.Title, "per-query maximum") || numberOf(t, f, "maxQueryKB") != 413792 || numberOf(t, f, "desiredKB") != 2348360 {
		t.Errorf("title %q numbers %+v", f.Title, f.Numbers)
	}
	if strings.Contains(f.Hint, "raise the grant") || !strings.Contains(f.Hint, "REQUEST_MAX_MEMORY_GRANT_PERCENT") {
		t.Errorf("capped grant hint %q", f.Hint)
	}
	s := one(t, r, "spill")
	if strings.Contains(s.Hint, "MIN_GRANT_PERCENT = n) raises") || strings.Contains(s.Hint, "update statistics") {
		t.Errorf("capped spill hint still says raise/update statistics: %q", s.Hint)
	}
	// Look-alike: HashSpillDetails asked for less than it desired (no
	// MaxQueryMemory in the plan): not a capped grant.
	h := analyze(t, planOnly(t, "HashSpillDetails.sqlplan"))
	for _, g := range byRule(h, "grant-too-small") {
		if strings.Contains(g.Title, "per-query maximum") {
			t.Errorf("uncapped grant called capped: %q", g.Title)
		}
	}
}

// The headline names tempdb pages written and read; the sort's hint shows
// estimated vs actual rows and the row width instead of "update statistics".
func TestSpillHeadlineAndCause(t *testing.T) {
	f := one(t, analyze(t, planOnly(t, "spilltotempdb.sqlplan")), "spill")
	if !strings.Contains(f.Title, "12 pages written, 175,292 read") {
		t.Errorf("title %q", f.Title)
	}
	if !strings.Contains(f.Detail+f.Hint, "220 bytes") || !strings.Contains(f.Detail+f.Hint, "7,368,560") {
		t.Errorf("spill cause lacks rows and width: detail %q hint %q", f.Detail, f.Hint)
	}
	if numberOf(t, f, "estimatedRows") != 7368560 || numberOf(t, f, "rowWidthBytes") != 220 {
		t.Errorf("numbers %+v", f.Numbers)
	}
}

// Memory grant feedback is promised only where it exists: row mode needs
// SQL Server 2019 at compatibility level 150.
func TestGrantFeedbackVersionAware(t *testing.T) {
	in := planOnly(t, "HashSpillDetails.sqlplan") // 13.0, CE 130, row mode
	for _, f := range byRule(analyze(t, in), "spill") {
		if strings.Contains(f.Hint, "feedback adjusts") || !strings.Contains(f.Hint, "2019") {
			t.Errorf("SQL 2016 spill promises feedback: %q", f.Hint)
		}
	}
	in.Server = Server{Major: 15, CompatLevel: 150}
	for _, f := range byRule(analyze(t, in), "spill") {
		if !strings.Contains(f.Hint, "row-mode memory grant feedback") {
			t.Errorf("SQL 2019 / 150 spill does not mention feedback: %q", f.Hint)
		}
	}
	in.Server = Server{Major: 15, CompatLevel: 140}
	for _, f := range byRule(analyze(t, in), "spill") {
		if strings.Contains(f.Hint, "feedback adjusts") {
			t.Errorf("compat 140 row-mode spill promises feedback: %q", f.Hint)
		}
	}
}

// A grant the statement asked for with its own OPTION (MIN_GRANT_PERCENT or
// MAX_GRANT_PERCENT) is not flagged.
func TestOwnGrantHintNotFlagged(t *testing.T) {
	in := planOnly(t, "stack_overflow-inequality_index.sqlplan")
	one(t, analyze(t, in), "grant-excess") // 1,395,216 KB granted, 19,736 used
	st := *in.Plan
	st.Text += " OPTION (RECOMPILE, MIN_GRANT_PERCENT = 10)"
	in.Plan = &st
	none(t, analyze(t, in), "grant-excess")
	none(t, analyze(t, in), "grant-too-small")
	// Look-alike: the hint name in a comment-free string that is not an
	// OPTION clause is not the statement's hint.
	st.Text = strings.Replace(st.Text, "OPTION (RECOMPILE, MIN_GRANT_PERCENT = 10)", "-- MIN_GRANT_PERCENT", 1)
	one(t, analyze(t, in), "grant-excess")
}

// Several spills: grant-too-small is said once for the statement.
func TestGrantTooSmallOncePerStatement(t *testing.T) {
	plan := loadPlan(t, "spilltotempdb.sqlplan")
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	for i := int64(0); i < 4; i++ {
		ev.spill(1000+i*100, "sort_warning", 2, "sort_warning_type", "Single pass", 1024, 1024)
	}
	ev.grant(9500, 2048, 2048)
	ev.at(10000, "sqlserver", "sql_batch_completed", fu("duration", 10000))
	tr, _ := build(t, plan, nil, ev)
	r := analyze(t, Input{Trace: tr})
	one(t, r, "grant-too-small")
	if got := len(byRule(r, "spill")); got != 1 {
		t.Errorf("%d spill findings for one operator, want 1: %s", got, titles(r))
	}
	if strings.Contains(one(t, r, "spill").Hint, "MIN_GRANT_PERCENT") {
		t.Errorf("spill hint repeats the grant advice grant-too-small gives: %s", one(t, r, "spill").Hint)
	}
}

// An exchange spill's Begin and End events are one spill, as the exporter
// counts them.
func TestExchangeSpillBeginEndOnce(t *testing.T) {
	plan := loadPlan(t, "spilltotempdb.sqlplan")
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	ev.spill(1000, "exchange_spill", 0, "opcode", "Begin", 0, 0)
	ev.spill(2000, "exchange_spill", 0, "opcode", "End", 0, 0)
	ev.spill(3000, "exchange_spill", 0, "opcode", "Begin", 0, 0)
	ev.spill(4000, "exchange_spill", 0, "opcode", "End", 0, 0)
	ev.at(10000, "sqlserver", "sql_batch_completed", fu("duration", 10000))
	tr, _ := build(t, plan, nil, ev)
	f := one(t, analyze(t, Input{Trace: tr}), "exchange-spill")
	if numberOf(t, f, "spillEvents") != 2 || !strings.Contains(f.Title, "2 exchange spills") {
		t.Errorf("title %q numbers %+v", f.Title, f.Numbers)
	}
}

// RESOURCE_SEMAPHORE_QUERY_COMPILE is the compile gateway, not a memory
// grant wait.
func TestCompileGatewayIsNotGrantWait(t *testing.T) {
	for _, c := range []struct {
		wait string
		want int
	}{{"RESOURCE_SEMAPHORE_QUERY_COMPILE", 0}, {"RESOURCE_SEMAPHORE", 1}} {
		ev := newEvents()
		ev.batch(0, 1_000_000)
		ev.wait(1000, 900_000, c.wait)
		tr, _ := build(t, nil, nil, ev)
		if got := len(byRule(analyze(t, Input{Trace: tr}), "grant-wait")); got != c.want {
			t.Errorf("%s: %d grant-wait findings, want %d", c.wait, got, c.want)
		}
	}
}

// A sort_warning whose node id names an operator that takes no memory (in
// a two-statement batch, node 0 of the first plan for the second
// statement's sort) is not that operator's spill.
func TestSpillOnOperatorWithoutGrant(t *testing.T) {
	plan := loadPlan(t, "key_lookup_plan.sqlplan") // node 0: Nested Loops
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	ev.spill(3000, "sort_warning", 0, "sort_warning_type", "Single pass", 1024, 1024)
	ev.at(10000, "sqlserver", "sql_batch_completed", fu("duration", 10000))
	tr, st := build(t, plan, nil, ev)
	f := one(t, analyze(t, Input{Trace: tr, Plan: st}), "spill")
	if len(f.Operators) != 0 || strings.Contains(f.Title, "Nested Loops") || f.Confidence == ConfidenceHigh {
		t.Errorf("spill pinned on a non-memory operator: %q ops %+v confidence %s", f.Title, f.Operators, f.Confidence)
	}
}

// With several statements in the batch and no statement identity on the
// events, an operator-bound finding says so and is not high confidence.
func TestSeveralStatementsLowerConfidence(t *testing.T) {
	plan := loadPlan(t, "spilltotempdb.sqlplan")
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	ev.spill(3000, "sort_warning", 2, "sort_warning_type", "Single pass", 1024, 1024)
	ev.at(10000, "sqlserver", "sql_batch_completed", fu("duration", 10000))
	tr, st := build(t, plan, nil, ev)
	in := Input{Trace: tr, Plan: st}
	if f := one(t, analyze(t, in), "spill"); f.Confidence != ConfidenceHigh {
		t.Errorf("one statement: confidence %s %v", f.Confidence, f.ConfidenceReasons)
	}
	in.Statements = 2
	f := one(t, analyze(t, in), "spill")
	if f.Confidence == ConfidenceHigh || !strings.Contains(strings.Join(f.ConfidenceReasons, " "), "2 statements") {
		t.Errorf("two statements: confidence %s %v", f.Confidence, f.ConfidenceReasons)
	}
}

// RCSI helps readers, not writers: an LCK_M_X wait gets no
// READ_COMMITTED_SNAPSHOT advice, an LCK_M_S wait does.
func TestRCSIOnlyForReaders(t *testing.T) {
	f := one(t, analyze(t, Input{Trace: blockTrace(t, 1_200_000)}), "blocking")
	if strings.Contains(f.Hint, "READ_COMMITTED_SNAPSHOT") {
		t.Errorf("writer wait advised RCSI: %q", f.Hint)
	}
	ev := newEvents()
	ev.batch(0, 2_000_000)
	ev.wait(1000, 1_201_000, "LCK_M_S")
	ev.lock(1_201_000, 1_201_050, "S", 72057594043170816, "(8194443284a0)")
	tr, _ := build(t, nil, nil, ev)
	g := one(t, analyze(t, Input{Trace: tr}), "blocking")
	if !strings.Contains(g.Hint, "READ_COMMITTED_SNAPSHOT") {
		t.Errorf("reader wait without RCSI advice: %q", g.Hint)
	}
}
