package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// planOnly rebuilds a trace of the named real plan with no events but the
// batch: every figure comes from the plan's runtime counters.
func planOnly(t *testing.T, name string) Input {
	t.Helper()
	ev := newEvents()
	ev.batch(0, 5000)
	plan := loadPlan(t, name)
	tr, st := build(t, plan, nil, ev)
	return Input{Trace: tr, Plan: st, Server: ServerOf("", plan)}
}

func TestReadsConcentratedOnKeyLookup(t *testing.T) {
	// 319 pages (2.5 MB) is below the production floor (minReads 1,000).
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "reads-concentrated")
	r := analyzeSmall(t, planOnly(t, "key_lookup_plan.sqlplan"))
	f := one(t, r, "reads-concentrated")
	// The plan: Index Seek 3 logical reads, Key Lookup 319 (117 executions).
	if f.Title != "Key Lookup did >99% of the logical reads: 319 of 322 pages" {
		t.Errorf("title %q", f.Title)
	}
	if numberOf(t, f, "reads") != 319 || numberOf(t, f, "totalReads") != 322 || numberOf(t, f, "executions") != 117 {
		t.Errorf("numbers %+v", f.Numbers)
	}
	if len(f.Operators) != 1 || f.Operators[0].NodeID != 4 || f.Operators[0].Name != "Key Lookup" || f.Operators[0].Object != "dbo.Users.PK_Users_Id" {
		t.Errorf("operators %+v", f.Operators)
	}
	// Info, not a warning: 319 pages is far below readsWarning (10,000).
	if !strings.Contains(f.Hint, "INCLUDE") || f.Reference != refIncludedColumns || f.Severity != SeverityInfo || f.Confidence != ConfidenceHigh {
		t.Errorf("hint %q ref %q severity %s confidence %s", f.Hint, f.Reference, f.Severity, f.Confidence)
	}
	// Its control: a single scan does all of its statement's reads, which
	// is no concentration.
	none(t, analyzeSmall(t, planOnly(t, "clustered_index_scan.sqlplan")), "reads-concentrated")
	// The threshold is a threshold: 319 pages is below minReads 400.
	cfg := smallConfig()
	if err := cfg.Set("minReads", "400"); err != nil {
		t.Fatal(err)
	}
	r2, err := Analyze(planOnly(t, "key_lookup_plan.sqlplan"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	none(t, r2, "reads-concentrated")
}

// Without the plan's counters the rule counts physical page reads, tied to
// operators by the catalog: 124 reads of the clustered index (the lookup),
// 22 of the nonclustered one (the seek); see lookupReads.
func TestReadsConcentratedFromEvents(t *testing.T) {
	tr := lookupReads(t, 0)
	r := analyzeSmall(t, Input{Trace: tr}) // no plan: names and counts from the trace
	f := one(t, r, "reads-concentrated")
	// Issue 26: the lookup is named as SSMS names it (the trace carries
	// the name), and the kind of reads is said.
	if f.Title != "Key Lookup did 85% of the page reads in the trace: 124 of 146 pages" {
		t.Errorf("title %q", f.Title)
	}
	if f.EvidenceTotal != 124 || len(f.Evidence) != 124 || f.Evidence[0].Lane != LaneRead || f.Evidence[0].ID != "read/22" {
		t.Errorf("evidence %d %+v", f.EvidenceTotal, f.Evidence[:1])
	}
	for _, e := range f.Evidence {
		if tr.Lanes.Read[e.Index].NodeID != 4 || e.NodeID == nil || *e.NodeID != 4 {
			t.Fatalf("evidence %+v is not the lookup's read", e)
		}
	}
	if f.Start != tr.Lanes.Read[22].T || f.End != tr.Lanes.Read[145].T {
		t.Errorf("span %d–%d", f.Start, f.End)
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "no actual plan") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestResidualPredicate(t *testing.T) {
	r := analyze(t, planOnly(t, "parallel-skew.sqlplan"))
	f := one(t, r, "residual-predicate")
	// Posts scan: 17,142,169 rows read (four threads) for 47,575 returned.
	if f.Title != "Clustered Index Scan (dbo.Posts.PK_Posts_Id) read 17,142,169 rows to return 47,575" {
		t.Errorf("title %q", f.Title)
	}
	if f.Operators[0].NodeID != 3 || !strings.Contains(f.Detail, "[p].[PostTypeId]=(2)") {
		t.Errorf("operator %+v detail %q", f.Operators, f.Detail)
	}
	// Control: the key lookup's residual predicate read 117 rows for 1,
	// far below minRowsRead.
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "residual-predicate")
}

func TestSpillFromPlan(t *testing.T) {
	r := analyze(t, planOnly(t, "spilltotempdb.sqlplan"))
	f := one(t, r, "spill")
	// Sort node 2: SpillLevel 2, SortSpillDetails WritesToTempDb 12; grant
	// 413,792 KB, 412,160 used.
	if f.Title != "Sort spilled to tempdb (multiple passes): 12 pages written, 175,292 read; the grant was 404.1 MB, >99% used" {
		t.Errorf("title %q", f.Title)
	}
	if f.Severity != SeverityCritical || numberOf(t, f, "tempdbPagesRead") != 175292 || numberOf(t, f, "operatorGrantedKB") != 413696 {
		t.Errorf("severity %s numbers %+v", f.Severity, f.Numbers)
	}
	if f.Reference != refSortWarnings || f.Operators[0].NodeID != 2 {
		t.Errorf("ref %s ops %+v", f.Reference, f.Operators)
	}
	h := analyze(t, planOnly(t, "HashSpillDetails.sqlplan"))
	hs := byRule(h, "spill")
	if len(hs) != 2 || hs[0].Operators[0].NodeID != 2 || hs[1].Operators[0].NodeID != 6 {
		t.Fatalf("hash spills: %s", titles(h))
	}
	if numberOf(t, hs[0], "tempdbPagesWritten") != 10040 || numberOf(t, hs[1], "tempdbPagesWritten") != 19320 || hs[0].Reference != refHashWarning {
		t.Errorf("hash spill numbers %+v %+v", hs[0].Numbers, hs[1].Numbers)
	}
	if !strings.HasPrefix(hs[0].Title, "Hash Match (Right Outer Join) spilled to tempdb (spill level 1): 10,040 pages written") || hs[0].Severity != SeverityWarning {
		t.Errorf("hash title %q %s", hs[0].Title, hs[0].Severity)
	}
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "spill")
}

