package showplan

import (
	"strings"
	"testing"
)

// expectedBehaviour is written by hand from the operator descriptions in
// Microsoft's showplan operator reference
// (https://learn.microsoft.com/sql/relational-databases/showplan-logical-and-physical-operators-reference)
// and the joins article
// (https://learn.microsoft.com/sql/relational-databases/performance/joins),
// independently of semanticsTable: it is the list the table is checked
// against, so it must never be generated from the table. Each entry says
// when the operator can return its first row, given n row inputs.
//
//	S  streaming: rows leave while the inputs are read
//	B  blocking: every input is read to the end first
//	H  hybrid: the first input is read whole (build), the others stream
//	Q  Sequence: every input but the last runs to completion first
var expectedBehaviour = []struct {
	physical, logical string
	inputs            int
	want              string
	why               string
}{
	{"Sort", "Sort", 1, "B", "Sort: sorts all incoming rows"},
	{"Sort", "Distinct Sort", 1, "B", "Distinct Sort: removes duplicates and sorts"},
	{"Sort", "TopN Sort", 1, "B", "Top N Sort: like Sort, only the first N rows are needed, but all must be seen"},
	{"Hash Match", "Aggregate", 1, "B", "Hash Match: for aggregates, the table is scanned and output only when built"},
	{"Hash Match", "Partial Aggregate", 1, "B", "Partial Aggregate: aggregates as many rows as fit, passing groups on only when memory fills or the input ends"},
	{"Hash Match", "Flow Distinct", 1, "S", "Flow Distinct: returns each row as it is obtained unless it is a duplicate"},
	{"Hash Match", "Inner Join", 2, "H", "Hash Match: first input builds, second probes, matches output per probe row"},
	{"Hash Match", "Left Outer Join", 2, "H", "matches leave while probing; unmatched build rows come last"},
	{"Hash Match", "Right Outer Join", 2, "H", "probe rows leave while probing"},
	{"Hash Match", "Full Outer Join", 2, "H", "matches and unmatched probe rows leave while probing"},
	{"Hash Match", "Right Semi Join", 2, "H", "a probe row leaves at its first match"},
	{"Hash Match", "Right Anti Semi Join", 2, "H", "a probe row with no match leaves at once"},
	{"Hash Match", "Left Semi Join", 2, "H", "Left Semi Join returns top-input rows that have a match: a build row is known to qualify at its first matching probe row"},
	{"Hash Match", "Left Anti Semi Join", 2, "B", "Left Anti Semi Join returns top-input rows with no match: known only after the whole probe input"},
	{"Hash Match", "Union", 2, "H", "Hash Match union: non-matching probe rows leave while probing, then the hash table"},
	{"Adaptive Join", "Inner Join", 3, "H", "Adaptive Join: the method is chosen after the first input has been scanned"},
	{"Adaptive Join", "Left Outer Join", 3, "H", "same, any join type"},
	{"Batch Hash Table Build", "Batch Hash Table Build", 1, "B", "builds the batch-mode hash table before the join probes it"},
	{"Table Spool", "Eager Spool", 1, "B", "Eager Spool: consumes all rows of its input when the first row is asked for"},
	{"Index Spool", "Eager Spool", 1, "B", "Eager Spool"},
	{"Row Count Spool", "Eager Spool", 1, "B", "Eager Spool"},
	{"Table Spool", "Lazy Spool", 1, "S", "Lazy Spool: gets one input row each time its parent asks for one"},
	{"Index Spool", "Lazy Spool", 1, "S", "Lazy Spool"},
	{"Row Count Spool", "Lazy Spool", 1, "S", "Lazy Spool"},
	{"Sequence", "Sequence", 3, "Q", "Sequence: executes each input in turn, returns the rows of the last"},
	{"Stream Aggregate", "Aggregate", 1, "S", "Stream Aggregate with GROUP BY: groups of ordered input leave one by one"},
	{"Nested Loops", "Inner Join", 2, "S", "Nested Loops: searches the inner input for each outer row"},
	{"Nested Loops", "Left Anti Semi Join", 2, "S", "any logical join"},
	{"Merge Join", "Inner Join", 2, "S", "Merge Join: gets a row from each sorted input and compares them"},
	{"Merge Join", "Union", 2, "S", "any logical operation"},
	{"Parallelism", "Gather Streams", 1, "S", "an exchange forwards packets of rows between threads"},
	{"Parallelism", "Repartition Streams", 1, "S", "exchange"},
	{"Parallelism", "Distribute Streams", 1, "S", "exchange"},
	{"Bitmap", "Bitmap Create", 1, "S", "Bitmap: filters as rows pass"},
	{"Compute Scalar", "Compute Scalar", 1, "S", "Compute Scalar: evaluates an expression per row"},
	{"Filter", "Filter", 1, "S", "Filter: returns the rows that satisfy the predicate"},
	{"Assert", "Assert", 1, "S", "Assert: evaluates its expression for each input row"},
	{"Top", "Top", 1, "S", "Top: returns the first rows of its input"},
	{"Segment", "Segment", 1, "S", "Segment: marks segments of its input"},
	{"Sequence Project", "Compute Scalar", 1, "S", "Sequence Project: computes over an ordered set"},
	{"Sequence Project", "Rank", 1, "S", "Sequence Project"},
	{"Concatenation", "Concatenation", 3, "S", "Concatenation: returns each row of each input in turn"},
	{"Merge Interval", "Merge Interval", 1, "S", "Merge Interval"},
	{"Collapse", "Collapse", 1, "S", "Collapse"},
	{"Split", "Split", 1, "S", "Split: splits each update into a delete and an insert"},
	{"Switch", "Switch", 2, "S", "Switch: copies the chosen input to the output"},
	{"Window Spool", "Window Spool", 1, "S", "Window Spool: expands each row into its window; blocks only per frame (per tie group with RANGE)"},
	{"Window Aggregate", "Window Aggregate", 1, "S", "batch-mode window aggregate, per partition"},
	{"UDX", "UDX", 1, "S", "extended operator"},
	{"Foreign Key References Check", "Foreign Key References Check", 1, "S", "checks each row"},
	{"Print", "Print", 1, "S", "row by row"},
	{"Put", "Put", 1, "S", "row by row"},
	{"Generic", "Generic", 1, "S", "unknown shape"},
	{"Constant Scan", "Constant Scan", 0, "S", "leaf"},
	{"Table Scan", "Table Scan", 0, "S", "leaf"},
	{"Clustered Index Scan", "Clustered Index Scan", 0, "S", "leaf"},
	{"Clustered Index Seek", "Clustered Index Seek", 0, "S", "leaf"},
	{"Index Scan", "Index Scan", 0, "S", "leaf"},
	{"Index Seek", "Index Seek", 0, "S", "leaf"},
	{"Columnstore Index Scan", "Columnstore Index Scan", 0, "S", "leaf"},
	{"Columnstore Index Scan", "Index Scan", 0, "S", "leaf"},
	{"Columnstore Index Scan", "Clustered Index Scan", 0, "S", "leaf"},
	{"Key Lookup", "Key Lookup", 0, "S", "one row per outer row"},
	{"Key Lookup", "Clustered Index Seek", 0, "S", "one row per outer row"},
	{"RID Lookup", "RID Lookup", 0, "S", "one row per outer row"},
	{"Deleted Scan", "Deleted Scan", 0, "S", "leaf"},
	{"Inserted Scan", "Inserted Scan", 0, "S", "leaf"},
	{"Log Row Scan", "Log Row Scan", 0, "S", "leaf"},
	{"Parameter Table Scan", "Parameter Table Scan", 0, "S", "leaf"},
	{"Table-valued function", "Table-valued function", 0, "S", "leaf: fills tempdb inside itself"},
	{"TFP", "TFP", 0, "S", "leaf"},
	{"Extensible Column Store Scan", "Extensible Column Store Scan", 0, "S", "leaf"},
	{"Remote Query", "Remote Query", 0, "S", "remote rows as they arrive"},
	{"Remote Scan", "Remote Scan", 0, "S", "remote"},
	{"Remote Index Scan", "Remote Index Scan", 0, "S", "remote"},
	{"Remote Index Seek", "Remote Index Seek", 0, "S", "remote"},
	{"Remote Insert", "Remote Insert", 1, "S", "row by row"},
	{"Remote Update", "Remote Update", 1, "S", "row by row"},
	{"Remote Delete", "Remote Delete", 1, "S", "row by row"},
	{"External Select", "External Select", 0, "S", "external rows as they arrive"},
	{"External Extraction Scan", "External Extraction Scan", 0, "S", "external"},
	{"Clustered Index Insert", "Insert", 1, "S", "Insert: inserts each row from its input"},
	{"Clustered Index Update", "Update", 1, "S", "Update: updates each row from its input"},
	{"Clustered Index Delete", "Delete", 1, "S", "Delete"},
	{"Clustered Index Merge", "Merge", 1, "S", "Merge"},
	{"Clustered Update", "Update", 1, "S", "Update"},
	{"Index Insert", "Insert", 1, "S", "Insert"},
	{"Index Update", "Update", 1, "S", "Update"},
	{"Index Delete", "Delete", 1, "S", "Delete"},
	{"Table Insert", "Insert", 1, "S", "Insert"},
	{"Table Update", "Update", 1, "S", "Update"},
	{"Table Delete", "Delete", 1, "S", "Delete"},
	{"Table Merge", "Merge", 1, "S", "Merge"},
	{"Columnstore Index Insert", "Insert", 1, "S", "Insert"},
	{"Columnstore Index Update", "Update", 1, "S", "Update"},
	{"Columnstore Index Delete", "Delete", 1, "S", "Delete"},
	{"Columnstore Index Merge", "Merge", 1, "S", "Merge"},
	{"Online Index Insert", "Insert", 1, "S", "Insert"},
}

