package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// lookupReads is the key lookup plan with 124 lookup reads at 200 µs +
// 10 µs·i, 22 seek reads before them, and lost events when lose > 0
// (after the 100th lookup read: inside the lookup's reads).
func lookupReads(t *testing.T, lose uint64) *timeline.Trace {
	t.Helper()
	cat := timeline.NewCatalog()
	for p := uint64(0); p < 22; p++ {
		cat.AddPage(5, 1, 300+p, timeline.ObjectName{Schema: "dbo", Table: "Users", Index: "Reputation"})
	}
	for p := uint64(0); p < 124; p++ {
		cat.AddPage(5, 1, 1000+p, timeline.ObjectName{Schema: "dbo", Table: "Users", Index: "PK_Users_Id"})
	}
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	for p := int64(0); p < 22; p++ {
		ev.read(100+p, 1, 300+uint64(p))
	}
	for p := int64(0); p < 124; p++ {
		if p == 100 {
			ev.skip(lose)
		}
		ev.read(200+p*10, 1, 1000+uint64(p))
	}
	ev.at(5000, "sqlserver", "sql_batch_completed", fu("duration", 5000))
	tr, _ := build(t, loadPlan(t, "key_lookup_plan.sqlplan"), cat, ev)
	return tr
}

func TestEventsLostLowerConfidence(t *testing.T) {
	clean := analyzeSmall(t, Input{Trace: lookupReads(t, 0)})
	none(t, clean, "events-lost")
	if f := one(t, clean, "reads-concentrated"); f.Confidence != ConfidenceHigh || len(f.ConfidenceReasons) != 0 {
		t.Errorf("clean trace: confidence %s %v", f.Confidence, f.ConfidenceReasons)
	}

	// 3 events lost among 149: 2% < lostShareLow, inside the lookup's span.
	tr := lookupReads(t, 3)
	if tr.Summary.Lost != 3 || len(tr.Summary.Gaps) != 1 {
		t.Fatalf("summary lost %d gaps %v", tr.Summary.Lost, tr.Summary.Gaps)
	}
	r := analyzeSmall(t, Input{Trace: tr})
	lost := one(t, r, "events-lost")
	if !strings.HasPrefix(lost.Title, "3 events were lost (2% of the trace)") || lost.Severity != SeverityWarning || lost.Confidence != ConfidenceHigh {
		t.Errorf("lost %q %s %s", lost.Title, lost.Severity, lost.Confidence)
	}
	g := tr.Summary.Gaps[0]
	if lost.Start != g.Start || lost.End != g.End || !strings.Contains(lost.Detail, "3 events went missing between") {
		t.Errorf("lost span %d–%d detail %q, gap %+v", lost.Start, lost.End, lost.Detail, g)
	}
	reads := one(t, r, "reads-concentrated")
	if reads.Confidence != ConfidenceMedium || len(reads.ConfidenceReasons) != 1 || !strings.Contains(reads.ConfidenceReasons[0], "inside this finding's time span") {
		t.Errorf("reads: %s %v", reads.Confidence, reads.ConfidenceReasons)
	}

	// 20 lost: 12% ≥ lostShareLow — low, wherever they were.
	if f := one(t, analyzeSmall(t, Input{Trace: lookupReads(t, 20)}), "reads-concentrated"); f.Confidence != ConfidenceLow {
		t.Errorf("20 lost: %s %v", f.Confidence, f.ConfidenceReasons)
	}
	// Dropped events the gaps do not show: medium, "cannot place".
	d := analyzeSmall(t, Input{Trace: lookupReads(t, 0), Run: Run{DroppedEvents: 2}})
	if f := one(t, d, "reads-concentrated"); f.Confidence != ConfidenceMedium || !strings.Contains(f.ConfidenceReasons[0], "cannot place") {
		t.Errorf("dropped: %s %v", f.Confidence, f.ConfidenceReasons)
	}
	if !strings.Contains(one(t, d, "events-lost").Detail, "cannot be placed in time") {
		t.Error("dropped events not explained")
	}
	// A finding from the plan's counters alone keeps its confidence.
	in := planOnly(t, "key_lookup_plan.sqlplan")
	in.Run.DroppedEvents = 100
	if f := one(t, analyzeSmall(t, in), "reads-concentrated"); f.Confidence != ConfidenceHigh {
		t.Errorf("plan-based finding lowered: %s %v", f.Confidence, f.ConfidenceReasons)
	}
}