// A sort_warning event alone (no plan warnings to read) with tempdb page
// writes during the sort.
func TestSpillFromEvents(t *testing.T) {
	plan := loadPlan(t, "spilltotempdb.sqlplan")
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	ev.profile(9000, 2, 1, 8000)
	for i := int64(0); i < 5; i++ {
		ev.write(2000+i*100, tempdbID, 1, 800+uint64(i))
	}
	ev.spill(3000, "sort_warning", 2, "sort_warning_type", "Multiple pass", 1024, 1024)
	ev.grant(9500, 2048, 2048)
	ev.at(10000, "sqlserver", "sql_batch_completed", fu("duration", 10000))
	tr, _ := build(t, plan, nil, ev)
	r := analyze(t, Input{Trace: tr})
	f := one(t, r, "spill")
	if f.Title != "Sort spilled to tempdb (multiple pass): 5 pages written; the grant was 2,048 KB, 100% used" || f.Severity != SeverityCritical {
		t.Errorf("title %q severity %s", f.Title, f.Severity)
	}
	if f.EvidenceTotal != 6 || numberOf(t, f, "operatorGrantedKB") != 1024 {
		t.Errorf("evidence %d numbers %+v", f.EvidenceTotal, f.Numbers)
	}
	g := one(t, r, "grant-too-small")
	if g.Title != "Memory grant too small: 100% of its 2,048 KB used, and 1 spill to tempdb" {
		t.Errorf("grant title %q", g.Title)
	}
}

