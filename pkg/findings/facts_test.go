package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Issue 26 item 1: a warm trace says what was read, never "Reads 0".
func TestReadsTextNamesTheKind(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Facts
		want string
	}{
		{"warm", Facts{HasCounters: true, LogicalReads: 9003}, "0 physical reads — the pages were in memory; 9,003 logical reads"},
		{"cold", Facts{HasCounters: true, LogicalReads: 9003, PhysicalReads: 3, ReadAheads: 8992, PageReads: 8995},
			"9,003 logical reads, 3 physical reads, 8,992 read-ahead reads; 8,995 page reads in the trace"},
		{"no counters", Facts{PageReads: 146}, "146 page reads in the trace (the plan has no runtime counters: logical reads unknown)"},
	} {
		if got := c.f.ReadsText(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if strings.Contains(c.f.ReadsText(), "Reads 0") {
			t.Errorf("%s: bare zero", c.name)
		}
	}
}

// Waits are time; a wait only known to be under 1 ms is counted as not
// timed, not as no time.
func TestFactsWaits(t *testing.T) {
	tr := &timeline.Trace{Lanes: timeline.Lanes{Wait: []timeline.WaitInterval{
		{T: 3666, End: 4142, DurationUs: 476, DurationSource: "events", UnderOneMs: true},
		{T: 5000, End: 5000, DurationSource: "duration_ms", UnderOneMs: true},
		{T: 6000, End: 8000, DurationUs: 2000, DurationMs: 2, DurationSource: "duration_ms"},
	}}, Summary: timeline.Summary{ElapsedUs: 9000, ElapsedSource: "batch_events", LeadInUs: 1000, OperatorUs: 7000}}
	f := NewProfile(tr, nil).Facts()
	if f.Waits != 3 || f.WaitUs != 2476 || f.WaitsUnknown != 1 {
		t.Errorf("facts %+v", f)
	}
	if got := f.WaitsText(); got != "2.48 ms waited in 3 waits (1 shorter than 1 ms, not timed: XE reports whole ms)" {
		t.Errorf("waits text %q", got)
	}
	if got := f.TimeText(); got != "elapsed 9.0 ms (lead-in 1.0 ms before the first operator; operators 7.0 ms)" {
		t.Errorf("time text %q", got)
	}
}
