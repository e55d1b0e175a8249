package timeline

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/queryreplay/queryreplay/pkg/catalogfile"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

func TestSpreadKeepsOrderAndMillisecond(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	for i := 0; i < 3; i++ {
		st.read(1, 1, uint64(i))
	}
	st.read(2, 1, 9)
	tr := build(t, nil, nil, nil, st.events)
	got := []int64{}
	for _, r := range tr.Lanes.Read {
		got = append(got, r.T)
	}
	want := []int64{1000, 1333, 1666, 2000}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("read times %v, want %v", got, want)
		}
	}
	if !tr.Summary.Spread || tr.Summary.Ordering != "event_sequence" {
		t.Fatalf("summary %+v", tr.Summary)
	}
}

func TestNoSpreadForSubMillisecondTimestamps(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 1)
	st.read(1, 1, 2)
	st.events[2].Timestamp.Time = st.events[2].Timestamp.Time.Add(100 * time.Microsecond)
	tr := build(t, nil, nil, nil, st.events)
	if tr.Summary.Spread || tr.Lanes.Read[0].T != 1000 || tr.Lanes.Read[1].T != 1100 {
		t.Fatalf("spread=%v reads %+v", tr.Summary.Spread, tr.Lanes.Read)
	}
}

func TestLostEventsAndSequenceOrder(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 1)
	st.read(2, 1, 2)
	st.read(3, 1, 3)
	ev := st.events
	// Drop two events and deliver the rest out of order: the sequence
	// restores the order and the gap counts as lost.
	ev[1].Actions[0].Value = xe.UintValue(4)
	ev[3].Actions[0].Value = xe.UintValue(2)
	shuffled := []xe.Event{ev[3], ev[0], ev[2], ev[1]}
	shuffled[0].Actions[0].Value = xe.UintValue(7)
	tr := build(t, nil, nil, nil, shuffled)
	if tr.Summary.Lost != 3 { // sequences 1,3,4,7: 2, 5 and 6 are missing
		t.Fatalf("lost = %d, want 3", tr.Summary.Lost)
	}
	if tr.Summary.Ordering != "event_sequence" {
		t.Fatal(tr.Summary.Ordering)
	}
}

func TestCaptureOrderWithoutSequence(t *testing.T) {
	st := newStream()
	st.read(5, 1, 1)
	st.read(2, 1, 2)
	for i := range st.events {
		st.events[i].Actions = st.events[i].Actions[1:]
	}
	tr := build(t, nil, nil, nil, st.events)
	if tr.Summary.Ordering != "capture" {
		t.Fatal(tr.Summary.Ordering)
	}
	// No batch start: zero is the earliest event, and the notes say so.
	if tr.Lanes.Read[0].T != 0 || tr.Lanes.Read[1].T != 3000 || !strings.Contains(strings.Join(tr.Summary.Notes, ";"), "time zero") {
		t.Fatalf("reads %+v notes %v", tr.Lanes.Read, tr.Summary.Notes)
	}
}

func TestUnknownEventsAreCounted(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.add(1, "sqlserver", "latch_suspend_begin", u("page_id", 1))
	tr := build(t, nil, nil, nil, st.events)
	if tr.Summary.Other["latch_suspend_begin"] != 1 || tr.Summary.Events != 2 {
		t.Fatalf("summary %+v", tr.Summary)
	}
}

func TestBadStatementIsAnError(t *testing.T) {
	plan := loadPlan(t, "KeyLookup.sqlplan")
	if _, err := NewBuilder(plan, nil, nil, &Options{Statement: 7}); err == nil || !strings.Contains(err.Error(), "statement 7 does not exist") {
		t.Fatalf("err = %v", err)
	}
}