func TestExchangeSpill(t *testing.T) {
	r := analyze(t, planOnly(t, "excellent-parallel-spill.sqlplan"))
	spills := byRule(r, "exchange-spill")
	want := map[int]float64{0: 4, 2: 5786565, 4: 8890}
	if len(spills) != 3 {
		t.Fatalf("exchange spills: %s", titles(r))
	}
	for _, f := range spills {
		n := f.Operators[0].NodeID
		if numberOf(t, f, "tempdbPagesWritten") != want[n] || f.Reference != refExchangeSpill {
			t.Errorf("node %d: %+v", n, f.Numbers)
		}
	}
	if spills[1].Title != "Parallelism (Repartition Streams) spilled its buffers to tempdb, 5,786,565 pages written" {
		t.Errorf("title %q", spills[1].Title)
	}
	// The exchanges' SpillToTempDb elements are theirs, not sort or hash spills.
	none(t, r, "spill")
	// An exchange_spill event on the Gather Streams of another plan.
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	ev.at(1000, "sqlserver", "exchange_spill", fm("opcode", 0, "Begin"), fu("query_operation_node_id", 0))
	ev.at(5000, "sqlserver", "sql_batch_completed", fu("duration", 5000))
	tr, st := build(t, loadPlan(t, "parallel-skew.sqlplan"), nil, ev)
	e := one(t, analyze(t, Input{Trace: tr, Plan: st}), "exchange-spill")
	if e.Title != "Parallelism (Gather Streams) spilled its buffers to tempdb: 1 exchange spill" || e.EvidenceTotal != 1 {
		t.Errorf("event exchange spill %q %d", e.Title, e.EvidenceTotal)
	}
	none(t, analyze(t, planOnly(t, "parallel-skew.sqlplan")), "exchange-spill")
}

func TestGrantExcess(t *testing.T) {
	in := planOnly(t, "stack_overflow-inequality_index.sqlplan")
	f := one(t, analyze(t, in), "grant-excess")
	if f.Title != "Memory grant far above use: 1.3 GB granted, 19.3 MB used (1%)" || !strings.Contains(f.Detail, "Excessive Grant") {
		t.Errorf("title %q detail %q", f.Title, f.Detail)
	}
	if numberOf(t, f, "grantedKB") != 1395216 || numberOf(t, f, "usedKB") != 19736 || f.Reference != refGrantFeedback {
		t.Errorf("numbers %+v", f.Numbers)
	}
	// From the grant usage event alone.
	grantTrace := func(granted, used uint64) Input {
		ev := newEvents()
		ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
		ev.grant(4000, granted, used)
		ev.at(5000, "sqlserver", "sql_batch_completed", fu("duration", 5000))
		tr, _ := build(t, loadPlan(t, "key_lookup_plan.sqlplan"), nil, ev)
		return Input{Trace: tr}
	}
	e := one(t, analyze(t, grantTrace(102400, 1024)), "grant-excess")
	if e.Title != "Memory grant far above use: 100.0 MB granted, 1,024 KB used (1%)" || e.EvidenceTotal != 1 || numberOf(t, e, "usedShare") != 1 {
		t.Errorf("event grant %q %d %+v", e.Title, e.EvidenceTotal, e.Numbers)
	}
	none(t, analyze(t, grantTrace(102400, 90000)), "grant-excess")
	none(t, analyze(t, grantTrace(4096, 8)), "grant-excess") // below minGrantKB
	// A small grant of a statement costing more than smallQueryCost comes
	// from the regular semaphore: reported.
	costly := planOnly(t, "key_lookup_plan.sqlplan")
	st := *costly.Plan
	st.MemoryGrant, st.SubtreeCost, st.OptimizerLevel = &showplan.MemoryGrant{GrantedKB: 1024, RequestedKB: 1024, MaxUsedKB: 16}, 4.5, "FULL"
	costly.Plan = &st
	if f := one(t, analyze(t, costly), "grant-excess"); f.Title != "Memory grant far above use: 1,024 KB granted, 16 KB used (2%)" {
		t.Errorf("costly small grant %q", f.Title)
	}
	st.OptimizerLevel = "TRIVIAL"
	none(t, analyze(t, costly), "grant-excess")
	// A grant that spilled is not an excess, however little it used.
	none(t, analyze(t, planOnly(t, "spilltotempdb.sqlplan")), "grant-excess")
}

