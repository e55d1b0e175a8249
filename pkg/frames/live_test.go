package frames

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

func liveEvents(t *testing.T, f *data.Frame) LiveEvents {
	t.Helper()
	ev, ok := f.Meta.Custom.(map[string]any)["events"].(LiveEvents)
	if !ok {
		t.Fatalf("meta.custom.events is %T", f.Meta.Custom.(map[string]any)["events"])
	}
	return ev
}

func sum(v []int64) (n int64) {
	for _, x := range v {
		n += x
	}
	return n
}

// A few events travel one by one, as read back.
func TestLiveRawWhenFew(t *testing.T) {
	l := NewLive()
	l.Add(tracer.LiveUpdate{Seq: 1, Elapsed: time.Second, Running: true, EventsSoFar: 3,
		Operators: []tracer.OperatorProgress{{NodeID: 0, PhysicalOp: "Hash Match", State: "running", Rows: 10, EstimateRows: 100, LogicalReads: 7, PhysicalReads: 2, ElapsedMs: 900, CPUMs: 400, Threads: 1}},
		Events: []tracer.LiveEvent{{TUs: 5, Lane: "read", Name: "physical_page_read", Object: "dbo.Orders", Detail: "1:240"},
			{TUs: 7, Lane: "lock", Name: "lock_acquired", Detail: "S"}, {TUs: 9, Lane: "wait", Name: "wait_completed", DurationUs: 300, Detail: "PAGEIOLATCH_SH"}}})
	f := l.Frame()
	ev := liveEvents(t, f)
	if ev.Mode != "raw" || len(ev.TUs) != 3 || ev.Detail[0] != "1:240" || ev.Lane[2] != "wait" || ev.BusyUs[2] != 300 || sum(ev.Count) != 3 {
		t.Fatalf("events = %+v", ev)
	}
	for name, want := range map[string]int64{"actualRows": 10, "estimatedRows": 100, "logicalReads": 7, "physicalReads": 2, "actualElapsedMs": 900, "actualCpuMs": 400} {
		fld, _ := f.FieldByName(name)
		if fld == nil || fld.At(0).(int64) != want {
			t.Errorf("%s = %v, want %d", name, fld, want)
		}
	}
	if st, _ := f.FieldByName("state"); st == nil || st.At(0) != "running" {
		t.Errorf("state field: %v", st)
	}
	if s := l.Status(); !s.Running || s.Done || s.EventsSoFar != 3 || s.ElapsedMs != 1000 {
		t.Errorf("status = %+v", s)
	}
}

// Many events are binned per lane and time bucket: every event counted,
// the rows bounded, however many events there were.
func TestLiveBinnedWhenMany(t *testing.T) {
	l := NewLive()
	const n = 120_000
	lanes := []string{"read", "lock", "wait", "nonsense"}
	per := map[string]int64{}
	for seq := 1; seq <= 12; seq++ {
		var evs []tracer.LiveEvent
		for i := 0; i < n/12; i++ {
			k := (seq-1)*(n/12) + i
			lane := lanes[k%len(lanes)]
			evs = append(evs, tracer.LiveEvent{TUs: int64(k) * 100, Lane: lane, Name: "x", DurationUs: 3})
			if lane == "nonsense" {
				lane = "other"
			}
			per[lane]++
		}
		l.Add(tracer.LiveUpdate{Seq: seq, Running: true, Events: evs, EventsSoFar: int64(seq * n / 12)})
	}
	ev := liveEvents(t, l.Frame())
	if ev.Mode != "binned" || ev.BucketUs < 1000 {
		t.Fatalf("mode %s bucket %d", ev.Mode, ev.BucketUs)
	}
	if len(ev.TUs) > MaxLiveBuckets*(MaxLiveLanes+1) {
		t.Fatalf("%d rows for %d events", len(ev.TUs), n)
	}
	got := map[string]int64{}
	var busy int64
	for i, lane := range ev.Lane {
		got[lane] += ev.Count[i]
		busy += ev.BusyUs[i]
		if ev.TUs[i]%ev.BucketUs != 0 || ev.DurationUs[i] != ev.BucketUs {
			t.Fatalf("row %d: tUs %d duration %d bucket %d", i, ev.TUs[i], ev.DurationUs[i], ev.BucketUs)
		}
		if ev.TUs[i] > int64(n)*100 {
			t.Fatalf("row %d starts after the last event", i)
		}
	}
	for lane, want := range per {
		if got[lane] != want {
			t.Errorf("lane %s: %d events binned, want %d", lane, got[lane], want)
		}
	}
	if busy != 3*n {
		t.Errorf("busy %d, want %d", busy, 3*n)
	}
}

