package tracer

import (
	"os"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// TestLiveInnerSideNotDoneWhileItsLoopRuns: sys.dm_exec_query_profiles
// shows the inner side of a Nested Loops closed between two outer rows;
// the live view must not call it done while the loop runs. The plan
// (testdata/plans/nested_loops.sqlplan) has Nested Loops 4 (outer: Index
// Scan 5; inner: Nested Loops 6, whose outer side is 7..14 and inner side
// Clustered Index Seek 15) under Hash Match 3.
func TestLiveInnerSideNotDoneWhileItsLoopRuns(t *testing.T) {
	data, err := os.ReadFile("testdata/plans/nested_loops.sqlplan")
	if err != nil {
		t.Fatal(err)
	}
	p, err := showplan.ParseBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	rb := planRebinders(p)
	states := func(in map[int]string) map[int]string {
		var ops []OperatorProgress
		for id := 0; id <= 15; id++ {
			if s, ok := in[id]; ok {
				ops = append(ops, OperatorProgress{NodeID: id, State: s})
			}
		}
		holdOpen(ops, rb)
		out := map[int]string{}
		for _, op := range ops {
			out[op.NodeID] = op.State
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   map[int]string
		want map[int]string // the nodes that change or must not
	}{
		{"outer loop running: its inner side, a loop between executions included, is not done",
			map[int]string{3: "running", 4: "running", 5: "running", 6: "done", 7: "done", 12: "done", 15: "done"},
			map[int]string{6: "running", 7: "running", 12: "running", 15: "running", 5: "running"}},
		{"inner loop running: its inner side is not done",
			map[int]string{4: "running", 6: "running", 7: "running", 15: "done"},
			map[int]string{15: "running"}},
		{"the outer side of a running loop is done when it closed",
			map[int]string{3: "running", 4: "running", 5: "done", 6: "running"},
			map[int]string{5: "done"}},
		{"a hash match's input under no loop is done when it closed",
			map[int]string{2: "running", 3: "running", 4: "done", 5: "done", 6: "done", 15: "done"},
			map[int]string{4: "done", 5: "done", 6: "done", 15: "done"}},
		{"a finished loop finishes its inner side",
			map[int]string{4: "done", 6: "done", 15: "done"},
			map[int]string{4: "done", 6: "done", 15: "done"}},
		{"not opened yet stays waiting",
			map[int]string{4: "running", 6: "waiting", 15: "waiting"},
			map[int]string{6: "waiting", 15: "waiting"}},
	} {
		got := states(c.in)
		for id, want := range c.want {
			if got[id] != want {
				t.Errorf("%s: node %d is %q, want %q (all: %v)", c.name, id, got[id], want, got)
			}
		}
	}
}