func TestGrantCutShort(t *testing.T) {
	in := planOnly(t, "key_lookup_plan.sqlplan")
	none(t, analyze(t, in), "grant-too-small")
	st := *in.Plan
	st.MemoryGrant = &showplan.MemoryGrant{RequestedKB: 8192, GrantedKB: 2048, MaxUsedKB: 2000}
	in.Plan = &st
	f := one(t, analyze(t, in), "grant-too-small")
	if f.Title != "Memory grant cut short: got 2,048 KB of the 8,192 KB it asked for (25%)" || f.Reference != refGrantIssues {
		t.Errorf("title %q", f.Title)
	}
	none(t, analyze(t, planOnly(t, "stack_overflow-inequality_index.sqlplan")), "grant-too-small")
}

func TestGrantWait(t *testing.T) {
	// The plan's own warning: Wait WaitType="Memory Grant" WaitTime="58" (ms).
	f := one(t, analyze(t, planOnly(t, "stack_overflow-inequality_index.sqlplan")), "grant-wait")
	if f.Title != "Waited 58 ms for a memory grant (the plan's own warning)" || numberOf(t, f, "planGrantWaitUs") != 58000 {
		t.Errorf("title %q numbers %+v", f.Title, f.Numbers)
	}
	waited := func(us int64) *Report {
		ev := newEvents()
		ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
		ev.wait(100, 100+us, "RESOURCE_SEMAPHORE")
		ev.at(3_000_000, "sqlserver", "sql_batch_completed", fu("duration", 3_000_000))
		tr, _ := build(t, loadPlan(t, "key_lookup_plan.sqlplan"), nil, ev)
		return analyze(t, Input{Trace: tr})
	}
	g := one(t, waited(2_400_000), "grant-wait")
	if g.Title != "Waited 2.4 s for a memory grant (RESOURCE_SEMAPHORE, 1 wait)" || g.Severity != SeverityCritical || g.EvidenceTotal != 1 {
		t.Errorf("title %q severity %s", g.Title, g.Severity)
	}
	if numberOf(t, g, "waitUs") != 2_400_000 {
		t.Errorf("numbers %+v", g.Numbers)
	}
	if s := one(t, waited(200_000), "grant-wait"); s.Severity != SeverityWarning {
		t.Errorf("a 200 ms wait in 3 s is a warning, got %s", s.Severity)
	}
	none(t, waited(0), "grant-wait")
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "grant-wait")
}

// blockTrace: an X key lock on dbo.Users.PK_Users_Id acquired after a
// wait of waitUs (LCK_M_X), in a run of 1.3 s.
func blockTrace(t *testing.T, waitUs int64) *timeline.Trace {
	t.Helper()
	cat := timeline.NewCatalog()
	cat.AddHoBT(5, 72057594043170816, timeline.ObjectName{Schema: "dbo", Table: "Users", Index: "PK_Users_Id"})
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	ev.lock(500, 600, "S", 72057594043170816, "(0000aaaa0000)") // an uncontested lock
	if waitUs > 0 {
		ev.wait(1000, 1000+waitUs, "LCK_M_X")
	}
	ev.lock(1000+waitUs, 1000+waitUs+50, "X", 72057594043170816, "(8194443284a0)")
	ev.at(1_300_000, "sqlserver", "sql_batch_completed", fu("duration", 1_300_000))
	tr, _ := buildWith(t, loadPlan(t, "key_lookup_plan.sqlplan"), cat, &timeline.Options{Statement: -1,
		LockRows: map[timeline.LockKey]string{{DatabaseID: 5, HoBTID: 72057594043170816, Hash: "(8194443284a0)"}: "1:400:3 Id=22656"}}, ev)
	return tr
}

