package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

func bars(rows ...int64) []timeline.ThreadBar {
	var out []timeline.ThreadBar
	for i, r := range rows {
		out = append(out, timeline.ThreadBar{Thread: i + 1, Rows: r, Executions: 1})
	}
	return out
}

// Skew is the busiest thread's share against an even share: a 90/10 split
// at DOP 2 is skew, one thread with 12.5% at DOP 16 is not.
func TestSkewShareAtAnyDOP(t *testing.T) {
	a := &analysis{cfg: DefaultConfig(), p: &Profile{}}
	sixteen := []int64{12500}
	for range 15 {
		sixteen = append(sixteen, 5833)
	}
	for _, c := range []struct {
		name string
		rows []int64
		want bool
	}{
		{"90/10 at DOP 2", []int64{90_000, 10_000}, true},
		{"60/40 at DOP 2", []int64{60_000, 40_000}, false},
		{"12.5% at DOP 16", sixteen, false},
		{"one thread of 16 has 70%", append([]int64{70_000}, make([]int64, 15)...), true},
	} {
		o := &OperatorStats{NodeID: 1, PhysicalOp: "Hash Match", Threads: bars(c.rows...)}
		if got := a.skewOf(o) != nil; got != c.want {
			t.Errorf("%s: skew %v, want %v", c.name, got, c.want)
		}
	}
}

// A batch-mode Sort returns its rows on one thread by design: not skew.
func TestBatchSortIsNotSkew(t *testing.T) {
	for _, mode := range []string{"Batch", "Row"} {
		st := &showplan.Statement{Operators: []*showplan.Operator{{NodeID: 1, PhysicalOp: "Sort", ExecutionMode: mode}}}
		a := &analysis{cfg: DefaultConfig(), p: &Profile{}, in: Input{Plan: st}}
		o := &OperatorStats{NodeID: 1, PhysicalOp: "Sort", Threads: bars(100_000, 0, 0, 0)}
		if got := a.skewOf(o) != nil; got != (mode == "Row") {
			t.Errorf("%s-mode Sort: skew %v", mode, got)
		}
	}
}

// An operator that ran once on each of 6 threads ran once, not 6 times; a
// nested-loops inner side that ran 117 times on one thread ran 117 times.
func TestExecutionsPerThread(t *testing.T) {
	c := &Counters{Executions: 6, Threads: 6, MaxThreadExecutions: 1}
	if c.Runs() != 1 {
		t.Errorf("parallel scan runs %d, want 1", c.Runs())
	}
	c = &Counters{Executions: 117, Threads: 1, MaxThreadExecutions: 117}
	if c.Runs() != 117 {
		t.Errorf("lookup runs %d", c.Runs())
	}
	// stack_overflow-inequality_index: the Posts scan ran once on each
	// of 6 threads; it was reported as "ran 6 times".
	r := analyze(t, planOnly(t, "stack_overflow-inequality_index.sqlplan"))
	f := one(t, r, "reads-concentrated")
	if strings.Contains(f.Detail, "ran 6 times") || numberOf(t, f, "executions") != 1 {
		t.Errorf("once-per-thread scan: detail %q numbers %+v", f.Detail, f.Numbers)
	}
}

// CXCONSUMER is a consumer waiting for rows, harmless by itself: only
// CXPACKET (and CXSYNC) count toward parallelism-waits.
func TestParallelismWaitsExcludeCXConsumer(t *testing.T) {
	for _, c := range []struct {
		wait string
		want int
	}{{"CXCONSUMER", 0}, {"CXPACKET", 1}} {
		ev := newEvents()
		ev.batch(0, 1_000_000)
		ev.wait(1000, 900_000, c.wait)
		tr, _ := build(t, nil, nil, ev)
		if got := len(byRule(analyze(t, Input{Trace: tr}), "parallelism-waits")); got != c.want {
			t.Errorf("%s: %d parallelism-waits findings, want %d", c.wait, got, c.want)
		}
	}
}