// TestSemanticsAgainstReference checks the table against the hand-written
// list: the behaviour and blocking inputs each pair gets, and that no table
// entry is missing from the list (a new entry needs an independent
// expectation).
func TestSemanticsAgainstReference(t *testing.T) {
	covered := map[opKey]bool{}
	for _, e := range expectedBehaviour {
		op := testOperator(e.physical, e.logical, e.inputs)
		op.HasGroupBy = true
		s := classify(op)
		var want Behavior
		var blocking []int
		switch e.want {
		case "S":
			want = Streaming
		case "B":
			want = Blocking
			for i := range e.inputs {
				blocking = append(blocking, 10+i)
			}
		case "H":
			want, blocking = Hybrid, []int{10}
		case "Q":
			want = Hybrid
			for i := range e.inputs - 1 {
				blocking = append(blocking, 10+i)
			}
		}
		if !s.Known || s.Behavior != want || !equalInts(s.BlockingInputs, blocking) {
			t.Errorf("(%s, %s) with %d inputs: got %s %v (%s); the reference says %s %v: %s",
				e.physical, e.logical, e.inputs, s.Behavior, s.BlockingInputs, s.Rule, want, blocking, e.why)
		}
		covered[opKey{e.physical, e.logical}] = true
	}
	for k := range semanticsTable {
		if k.logical == anyLogical {
			found := false
			for c := range covered {
				found = found || c.physical == k.physical
			}
			if !found {
				t.Errorf("table entry (%s, any) has no expectation in the hand-written list", k.physical)
			}
			continue
		}
		if !covered[k] {
			t.Errorf("table entry (%s, %s) has no expectation in the hand-written list", k.physical, k.logical)
		}
	}
}