func TestBlocking(t *testing.T) {
	tr := blockTrace(t, 1_200_000)
	r := analyze(t, Input{Trace: tr})
	f := one(t, r, "blocking")
	if f.Title != "Blocked for 1.2 s waiting for an X lock on KEY dbo.Users.PK_Users_Id (row 1:400:3 Id=22656)" {
		t.Errorf("title %q", f.Title)
	}
	if f.Severity != SeverityCritical || numberOf(t, f, "waitUs") != 1_200_000 || f.EvidenceTotal != 2 {
		t.Errorf("severity %s numbers %+v evidence %d", f.Severity, f.Numbers, f.EvidenceTotal)
	}
	if !strings.Contains(f.Detail, "not in this trace") || f.Reference != refBlocking {
		t.Errorf("detail %q", f.Detail)
	}
	lanes := map[string]int{}
	for _, e := range f.Evidence {
		lanes[e.Lane]++
	}
	if lanes[LaneWait] != 1 || lanes[LaneLock] != 1 {
		t.Errorf("evidence %+v", f.Evidence)
	}
	// The holder, when the caller knows it.
	lk := tr.Lanes.Lock[len(tr.Lanes.Lock)-1]
	h := one(t, analyze(t, Input{Trace: tr, Run: Run{Holders: []LockHolder{{Resource: lk.Resource, SessionID: 61, Mode: "X", Statement: "UPDATE dbo.Users SET Age = 1"}}}}), "blocking")
	if !strings.Contains(h.Detail, "Held by session 61 in mode X, running: UPDATE dbo.Users SET Age = 1.") {
		t.Errorf("holder detail %q", h.Detail)
	}
	// Controls: locks without waits, and a wait below minLockWaitUs.
	none(t, analyze(t, Input{Trace: blockTrace(t, 0)}), "blocking")
	none(t, analyze(t, Input{Trace: blockTrace(t, 500)}), "blocking")
	if w := one(t, analyze(t, Input{Trace: blockTrace(t, 5000)}), "blocking"); w.Severity != SeverityWarning {
		t.Errorf("a 5 ms wait in 1.3 s is a warning, got %s", w.Severity)
	}
}

func TestLockMode(t *testing.T) {
	for in, want := range map[string]string{"LCK_M_X": "X", "LCK_M_IX": "IX", "LCK_M_SCH_M": "SCH-M", "LCK_M_S_LOW_PRIORITY": "S", "lck_m_u": "U"} {
		if got := lockMode(in); got != want {
			t.Errorf("lockMode(%s) = %s, want %s", in, got, want)
		}
	}
	if !startsWithVowelSound("X") || !startsWithVowelSound("IX") || startsWithVowelSound("U") {
		t.Error("articles")
	}
}

func TestColdCacheFromPlan(t *testing.T) {
	// spilltotempdb: 42 physical reads and 418,720 read-ahead pages for
	// 248,419 logical reads (read-ahead fetched more than the scan read).
	f := one(t, analyze(t, planOnly(t, "spilltotempdb.sqlplan")), "cold-cache")
	if f.Title != "Cold cache: 418,762 pages came from disk for 248,419 logical reads, 418,720 of them by read-ahead" {
		t.Errorf("title %q", f.Title)
	}
	if numberOf(t, f, "share") != 100 || f.Reference != refReadingPages {
		t.Errorf("numbers %+v", f.Numbers)
	}
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "cold-cache")
}