func TestCatalogFromFile(t *testing.T) {
	f, err := catalogfile.Read(strings.NewReader(`{"pages":[{"databaseId":5,"fileId":1,"pageId":9,"schema":"dbo","table":"T","index":"PK"}],
	  "hobts":[{"databaseId":0,"hobtId":77,"table":"T"}],"allocUnits":[{"databaseId":5,"allocUnitId":8,"table":"T","index":"PK"}],
	  "objects":[{"databaseId":5,"objectId":3,"table":"T","index":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := CatalogFromFile(f)
	if o := c.page(5, 1, 9); o == nil || o.Index != "PK" || o.Schema != "dbo" {
		t.Fatalf("page lookup %v", o)
	}
	if o := c.hobt(12, 77); o == nil {
		t.Fatal("database 0 entry should match any database")
	}
	if o := c.allocUnit(5, 8); o == nil || o.Index != "PK" {
		t.Fatalf("alloc unit lookup %v", o)
	}
	if o := c.object(5, 3); o == nil || o.Index != "" {
		t.Fatalf("object lookup should drop the index: %+v", o)
	}
	if c := CatalogFromFile(nil); c.page(5, 1, 9) != nil {
		t.Fatal("an empty catalog resolved a page")
	}
}

// TestProperties builds traces from random event streams on every test plan
// and checks the invariants every view relies on.
func TestProperties(t *testing.T) {
	plans := []string{"columns_with_no_statistics.sqlplan", "stack_overflow-my_comment_score_distribution.sqlplan", "cte_multi_ref_plan.sqlplan",
		"KeyLookup.sqlplan", "adaptive_join.sqlplan", "index_spool.sqlplan", "parallel-skew.sqlplan", "synthetic/nested_loops_inner_sort.sqlplan",
		"window_spool.sqlplan", "three_nested_loops.sqlplan", "concatenation.sqlplan", "lazy_spool_plan.sqlplan", "serially-parallel.sqlplan"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range plans {
		plan := loadPlan(t, name)
		var stmtOps []int
		// Pages 0–19 belong to the objects the plan reads, so object
		// matching (and its ambiguity) is exercised too.
		cat := NewCatalog()
		var objs []ObjectName
		for _, o := range plan.Statements[0].Operators {
			stmtOps = append(stmtOps, o.NodeID)
			for _, ob := range o.Objects {
				objs = append(objs, ObjectName{Schema: ob.Schema, Table: ob.Table, Index: ob.Index})
			}
		}
		for p := uint64(0); p < 20 && len(objs) > 0; p++ {
			cat.AddPage(5, 1, p, objs[int(p)%len(objs)])
		}
		for iter := 0; iter < 50; iter++ {
			st := newStream()
			st.batchStart(rng.IntN(3) - 1)
			n := 1 + rng.IntN(60)
			ms := rng.IntN(5) - 4
			for i := 0; i < n; i++ {
				ms += rng.IntN(3)
				switch rng.IntN(5) {
				case 0:
					st.profile(ms, uint64(stmtOps[rng.IntN(len(stmtOps))]), uint64(rng.IntN(5)), uint64(rng.IntN(5000)))
				case 1:
					st.wait(ms, rng.IntN(2) == 0, "PAGEIOLATCH_SH", uint64(rng.IntN(3)))
				case 2:
					st.lock(ms, rng.IntN(2) == 0, 77, "(aaaaaaaaaaaa)", uint64(rng.IntN(900)))
				default:
					st.read(ms, 1, uint64(rng.IntN(25)))
				}
				if rng.IntN(10) == 0 {
					st.at(int64(ms)*1000 + int64(rng.IntN(1000)))
				}
			}
			st.batchEnd(ms+1, uint64(ms+1)*1000)
			tr := build(t, plan, cat, nil, st.events)
			checkProperties(t, name, tr, st.events)
		}
	}
}

func checkProperties(t *testing.T, name string, tr *Trace, events []xe.Event) {
	t.Helper()
	base := events[0].Timestamp.Time
	var prev int64 = -1 << 62
	for i, r := range tr.Lanes.Read {
		if r.T < prev {
			t.Fatalf("%s: read lane not sorted at %d", name, i)
		}
		prev = r.T
	}
	// Every read stays inside its own millisecond (and sub-millisecond
	// timestamps stay where they are).
	var reads []xe.Event
	for _, ev := range events {
		if ev.Name == "physical_page_read" {
			reads = append(reads, ev)
		}
	}
	zero := base
	for _, ev := range events {
		if ev.Name == "sql_batch_starting" {
			zero = ev.Timestamp.Time
		}
	}
	slices.SortStableFunc(reads, func(x, y xe.Event) int { return x.Timestamp.Time.Compare(y.Timestamp.Time) })
	for i, r := range tr.Lanes.Read {
		us := reads[i].Timestamp.Time.Sub(zero).Microseconds()
		ms := floorDiv(us, 1000) * 1000
		if us != ms && r.T != us || r.T < ms || r.T >= ms+1000 {
			t.Fatalf("%s: read %d at %d µs left its millisecond %d (timestamp %d)", name, i, r.T, ms, us)
		}
	}
	for _, w := range tr.Lanes.Wait {
		if w.End < w.T || (w.Open && w.End != tr.End) {
			t.Fatalf("%s: wait %+v", name, w)
		}
	}
	for _, l := range tr.Lanes.Lock {
		if l.End < l.T || l.Open != l.HeldToEnd || (l.Open && l.End != tr.End) {
			t.Fatalf("%s: lock %+v", name, l)
		}
	}
	checkMatches(t, name, tr)
	checkOperatorsAgree(t, name, tr)
	for _, o := range tr.Operators {
		if o.FirstEmit < o.Start || o.End < o.FirstEmit || o.Start < tr.Start || o.End > tr.End {
			t.Fatalf("%s: operator %d times %d/%d/%d outside order or statement [%d,%d]", name, o.ID, o.Start, o.FirstEmit, o.End, tr.Start, tr.End)
		}
		for _, p := range o.Phases {
			if p.Start > p.End || p.Start < o.Start || p.End > o.End {
				t.Fatalf("%s: operator %d phase %+v outside [%d,%d]", name, o.ID, p, o.Start, o.End)
			}
		}
		if o.Behavior != "streaming" || o.PhysicalOp == "Concatenation" {
			continue
		}
		for _, c := range tr.Operators {
			if c.Parent != nil && *c.Parent == o.ID && c.FirstEmit > o.FirstEmit {
				dump, _ := json.MarshalIndent(tr.Operators, "", " ")
				t.Fatalf("%s: streaming operator %d emits at %d before its child %d (%d)\n%s", name, o.ID, o.FirstEmit, c.ID, c.FirstEmit, dump)
			}
		}
	}
}

// checkMatches: an ambiguous match names at least two candidates, has low
// confidence at best, and its node (if any) is one of them.
func checkMatches(t *testing.T, name string, tr *Trace) {
	t.Helper()
	var all []Match
	for _, e := range tr.Lanes.Read {
		all = append(all, e.Match)
	}
	for _, e := range tr.Lanes.Wait {
		all = append(all, e.Match)
	}
	for _, e := range tr.Lanes.Lock {
		all = append(all, e.Match)
	}
	notRun := map[NodeID]bool{}
	for _, o := range tr.Operators {
		notRun[NodeID(o.ID)] = o.NotExecuted
	}
	for _, mt := range all {
		if mt.NodeID >= 0 && notRun[mt.NodeID] && mt.Rule != RuleNodeID {
			t.Fatalf("%s: an event went to node %d, which never ran: %+v", name, mt.NodeID, mt)
		}
		if !mt.Ambiguous {
			if mt.Candidates != 0 {
				t.Fatalf("%s: candidates without ambiguity %+v", name, mt)
			}
			continue
		}
		if c := tr.CandidatesOf(&mt); len(c) < 2 || mt.Confidence > ConfidenceLow || (mt.NodeID >= 0 && !slices.Contains(c, mt.NodeID)) {
			t.Fatalf("%s: ambiguous match %+v", name, mt)
		}
	}
}

// checkOperatorsAgree: operators that never ran have no phases and no bar;
// operators placed by their parent lie inside it; thread bars and
// exchange sides lie inside the statement.
func checkOperatorsAgree(t *testing.T, name string, tr *Trace) {
	t.Helper()
	inLane := map[NodeID]bool{}
	for _, e := range tr.Lanes.Plan {
		inLane[e.NodeID] = true
	}
	for _, o := range tr.Operators {
		if o.NotExecuted != (o.TimeSource == "not_executed") || inLane[NodeID(o.ID)] == o.NotExecuted {
			t.Fatalf("%s: node %d not executed %v, time source %s, in plan lane %v", name, o.ID, o.NotExecuted, o.TimeSource, inLane[NodeID(o.ID)])
		}
		if o.NotExecuted && (len(o.Phases) != 0 || o.Start != o.End) {
			t.Fatalf("%s: node %d never ran but has %+v", name, o.ID, o)
		}
		if o.TimeSource == "parent" && o.Parent != nil {
			p := op(tr, *o.Parent)
			if o.Start < p.Start || o.End > p.End {
				t.Fatalf("%s: node %d (%d–%d) placed outside its parent %d (%d–%d)", name, o.ID, o.Start, o.End, p.ID, p.Start, p.End)
			}
		}
		for _, b := range o.Threads {
			if b.Start > b.End || b.Start < o.Start || b.End > o.End {
				t.Fatalf("%s: node %d thread bar %+v outside %d–%d", name, o.ID, b, o.Start, o.End)
			}
		}
		if ex := o.Exchange; ex != nil {
			for _, sd := range []ExchangeSide{ex.Producer, ex.Consumer} {
				if sd.Start > sd.End || sd.Start < tr.Start || sd.End > tr.End {
					t.Fatalf("%s: node %d exchange side %+v", name, o.ID, sd)
				}
			}
		}
	}
}

func TestWaitCategory(t *testing.T) {
	for w, want := range map[string]string{"PAGEIOLATCH_SH": "Io", "CXPACKET": "Parallelism", "LCK_M_S": "Concurrency",
		"SOS_SCHEDULER_YIELD": "Cpu", "WRITELOG": "Io", "PAGELATCH_EX": "Concurrency",
		// Issue 32: these were all called Cpu. A memory grant queue is a
		// wait on other queries, the client reading results is network
		// I/O, and an unknown type is no claim about CPU.
		"RESOURCE_SEMAPHORE": "Concurrency", "ASYNC_NETWORK_IO": "Io", "SOMETHING_NEW": "Other",
		"RESOURCE_SEMAPHORE_QUERY_COMPILE": "Concurrency"} {
		if got := WaitCategory(w); got != want {
			t.Errorf("%s: %s, want %s", w, got, want)
		}
	}
	// The classes are the one table the exporter labels with.
	for w, want := range map[string]string{"RESOURCE_SEMAPHORE": "Memory", "ASYNC_NETWORK_IO": "Network IO", "CXCONSUMER": "Parallelism",
		"RESOURCE_SEMAPHORE_QUERY_COMPILE": "Compilation", "LCK_M_X": "Lock", "lck_m_s": "Lock", "SOMETHING_NEW": "Other"} {
		if got := WaitClass(w); got != want {
			t.Errorf("class %s: %s, want %s", w, got, want)
		}
	}
}

func FuzzWaitCategory(f *testing.F) {
	for _, s := range []string{"", "LCK_M_X", "CXPACKET", "RESOURCE_SEMAPHORE", "PAGEIOLATCH_SH", "\x00", "*"} {
		f.Add(s)
	}
	valid := map[string]bool{CategoryIo: true, CategoryCPU: true, CategoryConcurrency: true, CategoryParallelism: true, CategoryOther: true}
	f.Fuzz(func(t *testing.T, w string) {
		if c := WaitCategory(w); !valid[c] {
			t.Fatalf("%q: category %q", w, c)
		}
		if WaitClass(w) == "" {
			t.Fatalf("%q: empty class", w)
		}
	})
}

// TestTraceJSONRoundTrip: a saved trace (a tracer bundle's trace part) loads
// back into the same Trace.
func TestTraceJSONRoundTrip(t *testing.T) {
	for _, name := range []string{"hash_join", "key_lookup", "self_join", "sort_chain"} {
		data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var tr Trace
		if err := json.Unmarshal(data, &tr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, err := json.MarshalIndent(&tr, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if string(again)+"\n" != string(data) {
			t.Errorf("%s: JSON changed on a round trip", name)
		}
	}
	var n NodeID
	for _, bad := range []string{`-3`, `"x"`, `1.5`} {
		if err := json.Unmarshal([]byte(bad), &n); err == nil {
			t.Errorf("node id %s accepted", bad)
		}
	}
	var r Rule
	if err := json.Unmarshal([]byte(`"guess"`), &r); err == nil {
		t.Error("unknown rule accepted")
	}
}

// TestAddKeepsNothingOfTheEvent: Add may be given a view into a decoder's
// reused buffer (xe.Decoder.ReuseEvents); overwriting that buffer after Add
// must not change the trace.
func TestAddKeepsNothingOfTheEvent(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.add(1, "sqlos", "wait_completed", m("wait_type", 66, "PAGEIOLATCH_SH"), u("duration", 2))
	st.lock(2, false, 77, "(aaaaaaaaaaaa)", 0)
	b, err := NewBuilder(nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var scratch [][]byte
	for i := range st.events {
		ev := st.events[i]
		// Re-point every string value at a buffer we scribble over later.
		ev.Fields = append([]xe.Field(nil), ev.Fields...)
		for j := range ev.Fields {
			v := &ev.Fields[j].Value
			if v.HasText {
				buf := []byte(v.Text)
				scratch = append(scratch, buf)
				v.Text = unsafe.String(&buf[0], len(buf))
			}
			if v.Kind == xe.KindString && v.Raw != "" {
				buf := []byte(v.Raw)
				scratch = append(scratch, buf)
				v.Raw = unsafe.String(&buf[0], len(buf))
			}
		}
		b.Add(&ev)
	}
	for _, buf := range scratch {
		for i := range buf {
			buf[i] = '#'
		}
	}
	tr, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if w := tr.Lanes.Wait[0].WaitType; w != "PAGEIOLATCH_SH" {
		t.Fatalf("wait type %q: the builder kept the caller's buffer", w)
	}
	if l := tr.Lanes.Lock[0]; l.Resource != "(aaaaaaaaaaaa)" || l.Mode != "S" || l.ResourceType != "KEY" {
		t.Fatalf("lock %+v: the builder kept the caller's buffer", l)
	}
}
