package findings

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Facts are the statement-wide figures every surface shows — terminal
// replay, bundle, frames, findings, compare, panel — each under one name
// that says what it counts (docs/frames.md, "Vocabulary"):
//
//   - logical reads: pages the plan's operators read from the buffer pool
//     (RunTimeCountersPerThread ActualLogicalReads, summed over operators
//     and threads);
//   - physical reads and read-ahead reads: pages read from disk, by the
//     same counters (ActualPhysicalReads, ActualReadAheads), kept apart;
//   - page reads in the trace: physical_page_read events the trace caught.
//
// Times are µs: the batch's one elapsed time (timeline Summary.ElapsedUs),
// its lead-in before the first operator, and the operators' own time.
type Facts struct {
	ElapsedUs     int64  `json:"elapsedUs"`
	ElapsedSource string `json:"elapsedSource,omitempty"`
	LeadInUs      int64  `json:"leadInUs"`
	OperatorUs    int64  `json:"operatorUs"`
	// HasCounters: the plan's runtime counters are there, so the logical,
	// physical and read-ahead reads are known.
	HasCounters   bool  `json:"hasCounters"`
	LogicalReads  int64 `json:"logicalReads"`
	PhysicalReads int64 `json:"physicalReads"`
	ReadAheads    int64 `json:"readAheads"`
	PageReads     int   `json:"pageReads"`
	// Waits, WaitUs: every wait of the trace and the time waited (µs).
	// WaitsUnknown counts waits seen only by their end whose duration
	// field read 0 ms: shorter than 1 ms, their time is not known.
	Waits        int   `json:"waits"`
	WaitUs       int64 `json:"waitUs"`
	WaitsUnknown int   `json:"waitsUnknown,omitempty"`
}

// Facts gathers the statement-wide figures of the profile.
func (p *Profile) Facts() Facts {
	return FactsOf(p.Trace, p.HasCounters, p.LogicalReads, p.PhysicalReads, p.ReadAheads)
}

// FactsOf gathers the figures of a trace with its plan's read counters
// (summed over operators and threads; hasCounters false when the plan
// has none): for adapters that hold the counters but no Profile.
func FactsOf(tr *timeline.Trace, hasCounters bool, logical, physical, readAheads int64) Facts {
	s := tr.Summary
	f := Facts{ElapsedUs: s.ElapsedUs, ElapsedSource: s.ElapsedSource, LeadInUs: s.LeadInUs, OperatorUs: s.OperatorUs,
		HasCounters: hasCounters, LogicalReads: logical, PhysicalReads: physical, ReadAheads: readAheads,
		PageReads: len(tr.Lanes.Read)}
	if f.ElapsedSource == "" {
		// a trace saved before the fields existed: its extent, and the
		// operators' own span
		f.ElapsedUs, f.ElapsedSource = tr.End-tr.Start, "extent"
		f.LeadInUs, f.OperatorUs = operatorSpan(tr)
	}
	for _, w := range tr.Lanes.Wait {
		f.Waits++
		f.WaitUs += WaitUs(w)
		if w.UnderOneMs && w.DurationSource == "duration_ms" {
			f.WaitsUnknown++
		}
	}
	return f
}

// ReadsText says the reads in the vocabulary's words. A warm trace (no
// page read from disk) says so rather than "0 reads":
// "0 physical reads — the pages were in memory; 9,003 logical reads".
func (f Facts) ReadsText() string {
	traced := fmt.Sprintf("%s in the trace", plural(int64(f.PageReads), "page read", "page reads"))
	if !f.HasCounters {
		if f.PageReads == 0 {
			return "0 page reads in the trace (no physical_page_read events; the plan has no runtime counters to say how many pages were read in memory)"
		}
		return traced + " (the plan has no runtime counters: logical reads unknown)"
	}
	if f.PhysicalReads+f.ReadAheads == 0 && f.PageReads == 0 {
		return fmt.Sprintf("0 physical reads — the pages were in memory; %s", plural(f.LogicalReads, "logical read", "logical reads"))
	}
	return fmt.Sprintf("%s, %s, %s; %s", plural(f.LogicalReads, "logical read", "logical reads"),
		plural(f.PhysicalReads, "physical read", "physical reads"), plural(f.ReadAheads, "read-ahead read", "read-ahead reads"), traced)
}

// TimeText says the elapsed time with its lead-in and the operators' time:
// "elapsed 80.0 ms (67.0 ms before the first operator, operators 8.0 ms)".
func (f Facts) TimeText() string {
	return fmt.Sprintf("elapsed %s (lead-in %s before the first operator; operators %s)", ms1(f.ElapsedUs), ms1(f.LeadInUs), ms1(f.OperatorUs))
}

// WaitsText says the time waited: "21.89 ms waited in 70 waits (3 shorter
// than 1 ms, not timed)".
func (f Facts) WaitsText() string {
	if f.Waits == 0 {
		return "no waits"
	}
	s := fmt.Sprintf("%s waited in %s", ms2(f.WaitUs), plural(int64(f.Waits), "wait", "waits"))
	if f.WaitsUnknown > 0 {
		s += fmt.Sprintf(" (%s shorter than 1 ms, not timed: XE reports whole ms)", Count(int64(f.WaitsUnknown)))
	}
	return s
}

func ms1(us int64) string { return fmt.Sprintf("%.1f ms", float64(us)/1000) }
func ms2(us int64) string { return fmt.Sprintf("%.2f ms", float64(us)/1000) }

// WaitTimeText writes one wait type's or operator's waits as time first:
// "21.89 ms (70 waits)", with the untimed ones said.
func WaitTimeText(us int64, n, unknown int) string {
	var b strings.Builder
	b.WriteString(ms2(us))
	fmt.Fprintf(&b, " (%s", plural(int64(n), "wait", "waits"))
	if unknown > 0 {
		fmt.Fprintf(&b, ", %s under 1 ms not timed", Count(int64(unknown)))
	}
	b.WriteString(")")
	return b.String()
}

// operatorSpan is the lead-in from the trace's start to the first
// executed operator and the operators' span, for traces that predate
// Summary.LeadInUs.
func operatorSpan(tr *timeline.Trace) (lead, ops int64) {
	first, last, ran := timeline.ExecutedSpan(tr)
	if !ran {
		return 0, 0
	}
	return max(first-min(tr.Start, 0), 0), last - first
}