// coldTrace: 20 pages of the lookup's index read from disk, each after a
// PAGEIOLATCH_SH wait of 2 ms (read-ahead off), or in one 64-page
// read-ahead I/O (read-ahead on).
func coldTrace(t *testing.T, readAhead bool) *timeline.Trace {
	cat := timeline.NewCatalog()
	for p := uint64(0); p < 64; p++ {
		cat.AddPage(5, 1, 1000+p, timeline.ObjectName{Schema: "dbo", Table: "Users", Index: "PK_Users_Id"})
	}
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	if readAhead {
		ev.fileRead(100, 900, 1, 1000*8192, 64*8192)
		for p := int64(0); p < 64; p++ {
			ev.read(950+p, 1, 1000+uint64(p))
		}
	} else {
		for p := int64(0); p < 20; p++ {
			ev.wait(100+p*3000, 2100+p*3000, "PAGEIOLATCH_SH")
			ev.read(2100+p*3000, 1, 1000+uint64(p))
		}
	}
	ev.at(70_000, "sqlserver", "sql_batch_completed", fu("duration", 70_000))
	tr, _ := build(t, loadPlan(t, "key_lookup_plan.sqlplan"), cat, ev)
	return tr
}

func TestColdCacheReadAhead(t *testing.T) {
	off := one(t, analyze(t, Input{Trace: coldTrace(t, false), Run: Run{DisableReadAhead: true, ClearBufferPool: true}}), "cold-cache")
	if off.Title != "Cold cache with read-ahead off: 20 pages read from disk one at a time, 20 PAGEIOLATCH waits (40 ms)" {
		t.Errorf("title %q", off.Title)
	}
	if off.Severity != SeverityInfo || !strings.Contains(off.Detail, "cleared") || !strings.Contains(off.Hint, "trace flag 652") {
		t.Errorf("severity %s detail %q", off.Severity, off.Detail)
	}
	if numberOf(t, off, "pageIOLatchUs") != 40000 || off.EvidenceTotal != 40 {
		t.Errorf("numbers %+v evidence %d", off.Numbers, off.EvidenceTotal)
	}
	on := one(t, analyze(t, Input{Trace: coldTrace(t, true)}), "cold-cache")
	if on.Title != "Cold cache: 64 pages came from disk, 64 of them by read-ahead" || on.Severity != SeverityWarning ||
		numberOf(t, on, "readAheadIOs") != 1 {
		t.Errorf("title %q severity %s numbers %+v", on.Title, on.Severity, on.Numbers)
	}
	if !strings.Contains(on.Hint, "Read-ahead fetched") {
		t.Errorf("read-ahead hint %q", on.Hint)
	}
	// Read-ahead on, but none happened (one-page demand reads, as lookups
	// do): the hint must not claim prefetching (issue 32).
	demand := one(t, analyze(t, Input{Trace: coldTrace(t, false)}), "cold-cache")
	if strings.Contains(demand.Hint, "Read-ahead fetched") || !strings.Contains(demand.Hint, "no read-ahead happened") ||
		strings.Contains(demand.Title, "read-ahead") {
		t.Errorf("no read-ahead: title %q hint %q", demand.Title, demand.Hint)
	}
}

func TestParallelSkew(t *testing.T) {
	r := analyze(t, planOnly(t, "parallel-skew.sqlplan"))
	fs := byRule(r, "parallel-skew")
	var scan *Finding
	for i := range fs {
		if fs[i].Operators[0].NodeID == 3 {
			scan = &fs[i]
		}
	}
	if scan == nil {
		t.Fatalf("no skew on the Posts scan: %s", titles(r))
	}
	// Thread 4 produced all 47,575 rows; threads 1–3 none.
	if scan.Title != "Parallel skew in Clustered Index Scan (dbo.Posts.PK_Posts_Id): thread 4 produced 100% of 47,575 rows (4 threads)" {
		t.Errorf("title %q", scan.Title)
	}
	if numberOf(t, *scan, "ratio") != 4 || numberOf(t, *scan, "busiestThread") != 4 || scan.Reference != refParallelQuery {
		t.Errorf("numbers %+v", scan.Numbers)
	}
	// The hash join carries the Filter's skew up (same busiest thread):
	// one finding lists both.
	for _, f := range fs {
		for _, o := range f.Operators[1:] {
			if o.NodeID == 2 && f.Operators[0].NodeID != 4 {
				t.Errorf("hash join folded into %+v", f.Operators)
			}
		}
		if f.Operators[0].NodeID == 2 {
			t.Errorf("hash join reported on its own: %s", f.Title)
		}
	}
	none(t, analyze(t, planOnly(t, "spilltotempdb.sqlplan")), "parallel-skew")
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "parallel-skew")
}