// Whatever the producer sends, one live frame stays under
// MaxLiveFrameBytes: the most operators, the largest plan kept, the most
// raw events with the longest texts.
func TestLiveFrameBounded(t *testing.T) {
	long := strings.Repeat("é", 4*MaxLiveText)
	ops := make([]tracer.OperatorProgress, 5*MaxLiveOperators)
	for i := range ops {
		ops[i] = tracer.OperatorProgress{NodeID: i, PhysicalOp: long, Object: long, State: long, Rows: 1 << 60, EstimateRows: 1 << 60}
	}
	evs := make([]tracer.LiveEvent, MaxLiveRaw)
	for i := range evs {
		evs[i] = tracer.LiveEvent{TUs: 1 << 60, Lane: long, Name: long, Object: long, Detail: long, DurationUs: 1 << 60}
	}
	l := NewLive()
	l.Add(tracer.LiveUpdate{Seq: 1, Running: true, PlanXML: strings.Repeat("x", MaxLivePlanBytes), Operators: ops, Events: evs})
	f := l.Frame()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxLiveFrameBytes {
		t.Fatalf("a live frame of %d bytes, over %d", len(b), MaxLiveFrameBytes)
	}
	if f.Rows() != MaxLiveOperators {
		t.Errorf("%d operator rows, want %d", f.Rows(), MaxLiveOperators)
	}
	// a plan over the bound is left out and said so
	l.Add(tracer.LiveUpdate{Seq: 2, Running: true, PlanXML: strings.Repeat("x", MaxLivePlanBytes+1)})
	c := l.Frame().Meta.Custom.(map[string]any)
	if _, ok := c["planXml"]; ok || !l.Status().PlanOmitted {
		t.Error("a plan over MaxLivePlanBytes was sent")
	}
}

// The end says where the finished replay is.
func TestLiveFinish(t *testing.T) {
	l := NewLive()
	l.Add(tracer.LiveUpdate{Seq: 1, Running: true, PlanXML: "<ShowPlanXML/>"})
	l.Add(tracer.LiveUpdate{Seq: 2, Running: false})
	l.Finish("abc123", nil)
	f := l.Frame()
	c := f.Meta.Custom.(map[string]any)
	st := c["live"].(LiveStatus)
	if !st.Done || st.Running || st.TraceID != "abc123" || st.Seq != 2 {
		t.Fatalf("status %+v", st)
	}
	if c["planXml"] != "<ShowPlanXML/>" {
		t.Error("the plan sent once is not kept in later frames")
	}
	if f.Name != LiveFrameName {
		t.Errorf("frame %q", f.Name)
	}
}

func FuzzLiveAdd(f *testing.F) {
	f.Add(int64(0), int64(0), "read", 10, int64(1))
	f.Add(int64(-5), int64(-1), "x", 3000, int64(1<<40))
	f.Add(int64(1<<62), int64(1<<62), "wait", 1500, int64(7))
	f.Fuzz(func(t *testing.T, t0, dur int64, lane string, n int, step int64) {
		n = min(max(n, 0), 3*MaxLiveRaw)
		l := NewLive()
		evs := make([]tracer.LiveEvent, n)
		for i := range evs {
			evs[i] = tracer.LiveEvent{TUs: t0 + int64(i)*step, Lane: lane, DurationUs: dur}
		}
		l.Add(tracer.LiveUpdate{Seq: 1, Running: true, Events: evs})
		ev := liveEvents(t, l.Frame())
		if c := sum(ev.Count); c != int64(n) {
			t.Fatalf("%d events counted, %d added", c, n)
		}
		if len(ev.TUs) > max(MaxLiveRaw, MaxLiveBuckets*(MaxLiveLanes+1)) {
			t.Fatalf("%d rows", len(ev.TUs))
		}
	})
}