// TestEveryRuleHasReasonAndSource: each entry says why and where that
// comes from: a Microsoft page, the reference tool's classifier (docs/design/tracing.md §8), or an explicit "general
// knowledge" that names the lack of a source.
func TestEveryRuleHasReasonAndSource(t *testing.T) {
	for k, e := range semanticsTable {
		if len(e.why) < 10 {
			t.Errorf("(%s, %s): reason %q is too thin", k.physical, k.logical, e.why)
		}
		src := e.source
		if !strings.Contains(src, "https://learn.microsoft.com/") && !strings.Contains(src, "docs/design/tracing.md") &&
			!strings.HasPrefix(src, "general knowledge") {
			t.Errorf("(%s, %s): source %q is neither a Microsoft page, docs/design/tracing.md nor marked general knowledge", k.physical, k.logical, src)
		}
	}
	op := testOperator("Hash Match", "Partial Aggregate", 1)
	s := classify(op)
	if s.Source == "" || s.Reason == "" || !strings.Contains(s.Caveat, "memory") || !strings.Contains(s.Rule, "caveat") {
		t.Errorf("partial aggregate semantics carry no source, reason or caveat: %+v", s)
	}
}

// TestWindowSpoolRangeFrame: two Segments below a Window Spool (partition,
// then ORDER BY peers) is the RANGE shape; the rule says it blocks per tie
// group.
func TestWindowSpoolRangeFrame(t *testing.T) {
	st := mustParse(t, "html-query-plan/window_spool.sqlplan").Statements[0]
	ws := st.OperatorByID(4)
	if ws == nil || ws.PhysicalOp != "Window Spool" {
		t.Fatalf("node 4 is %+v", ws)
	}
	if ws.Semantics.Behavior != Streaming || !strings.Contains(ws.Semantics.Caveat, "tie group") ||
		!strings.Contains(ws.Semantics.Rule, "RANGE") {
		t.Errorf("window spool semantics %+v", ws.Semantics)
	}
}

// TestUnusedAdaptiveInput: the real adaptive join ran as nested loops, so
// its hash probe input (Filter node 3 over the Table Scan) never ran; the
// rule says so.
func TestUnusedAdaptiveInput(t *testing.T) {
	st := mustParse(t, "html-query-plan/adaptive_join.sqlplan").Statements[0]
	aj := st.Root
	build, probe, inner := aj.AdaptiveInputs()
	if build == nil || build.NodeID != 2 || probe.NodeID != 3 || inner.NodeID != 7 {
		t.Fatalf("adaptive inputs %v %v %v", build, probe, inner)
	}
	if u := aj.UnusedAdaptiveInput(); u == nil || u.NodeID != 3 {
		t.Fatalf("unused input %v, want node 3", u)
	}
	if !strings.Contains(aj.Semantics.Rule, "ran as Nested Loops: input node 3 never ran") {
		t.Errorf("rule %q", aj.Semantics.Rule)
	}
	hash := *aj
	hash.ActualJoinType = "Hash Match"
	if u := hash.UnusedAdaptiveInput(); u == nil || u.NodeID != 7 {
		t.Errorf("as a hash join the unused input is %v, want node 7", u)
	}
	if b, _, _ := st.OperatorByID(3).AdaptiveInputs(); b != nil {
		t.Error("a Filter has no adaptive inputs")
	}
}
