package findings

import (
	"fmt"
	"slices"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// lost returns the events the server dropped: the larger of the timeline's
// sequence gaps and the tracer's count, plus the session's dropped count;
// and how many of them the gaps place in time.
func (a *analysis) lost() (total, placed uint64) {
	s := a.in.Trace.Summary
	total = max(s.Lost, a.in.Run.Lost)
	if a.in.Run.DroppedEvents > 0 {
		total += uint64(a.in.Run.DroppedEvents)
	}
	for _, g := range s.Gaps {
		placed += g.Missing
	}
	return total, min(placed, total)
}

func eventsLost(a *analysis) []Finding {
	total, placed := a.lost()
	if total == 0 {
		return nil
	}
	s := a.in.Trace.Summary
	sh := share(int64(total), int64(s.Events)+int64(total))
	f := Finding{
		Title:    fmt.Sprintf("%s lost (%s of the trace): counts in other findings may be short", plural(int64(total), "event was", "events were"), Percent(sh)),
		Severity: SeverityWarning,
		Numbers: []Number{num("lost", float64(total), "count", "run"), num("events", float64(s.Events), "count", "events"),
			num("share", sh*100, "percent", "run")},
		Hint: "The event session dropped events when its buffers filled faster than the target drained them " +
			"(EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS keeps the query from waiting on the trace). Trace fewer event groups, " +
			"a smaller query, or give the session more buffer memory.",
		Reference: refEventSession,
	}
	if len(s.Gaps) > 0 {
		f.Start, f.End = s.Gaps[0].Start, s.Gaps[0].End
		for _, g := range s.Gaps {
			f.Start, f.End = min(f.Start, g.Start), max(f.End, g.End)
		}
		where := fmt.Sprintf("between %s and %s", Duration(f.Start), Duration(f.End))
		if len(s.Gaps) > 1 {
			where = fmt.Sprintf("in %d places between %s and %s", len(s.Gaps), Duration(f.Start), Duration(f.End))
		}
		f.Detail = fmt.Sprintf("%s went missing %s.", plural(int64(placed), "event", "events"), where)
		f.Numbers = append(f.Numbers, num("gaps", float64(len(s.Gaps)), "count", "events"))
	}
	if rest := total - placed; rest > 0 {
		f.Detail = joinSentences(f.Detail, fmt.Sprintf("%s cannot be placed in time (the session's dropped count, or events lost before the first one read).",
			plural(int64(rest), "event", "events")))
	}
	return []Finding{f}
}

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

func eventsTruncated(a *analysis) []Finding {
	if !a.in.Run.Truncated {
		return nil
	}
	tr := a.in.Trace
	f := Finding{
		Title:    fmt.Sprintf("The trace stopped at the event cap after %s: later events are missing", plural(int64(tr.Summary.Events), "event", "events")),
		Severity: SeverityWarning,
		Start:    tr.End, End: tr.End,
		Numbers: []Number{num("events", float64(tr.Summary.Events), "count", "events")},
		Detail:  fmt.Sprintf("Nothing after %s is in the trace; every count is a lower bound.", Duration(tr.End)),
		Hint: "The read-back keeps at most the configured number of events to bound memory. Trace again with a higher cap " +
			"(queryreplay trace --max-events) or fewer event groups.",
		Reference: refExtendedEvents,
	}
	return []Finding{f}
}

// eventsAmbiguous reports entries of the data lanes (those whose events
// name an object: reads, writes, locks, memory, splits, log) whose operator
// is uncertain: matched ambiguously (several candidates) or not at all.
// Waits and file I/O name no object, so their timing matches are expected
// and not counted.
func eventsAmbiguous(a *analysis) []Finding {
	var evidence []laneIndices
	var amb, unmatched, entries int
	var cands []int
	tr := a.in.Trace
	for _, name := range []string{LaneRead, LaneWrite, LaneLock, LaneMemory, LaneSplit, LaneLog} {
		n, at := lane(tr, name)
		var idx []int
		for i := range n {
			entries++
			_, _, m := at(i)
			switch {
			case m.Ambiguous:
				amb++
				for _, c := range tr.CandidatesOf(&m) {
					if c >= 0 && !slices.Contains(cands, int(c)) {
						cands = append(cands, int(c))
					}
				}
			case m.NodeID < 0 && m.Rule == timeline.RuleUnmatched:
				unmatched++
			default:
				continue
			}
			idx = append(idx, i)
		}
		evidence = append(evidence, ev(name, idx)...)
	}
	if n := amb + unmatched; n == 0 || n < a.cfg.MinAmbiguous || share(int64(n), int64(entries)) < a.cfg.AmbiguousShare {
		return nil
	}
	slices.Sort(cands)
	f := Finding{
		Title: fmt.Sprintf("%s could not be tied to one operator (%s ambiguous, %s unmatched)",
			plural(int64(amb+unmatched), "event", "events"), Count(int64(amb)), Count(int64(unmatched))),
		Severity:  SeverityInfo,
		Operators: a.opRefs(cands...),
		pending:   evidence,
		Numbers: []Number{num("ambiguous", float64(amb), "count", "events"), num("unmatched", float64(unmatched), "count", "events"),
			num("entries", float64(entries), "count", "events"), num("share", share(int64(amb+unmatched), int64(entries))*100, "percent", "events")},
		Hint: "Several operators touched the same object at the same time, or an event named a page or object the catalog could " +
			"not resolve, so the timeline placed it by timing or left it with the statement. Findings that rest on these events " +
			"say so in their confidence.",
		Reference: refExtendedEvents,
	}
	return []Finding{f}
}

var traceRules = map[string]bool{"events-lost": true, "events-truncated": true, "events-ambiguous": true}

// operatorBound are the rules whose claim is about which operator did
// something, so an ambiguous operator match weakens them; the others
// (waits, blocking, cold cache, splits by index, log) claim what happened
// in the statement, whatever operator it is shown under.
var operatorBound = map[string]bool{"reads-concentrated": true, "residual-predicate": true, "spill": true, "exchange-spill": true, "parallel-skew": true}

// rate sets a finding's confidence from its evidence (see the package
// doc): findings about the trace itself, and findings that rest on the
// plan's counters alone, keep high confidence.
func (a *analysis) rate(f *Finding, ambiguous int) {
	f.Confidence = ConfidenceHigh
	if traceRules[f.Rule] || !eventBased(f) {
		return
	}
	c := ConfidenceHigh
	why := func(to Confidence, format string, args ...any) {
		c = c.lower(to)
		f.ConfidenceReasons = append(f.ConfidenceReasons, fmt.Sprintf(format, args...))
	}
	if ambiguous > 0 {
		to := ConfidenceMedium
		if share(int64(ambiguous), int64(f.EvidenceTotal)) >= a.cfg.AmbiguousShareLow {
			to = ConfidenceLow
		}
		why(to, "%s of %s evidence events matched their operator ambiguously", Count(int64(ambiguous)), Count(int64(f.EvidenceTotal)))
	}
	total, placed := a.lost()
	if total > 0 {
		events := int64(a.in.Trace.Summary.Events) + int64(total)
		switch {
		case share(int64(total), events) >= a.cfg.LostShareLow:
			why(ConfidenceLow, "%s of the trace's events were lost", Percent(share(int64(total), events)))
		case a.gapInside(f):
			why(ConfidenceMedium, "events were lost inside this finding's time span")
		case total > placed:
			why(ConfidenceMedium, "%s lost at times the trace cannot place", plural(int64(total-placed), "event was", "events were"))
		}
	}
	for _, r := range f.lower {
		why(r.to, "%s", r.why)
	}
	if n := a.in.Statements; n > 1 && operatorBound[f.Rule] && len(f.Operators) > 0 && f.EvidenceTotal > 0 {
		why(ConfidenceMedium, "the batch has %d statements with plans and the events carry no statement identity: an event's node id may belong to another statement's plan", n)
	}
	if a.in.Run.Truncated {
		why(ConfidenceLow, "the read-back stopped at the event cap: later events are missing")
	}
	f.Confidence = c
}

// eventBased: the finding counts events (its evidence, or numbers taken
// from the events).
func eventBased(f *Finding) bool {
	if f.EvidenceTotal > 0 {
		return true
	}
	for _, n := range f.Numbers {
		if n.Source == "events" && n.Value != 0 {
			return true
		}
	}
	return false
}

// gapInside reports whether a sequence gap overlaps the finding's span (a
// finding without a span spans the whole trace).
func (a *analysis) gapInside(f *Finding) bool {
	lo, hi := f.Start, f.End
	if f.EvidenceTotal == 0 {
		lo, hi = a.in.Trace.Start, a.in.Trace.End
	}
	for _, g := range a.in.Trace.Summary.Gaps {
		if g.Start <= hi && g.End >= lo {
			return true
		}
	}
	return false
}
