package findings

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// BenchmarkAnalyze1M: the rules over a trace of 1,000,000 page reads (two
// operators), 10,000 waits and 10,000 locks: what the datasource pays once
// per stored trace.
func BenchmarkAnalyze1M(b *testing.B) {
	tr := &timeline.Trace{End: 2_000_000, Summary: timeline.Summary{Events: 1_020_000}}
	p := 0
	tr.Operators = []timeline.Operator{{ID: 0, PhysicalOp: "Nested Loops", LogicalOp: "Inner Join", End: 2_000_000},
		{ID: 1, Parent: &p, PhysicalOp: "Index Seek", Object: "dbo.T.IX", End: 2_000_000},
		{ID: 2, Parent: &p, PhysicalOp: "Clustered Index Seek", Object: "dbo.T.PK", End: 2_000_000}}
	for i := range 1_000_000 {
		n := timeline.NodeID(2)
		if i%10 == 0 {
			n = 1
		}
		tr.Lanes.Read = append(tr.Lanes.Read, timeline.PageEvent{T: int64(i * 2), Match: timeline.Match{NodeID: n}})
	}
	for i := range 10_000 {
		t := int64(i * 200)
		tr.Lanes.Wait = append(tr.Lanes.Wait, timeline.WaitInterval{T: t, End: t + 150, WaitType: "PAGEIOLATCH_SH", Category: "Io", DurationUs: 150, Match: timeline.Match{NodeID: 2}})
		tr.Lanes.Lock = append(tr.Lanes.Lock, timeline.LockInterval{T: t, End: t + 10, Mode: "S", AcquireSeen: true, Match: timeline.Match{NodeID: 2}})
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := Analyze(Input{Trace: tr}, DefaultConfig())
		if err != nil || len(r.Findings) == 0 {
			b.Fatal(err, r)
		}
	}
}