func waitsTrace(t *testing.T, waits map[string]int64) *timeline.Trace {
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	at := int64(100)
	for _, wt := range []string{"CXPACKET", "CXCONSUMER", "PAGEIOLATCH_SH", "LCK_M_S"} {
		if us := waits[wt]; us > 0 {
			ev.wait(at, at+us, wt)
			at += us + 100
		}
	}
	ev.at(at+1000, "sqlserver", "sql_batch_completed", fu("duration", uint64(at+1000)))
	tr, _ := build(t, loadPlan(t, "parallel-skew.sqlplan"), nil, ev)
	return tr
}

func TestParallelismWaits(t *testing.T) {
	f := one(t, analyze(t, Input{Trace: waitsTrace(t, map[string]int64{"CXPACKET": 20000, "CXCONSUMER": 10000, "PAGEIOLATCH_SH": 5000})}), "parallelism-waits")
	// CXCONSUMER (10 ms) is left out of the parallel share, not of the total.
	if f.Title != "CXPACKET took 57% of the wait time: 20 ms of 35 ms" || f.Severity != SeverityInfo || f.EvidenceTotal != 1 {
		t.Errorf("title %q severity %s evidence %d", f.Title, f.Severity, f.EvidenceTotal)
	}
	none(t, analyze(t, Input{Trace: waitsTrace(t, map[string]int64{"CXCONSUMER": 500})}), "parallelism-waits")
	none(t, analyze(t, Input{Trace: waitsTrace(t, map[string]int64{"CXPACKET": 10000, "LCK_M_S": 100000})}), "parallelism-waits")
}

func TestPageSplits(t *testing.T) {
	cat := timeline.NewCatalog()
	cat.AddHoBT(5, 72057594049789952, timeline.ObjectName{Schema: "dbo", Table: "Orders", Index: "PK_Orders"})
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	for i := int64(0); i < 3; i++ {
		ev.split(100+i*100, "SPLIT_FOR_INSERT", 72057594049789952, 1, 200+uint64(i))
	}
	ev.split(500, "SPLIT_FOR_ROOT_NODE", 72057594049789952, 1, 100)
	ev.at(1000, "sqlserver", "sql_batch_completed", fu("duration", 1000))
	tr, _ := build(t, loadPlan(t, "key_lookup_plan.sqlplan"), cat, ev)
	// 4 splits: below the production floor (minSplits 100).
	none(t, analyze(t, Input{Trace: tr, Run: Run{Modification: true, RolledBack: true}}), "page-splits")
	r := analyzeSmall(t, Input{Trace: tr, Run: Run{Modification: true, RolledBack: true}})
	fs := byRule(r, "page-splits")
	if len(fs) != 2 {
		t.Fatalf("splits: %s", titles(r))
	}
	if fs[0].Title != "3 page splits on dbo.Orders.PK_Orders (SPLIT_FOR_INSERT)" || fs[0].EvidenceTotal != 3 || fs[0].Severity != SeverityInfo {
		t.Errorf("insert splits %q %d", fs[0].Title, fs[0].EvidenceTotal)
	}
	if fs[1].Title != "1 page split on dbo.Orders.PK_Orders (SPLIT_FOR_ROOT_NODE)" || !strings.Contains(fs[1].Detail, "grew a level") ||
		!strings.Contains(fs[1].Detail, "rolled back") {
		t.Errorf("root split %q %q", fs[1].Title, fs[1].Detail)
	}
	cfg := smallConfig()
	cfg.SplitsWarning = 3
	r2, _ := Analyze(Input{Trace: tr}, cfg)
	if byRule(r2, "page-splits")[0].Severity != SeverityWarning {
		t.Error("splitsWarning 3 did not make 3 splits a warning")
	}
	none(t, analyze(t, planOnly(t, "key_lookup_plan.sqlplan")), "page-splits")
}

