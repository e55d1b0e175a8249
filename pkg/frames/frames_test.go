package frames

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"
)

var update = flag.Bool("update", false, "rewrite golden files and the frame contract files")

func intp(v int) *int { return &v }

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func sampleLane(t *testing.T) *data.Frame {
	t.Helper()
	f, err := Lane("read", []Interval{
		{Start: t0.Add(3 * time.Millisecond), End: t0.Add(4 * time.Millisecond), State: "page 1:312", NodeID: intp(2)},
		{Start: t0, End: t0.Add(time.Millisecond), State: "page 1:280", NodeID: intp(2)},
		{Start: t0.Add(5 * time.Millisecond), End: t0.Add(5 * time.Millisecond), State: "page 1:9"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func samplePlan(t *testing.T) data.Frames {
	t.Helper()
	fs, err := Plan([]PlanNode{
		{ID: 0, PhysicalOp: "Hash Match", LogicalOp: "Inner Join", ActualRows: 10, EstimateRows: 12, ElapsedMs: 5, Behavior: "hybrid", CPUShare: 0.7, IOShare: 0.3},
		{ID: 1, Parent: intp(0), PhysicalOp: "Clustered Index Scan", Object: "[dbo].[Orders].[PK_Orders]", ActualRows: 1000, EstimateRows: 900, ElapsedMs: 3, Behavior: "streaming", CPUShare: 0.2, IOShare: 0.8},
		{ID: 2, Parent: intp(0), PhysicalOp: "Sort", LogicalOp: "Sort", ActualRows: 50, EstimateRows: 40, ElapsedMs: 2, Behavior: "blocking", Spills: 1, CPUShare: 0.5, IOShare: 0.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestLaneSortsAndKeepsUnmatched(t *testing.T) {
	f := sampleLane(t)
	if n, _ := f.RowLen(); n != 3 {
		t.Fatalf("rows = %d", n)
	}
	if got := f.Fields[2].At(0).(string); got != "page 1:280" {
		t.Fatalf("first state = %q, want the earliest interval", got)
	}
	if f.Fields[3].At(2).(*int64) != nil {
		t.Fatal("unmatched interval got a node id")
	}
	if _, err := Lane("bad", []Interval{{Start: t0.Add(time.Second), End: t0, State: "x"}}); err == nil || !strings.Contains(err.Error(), "ends before it starts") {
		t.Fatalf("err = %v", err)
	}
}

func TestPlanEdgesReferenceNodes(t *testing.T) {
	fs := samplePlan(t)
	nodes, edges := fs[0], fs[1]
	ids := map[string]bool{}
	for i := 0; i < nodes.Fields[0].Len(); i++ {
		ids[nodes.Fields[0].At(i).(string)] = true
	}
	for i := 0; i < edges.Fields[1].Len(); i++ {
		for _, col := range []int{1, 2} {
			if id := edges.Fields[col].At(i).(string); !ids[id] {
				t.Fatalf("edge %d references missing node %s", i, id)
			}
		}
	}
	if _, err := Plan([]PlanNode{{ID: 1, Parent: intp(7)}}); err == nil {
		t.Fatal("dangling parent accepted")
	}
	if _, err := Plan([]PlanNode{{ID: 1}, {ID: 1}}); err == nil {
		t.Fatal("duplicate node accepted")
	}
}

// TestGoldenAndContract checks the frames against golden files and writes
// the wire JSON that src/contract/frames.test.ts decodes with @grafana/data.
func TestGoldenAndContract(t *testing.T) {
	cases := map[string]data.Frames{
		"lane_read": {sampleLane(t)},
		"plan":      samplePlan(t),
	}
	for name, fs := range cases {
		t.Run(name, func(t *testing.T) {
			dr := backend.DataResponse{Frames: fs}
			experimental.CheckGoldenJSONResponse(t, "testdata/golden", name, &dr, *update)

			got, err := json.MarshalIndent(fs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("..", "..", "testdata", "frames", name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("contract file: %v (run go test ./pkg/frames -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is stale: the TypeScript contract test would check old frames; run go test ./pkg/frames -update", path)
			}
		})
	}
}