func TestEventsTruncated(t *testing.T) {
	tr := lookupReads(t, 0)
	r := analyzeSmall(t, Input{Trace: tr, Run: Run{Truncated: true}})
	f := one(t, r, "events-truncated")
	if f.Title != "The trace stopped at the event cap after 148 events: later events are missing" || f.Start != tr.End {
		t.Errorf("truncated %q at %d", f.Title, f.Start)
	}
	if c := one(t, r, "reads-concentrated"); c.Confidence != ConfidenceLow || !strings.Contains(strings.Join(c.ConfidenceReasons, ";"), "event cap") {
		t.Errorf("reads under truncation: %s %v", c.Confidence, c.ConfidenceReasons)
	}
	none(t, analyze(t, Input{Trace: tr}), "events-truncated")
}

// Two scans of one index under a Concatenation, no execution windows: no
// read can be told apart, so every read is ambiguous (and unmatched).
func TestEventsAmbiguous(t *testing.T) {
	cat := timeline.NewCatalog()
	for p := uint64(0); p < 200; p++ {
		cat.AddPage(5, 1, 7+p, timeline.ObjectName{Schema: "dbo", Table: "People", Index: "PK_People_id"})
	}
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	for p := int64(0); p < 200; p++ {
		ev.read(100+p*10, 1, 7+uint64(p))
	}
	ev.at(5000, "sqlserver", "sql_batch_completed", fu("duration", 5000))
	tr, _ := build(t, loadPlan(t, "concatenation.sqlplan"), cat, ev)
	r := analyze(t, Input{Trace: tr})
	f := one(t, r, "events-ambiguous")
	if f.Title != "200 events could not be tied to one operator (200 ambiguous, 0 unmatched)" || f.EvidenceTotal != 200 {
		t.Errorf("ambiguous %q %d", f.Title, f.EvidenceTotal)
	}
	if len(f.Operators) != 2 || f.Operators[0].NodeID != 1 || f.Operators[1].NodeID != 2 {
		t.Errorf("candidates %+v", f.Operators)
	}
	none(t, analyze(t, Input{Trace: lookupReads(t, 0)}), "events-ambiguous")
}

// A finding about which operator read, resting on ambiguous matches,
// loses confidence; one about the statement does not.
func TestAmbiguousEvidenceLowersOperatorFindings(t *testing.T) {
	a := &analysis{cfg: DefaultConfig(), in: Input{Trace: &timeline.Trace{Lanes: timeline.Lanes{Read: []timeline.PageEvent{
		{T: 1, Match: timeline.Match{NodeID: 1, Ambiguous: true}}, {T: 2, Match: timeline.Match{NodeID: 1}}, {T: 3, Match: timeline.Match{NodeID: 1}},
	}}}}}
	f := Finding{Rule: "reads-concentrated", pending: ev(LaneRead, []int{0, 1, 2})}
	a.finish(&f)
	if f.Confidence != ConfidenceMedium || !strings.Contains(f.ConfidenceReasons[0], "1 of 3 evidence events") {
		t.Errorf("1 of 3 ambiguous: %s %v", f.Confidence, f.ConfidenceReasons)
	}
	f = Finding{Rule: "reads-concentrated", pending: ev(LaneRead, []int{0, 1})}
	a.finish(&f)
	if f.Confidence != ConfidenceLow {
		t.Errorf("1 of 2 ambiguous: %s", f.Confidence)
	}
	f = Finding{Rule: "cold-cache", pending: ev(LaneRead, []int{0, 1})}
	a.finish(&f)
	if f.Confidence != ConfidenceHigh {
		t.Errorf("cold-cache lowered by operator ambiguity: %s", f.Confidence)
	}
	// Evidence beyond maxEvidence is counted and spanned, not kept; the
	// earliest entries are.
	a.cfg.MaxEvidence = 2
	f = Finding{Rule: "cold-cache", pending: ev(LaneRead, []int{2, 0, 1})}
	a.finish(&f)
	if f.EvidenceTotal != 3 || len(f.Evidence) != 2 || f.Evidence[0].Index != 0 || f.Evidence[1].Index != 1 || f.Start != 1 || f.End != 3 {
		t.Errorf("capped evidence %+v total %d span %d–%d", f.Evidence, f.EvidenceTotal, f.Start, f.End)
	}
}

func TestNotesSayWhatWasNotTraced(t *testing.T) {
	r := analyze(t, Input{Trace: lookupReads(t, 0), Run: Run{Traced: &Traced{Locks: true, Waits: false, Memory: true, Splits: true, Log: true, FileIO: true}}})
	n := strings.Join(r.Notes, "\n")
	if !strings.Contains(n, "the waits event group was not traced") || strings.Contains(n, "locks event group") {
		t.Errorf("notes %q", r.Notes)
	}
}