func TestLogVolume(t *testing.T) {
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	for i := int64(0); i < 21; i++ {
		ev.logRecord(100+i*10, "LOP_MODIFY_ROW", "LCX_CLUSTERED", 72057594049789952, 100)
	}
	ev.logRecord(400, "LOP_BEGIN_XACT", "LCX_NULL", 0, 120)
	ev.at(1000, "sqlserver", "sql_batch_completed", fu("duration", 1000))
	tr, _ := build(t, loadPlan(t, "key_lookup_plan.sqlplan"), nil, ev)
	// 22 records: below the production floor (minLogRecords 1,000).
	none(t, analyze(t, Input{Trace: tr, Run: Run{Modification: true, RolledBack: true}}), "log-volume")
	f := one(t, analyzeSmall(t, Input{Trace: tr, Run: Run{Modification: true, RolledBack: true}}), "log-volume")
	if f.Title != "The modification wrote 22 log records (2 KB) before its rollback" || f.Detail != "Of the 22 records: LOP_MODIFY_ROW 21 (95%), LOP_BEGIN_XACT 1 (5%)." {
		t.Errorf("title %q detail %q", f.Title, f.Detail)
	}
	if numberOf(t, f, "logBytes") != 2220 || f.Severity != SeverityInfo || f.Reference != refLog {
		t.Errorf("numbers %+v", f.Numbers)
	}
	// fn_dblog's records alone (the log event group not traced).
	d := one(t, analyzeSmall(t, Input{Trace: planOnly(t, "key_lookup_plan.sqlplan").Trace, Run: Run{Modification: true,
		LogRecords: []LogRecord{{Operation: "LOP_INSERT_ROWS"}, {Operation: "LOP_INSERT_ROWS"}, {Operation: "LOP_BEGIN_XACT"}}}}), "log-volume")
	if d.Title != "The modification wrote 3 log records" || d.Detail != "Of the 3 records: LOP_INSERT_ROWS 2 (67%), LOP_BEGIN_XACT 1 (33%)." {
		t.Errorf("fn_dblog title %q detail %q", d.Title, d.Detail)
	}
	// Both sources, differing counts (issue 32: "22 log records", then
	// "Most: LOP_MODIFY_ROW 21"): the title's total and the shares come
	// from one source, fn_dblog; the trace's count is said apart.
	var dbl []LogRecord
	for range 23 {
		dbl = append(dbl, LogRecord{Operation: "LOP_MODIFY_ROW"})
	}
	dbl = append(dbl, LogRecord{Operation: "LOP_BEGIN_XACT"}, LogRecord{Operation: "LOP_COMMIT_XACT"})
	b := one(t, analyzeSmall(t, Input{Trace: tr, Run: Run{Modification: true, LogRecords: dbl}}), "log-volume")
	if b.Title != "The modification wrote 25 log records (2 KB)" ||
		b.Detail != "Of the 25 records: LOP_MODIFY_ROW 23 (92%), LOP_BEGIN_XACT 1 (4%), LOP_COMMIT_XACT 1 (4%). The trace caught 22 records as transaction_log events." {
		t.Errorf("two sources: title %q detail %q", b.Title, b.Detail)
	}
	none(t, analyzeSmall(t, planOnly(t, "key_lookup_plan.sqlplan")), "log-volume")
}