// liveStream is three live frames of one trace, as a stream sends them:
// testdata/live_stream.json, which the panel's tests read (Grafana's
// StreamingDataFrame replaces each with the next).
func liveStream() []*data.Frame {
	l := NewLive()
	plan := `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan"><BatchSequence><Batch><Statements><StmtSimple><QueryPlan>` +
		`<RelOp NodeId="0" PhysicalOp="Hash Match"><Hash><RelOp NodeId="1" PhysicalOp="Clustered Index Scan"/><RelOp NodeId="2" PhysicalOp="Clustered Index Scan"/></Hash></RelOp>` +
		`</QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`
	ops := func(rows0, rows1, rows2 int64, s0, s1, s2 string) []tracer.OperatorProgress {
		return []tracer.OperatorProgress{
			{NodeID: 0, PhysicalOp: "Hash Match", State: s0, Rows: rows0, EstimateRows: 500, LogicalReads: 0, ElapsedMs: 900, CPUMs: 300, Threads: 1},
			{NodeID: 1, PhysicalOp: "Clustered Index Scan", Object: "dbo.Customers.PK_Customers", State: s1, Rows: rows1, EstimateRows: 100, LogicalReads: 12, PhysicalReads: 3, ElapsedMs: 400, CPUMs: 100, Threads: 1},
			{NodeID: 2, PhysicalOp: "Clustered Index Scan", Object: "dbo.Orders.PK_Orders", State: s2, Rows: rows2, EstimateRows: 5000, LogicalReads: 40, PhysicalReads: 9, ElapsedMs: 300, CPUMs: 120, Threads: 1},
		}
	}
	var out []*data.Frame
	l.Add(tracer.LiveUpdate{Seq: 1, Elapsed: 1100 * time.Millisecond, Running: true, PlanXML: plan, Operators: ops(0, 100, 0, "running", "done", "waiting"), EventsSoFar: 2,
		Events: []tracer.LiveEvent{{TUs: 1200, Lane: "read", Name: "physical_page_read", Object: "dbo.Customers", Detail: "1:240"}, {TUs: 5300, Lane: "lock", Name: "lock_acquired", Detail: "S"}}})
	out = append(out, l.Frame())
	l.Add(tracer.LiveUpdate{Seq: 2, Elapsed: 2100 * time.Millisecond, Running: true, Operators: ops(120, 100, 2400, "running", "done", "running"), EventsSoFar: 3,
		Events: []tracer.LiveEvent{{TUs: 1_800_000, Lane: "wait", Name: "wait_completed", DurationUs: 4000, Detail: "PAGEIOLATCH_SH"}}})
	out = append(out, l.Frame())
	l.Add(tracer.LiveUpdate{Seq: 3, Elapsed: 2600 * time.Millisecond, Running: false, Operators: ops(480, 100, 5000, "done", "done", "done"), EventsSoFar: 3})
	l.Finish("0190d5c2a0e87c3b9a51e2f4c6d8b0a1", nil)
	return append(out, l.Frame())
}

func TestLiveStreamFile(t *testing.T) {
	b, err := json.MarshalIndent(liveStream(), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "live_stream.json")
	if *update {
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./pkg/frames -run TestLiveStreamFile -update writes it)", err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(b)) {
		t.Fatalf("%s differs from the live frames (rewrite with -update and check the panel's tests)", path)
	}
}
