package frames

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"

	"github.com/queryreplay/queryreplay/internal/grafanarule"
	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

var update = flag.Bool("update", false, "rewrite golden files and the frame contract files")

func build(t testing.TB, src *Source, req Request) data.Frames {
	t.Helper()
	fs, err := Build(src, req)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func byName(t testing.TB, fs data.Frames, name string) *data.Frame {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no frame %q", name)
	return nil
}

func field(t testing.TB, f *data.Frame, name string) *data.Field {
	t.Helper()
	fl, _ := f.FieldByName(name)
	if fl == nil {
		t.Fatalf("frame %s has no field %q", f.Name, name)
	}
	return fl
}

func customOf(t testing.TB, f *data.Frame) map[string]any {
	t.Helper()
	c, ok := f.Meta.Custom.(custom)
	if !ok {
		t.Fatalf("frame %s: meta.custom is %T", f.Name, f.Meta.Custom)
	}
	return c
}

// writeContract writes frames as the browser receives them, for the jest
// contract test, and fails when the committed file is stale.
func writeContract(t *testing.T, name string, fs data.Frames) {
	t.Helper()
	var raw []json.RawMessage
	for _, f := range fs {
		b, err := data.FrameToJSON(f, data.IncludeAll)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
	}
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, filepath.Join("..", "..", "testdata", "frames", name+".json"), append(out, '\n'), *update)
}

func golden(t *testing.T, name string, fs data.Frames) {
	t.Helper()
	resp := backend.DataResponse{Frames: fs}
	experimental.CheckGoldenJSONResponse(t, filepath.Join("testdata", "golden"), name, &resp, *update)
}

func TestTraceResponseGolden(t *testing.T) {
	fs := build(t, sampleSource(), Request{})
	golden(t, "trace_response", fs)
	writeContract(t, "trace_response", fs)
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	want := []string{"trace", "operators", "phases", "threads", "nodes", "edges", "lane_read", "lane_write", "lane_lock", "lane_wait",
		"lane_memory", "lane_split", "lane_log", "lane_io", "pages", "log_records", "callstacks", "stack_frames", "table_io", "wait_stats"}
	if len(names) != len(want) {
		t.Fatalf("frames = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("frame %d = %s, want %s (all: %v)", i, names[i], want[i], names)
		}
	}
	for _, f := range fs {
		if customOf(t, f)["traceId"] != sampleID {
			t.Errorf("frame %s lacks meta.custom.traceId", f.Name)
		}
	}
}

func TestTraceFrameCarriesTheMeta(t *testing.T) {
	fs := build(t, sampleSource(), Request{})
	tf := byName(t, fs, "trace")
	c := customOf(t, tf)
	if c["persona"] != "box" || c["truncated"] != false || c["statement"] != sampleBundle().SQL {
		t.Fatalf("custom = %v", c)
	}
	if got := field(t, tf, "lost").At(0).(int64); got != 3 {
		t.Errorf("lost = %d, want 2 sequence gaps + 1 dropped", got)
	}
	if got := field(t, tf, "unmatched").At(0).(int64); got != 3 {
		t.Errorf("unmatched = %d, want 3", got)
	}
	zero := time.Date(2026, 11, 29, 12, 0, 0, 123000, time.UTC)
	if got := field(t, tf, "end").At(0).(time.Time); !got.Equal(zero.Add(900 * time.Microsecond)) {
		t.Errorf("end = %v", got)
	}
	if len(tf.Meta.Notices) != 2 { // lost events + the warning
		t.Errorf("notices = %+v", tf.Meta.Notices)
	}
	if got := c["options"].(map[string]any)["events"].([]string); len(got) != 6 {
		t.Errorf("options.events = %v", got)
	}
}

func TestLanesAreStateTimelineFrames(t *testing.T) {
	fs := build(t, sampleSource(), Request{MaxDataPoints: 900})
	for _, lane := range LaneNames {
		f := byName(t, fs, "lane_"+lane)
		if f.Fields[0].Name != "start" || f.Fields[1].Name != "end" || f.Fields[2].Name != "state" {
			t.Fatalf("%s: first fields %s %s %s", f.Name, f.Fields[0].Name, f.Fields[1].Name, f.Fields[2].Name)
		}
		for _, fl := range f.Fields[3:] {
			hide, _ := fl.Config.Custom["hideFrom"].(map[string]bool)
			if !hide["viz"] || hide["tooltip"] {
				t.Errorf("%s.%s is not hidden from the viz: %v", f.Name, fl.Name, fl.Config.Custom)
			}
		}
		if f.Meta.PreferredVisualizationPluginID != ReplayPanelID {
			t.Errorf("%s: preferred panel %q", f.Name, f.Meta.PreferredVisualizationPluginID)
		}
		starts := field(t, f, "startUs")
		for i := 1; i < starts.Len(); i++ {
			if starts.At(i).(int64) < starts.At(i-1).(int64) {
				t.Errorf("%s is not sorted by start", f.Name)
			}
		}
	}
	read := byName(t, fs, "lane_read")
	if n := read.Rows(); n != 4 {
		t.Fatalf("read rows = %d", n)
	}
	// window 0..900 over 900 points: one µs per step; point events are drawn 1 µs wide
	s, e := field(t, read, "start").At(0).(time.Time), field(t, read, "end").At(0).(time.Time)
	if e.Sub(s) != time.Microsecond || field(t, read, "endUs").At(0).(int64) != 30 {
		t.Errorf("point event drawn %v wide, endUs %v", e.Sub(s), field(t, read, "endUs").At(0))
	}
	if field(t, read, "nodeId").At(3).(*int64) != nil || field(t, read, "state").At(3) != "unresolved" {
		t.Error("the unmatched, unresolved read lost its nulls")
	}
	lock := byName(t, fs, "lane_lock")
	if field(t, lock, "state").At(1) != "X" || !field(t, lock, "open").At(1).(bool) || field(t, lock, "row").At(1) != "OrderID=42" {
		t.Errorf("lock row 1 = %v", lock.RowCopy(1))
	}
	wait := byName(t, fs, "lane_wait")
	if !field(t, wait, "ambiguous").At(1).(bool) || field(t, wait, "candidates").At(1) != "0,2" || field(t, wait, "nodeId").At(1).(*int64) != nil {
		t.Errorf("ambiguous wait = %v", wait.RowCopy(1))
	}
}

func TestOperatorsAndPlan(t *testing.T) {
	fs := build(t, sampleSource(), Request{})
	ops := byName(t, fs, "operators")
	// node 2: reads 320, 330; write 600; lock 700; split 610; log 605
	row := 2
	for name, want := range map[string]int64{"reads": 2, "writes": 1, "locks": 1, "splits": 1, "logRecords": 1, "matched": 6,
		"matchExact": 1, "matchStrong": 4, "matchWeak": 1} {
		if got := field(t, ops, name).At(row).(int64); got != want {
			t.Errorf("operator 2 %s = %d, want %d", name, got, want)
		}
	}
	if got := field(t, ops, "waitUs").At(1).(int64); got != 100 {
		t.Errorf("operator 1 waitUs = %d", got)
	}
	if p := field(t, ops, "actualRows").At(1).(*int64); p == nil || *p != 250 {
		t.Errorf("operator 1 actualRows = %v", p)
	}
	if p := field(t, ops, "actualRows").At(2).(*int64); p != nil {
		t.Error("operator 2 has no runtime counters but got actualRows")
	}
	nodes, edges := byName(t, fs, "nodes"), byName(t, fs, "edges")
	ids := map[string]bool{}
	for i := 0; i < nodes.Rows(); i++ {
		ids[field(t, nodes, "id").At(i).(string)] = true
		sum := 0.0
		for _, a := range arcs {
			sum += field(t, nodes, "arc__"+a.name).At(i).(float64)
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("node %d arcs sum to %v", i, sum)
		}
	}
	for i := 0; i < edges.Rows(); i++ {
		if !ids[field(t, edges, "source").At(i).(string)] || !ids[field(t, edges, "target").At(i).(string)] {
			t.Errorf("edge %d references a missing node", i)
		}
	}
	if edges.Rows() != 2 || field(t, edges, "target").At(0) != "0" {
		t.Errorf("edges = %d, first target %v", edges.Rows(), field(t, edges, "target").At(0))
	}
	if c := field(t, nodes, "arc__spills").Config.Color; c["fixedColor"] != "red" {
		t.Errorf("spill arc colour = %v", c)
	}
	th := byName(t, fs, "threads")
	if th.Rows() != 2 || field(t, th, "rows").At(1).(int64) != 4000 || field(t, th, "nodeId").At(0).(int64) != 2 {
		t.Errorf("threads = %d rows", th.Rows())
	}
	ph := byName(t, fs, "phases")
	if ph.Rows() != 3 || field(t, ph, "phase").At(0) != "build" {
		t.Errorf("phases = %d rows, first %v", ph.Rows(), field(t, ph, "phase").At(0))
	}
}

func TestPagesLogRecordsAndStacks(t *testing.T) {
	fs := build(t, sampleSource(), Request{})
	pages := byName(t, fs, "pages")
	if pages.Rows() != 3 {
		t.Fatalf("pages = %d, want 3 distinct", pages.Rows())
	}
	// sorted by page: 9, 280, 312; page 312 read twice, written once
	if field(t, pages, "pageId").At(2) != "1:312" || field(t, pages, "reads").At(2).(int64) != 2 || field(t, pages, "writes").At(2).(int64) != 1 {
		t.Errorf("page row 2 = %v", pages.RowCopy(2))
	}
	if field(t, pages, "pageType").At(0).(*string) != nil || field(t, pages, "indexLevel").At(0).(*int64) != nil {
		t.Error("page 9 has no header: its type and level are invented")
	}
	if typ, lvl := field(t, pages, "pageType").At(2).(*string), field(t, pages, "indexLevel").At(2).(*int64); typ == nil || *typ != "DATA_PAGE" || lvl == nil || *lvl != 0 {
		t.Errorf("page 312 header: %v %v", typ, lvl)
	}
	if prev, next := field(t, pages, "prevPage").At(1).(*string), field(t, pages, "nextPage").At(1).(*string); prev != nil || next == nil || *next != "1:281" {
		t.Errorf("page 280 neighbours: %v %v (it has no previous page)", prev, next)
	}
	if c := customOf(t, pages); c["pageInfo"] != true || c["headers"] != 2 {
		t.Errorf("pages meta %v", c)
	}
	if lr := byName(t, fs, "log_records"); lr.Rows() != 2 || field(t, lr, "slotId").At(1).(int64) != 4 {
		t.Errorf("log records = %d", lr.Rows())
	}
	cs := byName(t, fs, "callstacks")
	if cs.Meta.PreferredVisualization != data.VisTypeFlameGraph {
		t.Errorf("callstacks vis = %q", cs.Meta.PreferredVisualization)
	}
	// the stack table weighted by events, pre-order: root(4) → Execute(4)
	// → GetNextRow(3, self 0) → BPool::Get(3); → RtlUserThreadStart… the
	// lock's stack starts at ntdll (1) → Execute(1) → GetNextRow(1, self 1)
	wantLabels := []string{"all stacks", "sqldk!SOS_Task::Param::Execute+0x1f", "sqlmin!IndexDataSetSession::GetNextRowValuesInternal+0x2a",
		"sqlmin!BPool::Get+0x10", "ntdll+0x4b0", "sqldk!SOS_Task::Param::Execute+0x1f", "sqlmin!IndexDataSetSession::GetNextRowValuesInternal+0x2a"}
	wantLevels, wantValues, wantSelf := []int64{0, 1, 2, 3, 1, 2, 3}, []int64{4, 3, 3, 3, 1, 1, 1}, []int64{0, 0, 0, 3, 0, 0, 1}
	if cs.Rows() != len(wantLabels) {
		t.Fatalf("flame graph rows %d, want %d", cs.Rows(), len(wantLabels))
	}
	for i := range wantLevels {
		if field(t, cs, "label").At(i) != wantLabels[i] || field(t, cs, "level").At(i) != wantLevels[i] || field(t, cs, "value").At(i) != wantValues[i] || field(t, cs, "self").At(i) != wantSelf[i] {
			t.Errorf("row %d = %v", i, cs.RowCopy(i))
		}
	}
	if field(t, cs, "badge").At(3) != "BufferPool" || field(t, cs, "moduleBadge").At(3) != "Storage Engine" {
		t.Errorf("BPool::Get badges: %v", cs.RowCopy(3))
	}
	// every stack's own frames, for the selected event
	sf := byName(t, fs, "stack_frames")
	if sf.Rows() != 6 {
		t.Fatalf("stack_frames rows %d, want 3+3", sf.Rows())
	}
	want := []struct {
		stack, frame int64
		label, badge string
		infra        bool
	}{{1, 0, "sqlmin!BPool::Get+0x10", "BufferPool", false}, {1, 1, "sqlmin!IndexDataSetSession::GetNextRowValuesInternal+0x2a", "Dataset", false},
		{1, 2, "sqldk!SOS_Task::Param::Execute+0x1f", "SqlOs", true}, {2, 2, "ntdll+0x4b0", "", true}}
	rowOf := map[[2]int64]int{}
	for i := 0; i < sf.Rows(); i++ {
		rowOf[[2]int64{field(t, sf, "stackId").At(i).(int64), field(t, sf, "frame").At(i).(int64)}] = i
	}
	for _, w := range want {
		i, ok := rowOf[[2]int64{w.stack, w.frame}]
		if !ok || field(t, sf, "label").At(i) != w.label || field(t, sf, "badge").At(i) != w.badge || field(t, sf, "infrastructure").At(i) != w.infra {
			t.Errorf("stack %d frame %d: %v", w.stack, w.frame, sf.RowCopy(max(i, 0)))
		}
	}
	if i := rowOf[[2]int64{2, 2}]; field(t, sf, "unresolved").At(i) != "PDB not found on the symbol servers" || field(t, sf, "moduleBadge").At(i) != "System" {
		t.Errorf("the unresolved frame: %v", sf.RowCopy(i))
	}
	// lane rows name their own stack; the io lane has none
	read := byName(t, fs, "lane_read")
	if id := field(t, read, "stackId").At(0).(*int64); id == nil || *id != 1 {
		t.Errorf("read 0 stackId %v", id)
	}
	if id := field(t, read, "stackId").At(3).(*int64); id != nil {
		t.Errorf("read 3 (no stack) stackId %v", *id)
	}
	if cfg := field(t, read, "stackId").Config; cfg == nil || cfg.Custom["hideFrom"] == nil {
		t.Error("stackId is not hidden from the visualisation")
	}
	if id := field(t, byName(t, fs, "lane_lock"), "stackId").At(0).(*int64); id == nil || *id != 2 {
		t.Errorf("lock 0 stackId %v", id)
	}
}

func TestGroupsAndWindow(t *testing.T) {
	fs := build(t, sampleSource(), Request{Groups: []string{GroupTrace, GroupLanes}, Window: &Window{FromUs: 300, ToUs: 620}})
	if len(fs) != 1+len(LaneNames) {
		t.Fatalf("%d frames", len(fs))
	}
	if n := byName(t, fs, "lane_read").Rows(); n != 3 {
		t.Errorf("reads in 300..620 = %d, want 3 (320, 330, 500)", n)
	}
	// a window's rows keep their position in the whole lane (findings evidence ids are "<lane>/<index>")
	read := byName(t, fs, "lane_read")
	for i, want := range []int64{1, 2, 3} {
		if got := field(t, read, "index").At(i).(int64); got != want {
			t.Errorf("read row %d index = %d, want %d", i, got, want)
		}
	}
	// the wait 40..140 ends before the window; none overlaps
	if n := byName(t, fs, "lane_wait").Rows(); n != 0 {
		t.Errorf("waits = %d", n)
	}
	// the X lock 700..900 starts after it; the S lock ended at 31
	if n := byName(t, fs, "lane_lock").Rows(); n != 0 {
		t.Errorf("locks = %d", n)
	}
	fs = build(t, sampleSource(), Request{Groups: []string{GroupLanes}, Window: &Window{FromUs: 800, ToUs: 860}})
	if n := byName(t, fs, "lane_lock").Rows(); n != 1 {
		t.Errorf("a lock held across the window: rows = %d", n)
	}
	for _, bad := range []Request{{Window: &Window{FromUs: 5, ToUs: 4}}, {MaxDataPoints: -1}, {Groups: []string{"nope"}}} {
		if _, err := Build(sampleSource(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestBinnedLaneCountsEveryEntryWithinBudget(t *testing.T) {
	src := generatedSource(t, 2000, 5)
	tr := src.Bundle.Trace
	for _, budget := range []int{7, 100, 1000} {
		fs := build(t, src, Request{Groups: []string{GroupTrace, GroupLanes}, MaxDataPoints: budget})
		read := byName(t, fs, "lane_read")
		c := customOf(t, read)
		if c["binned"] != true {
			t.Fatalf("budget %d: %d reads not binned", budget, len(tr.Lanes.Read))
		}
		if read.Rows() > budget {
			t.Errorf("budget %d: %d binned rows", budget, read.Rows())
		}
		var sum int64
		width := c["binWidthUs"].(int64)
		for i := 0; i < read.Rows(); i++ {
			sum += field(t, read, "count").At(i).(int64)
			a, z := field(t, read, "startUs").At(i).(int64), field(t, read, "endUs").At(i).(int64)
			first := field(t, read, "firstUs").At(i).(int64)
			if z-a != width || first < a || first >= z {
				t.Errorf("bin %d: [%d,%d) first %d width %d", i, a, z, first, width)
			}
		}
		if sum != int64(len(tr.Lanes.Read)) {
			t.Errorf("budget %d: binned counts sum to %d, want %d", budget, sum, len(tr.Lanes.Read))
		}
		// independent count: reads of the first operator present in the first bin
		node := field(t, read, "nodeId").At(0).(*int64)
		a, z := field(t, read, "startUs").At(0).(int64), field(t, read, "endUs").At(0).(int64)
		var want int64
		wantNode := timeline.Unmatched
		if node != nil {
			wantNode = timeline.NodeID(*node)
		}
		for _, e := range tr.Lanes.Read {
			if e.T >= a && e.T < z && e.NodeID == wantNode {
				want++
			}
		}
		if got := field(t, read, "count").At(0).(int64); got != want {
			t.Errorf("budget %d: first bin count %d, recount %d", budget, got, want)
		}
		if bl := customOf(t, byName(t, fs, "trace"))["binnedLanes"].([]string); len(bl) == 0 || bl[0] != "read" {
			t.Errorf("binnedLanes = %v", bl)
		}
	}
}

func TestBinnedContract(t *testing.T) {
	src := generatedSource(t, 300, 3)
	fs := build(t, src, Request{Groups: []string{GroupLanes}, MaxDataPoints: 20})
	golden(t, "view_binned", fs[:1])
	writeContract(t, "view_binned", fs)
	// Independent of the golden: the generated plan is a hash join whose
	// build scan (node 1) reads all its pages before the probe scan (node
	// 2) reads any, and the timeline gives every read to one of them
	// (before the timeline read the profiles fired at query end as bounds,
	// the first reads stayed unmatched).
	var lastBuild, firstProbe int64 = -1, math.MaxInt64
	for _, e := range src.Bundle.Trace.Lanes.Read {
		switch e.NodeID {
		case 1:
			lastBuild = max(lastBuild, e.T)
		case 2:
			firstProbe = min(firstProbe, e.T)
		default:
			t.Errorf("read at %d µs matched %+v, want a scan", e.T, e.Match)
		}
	}
	if lastBuild < 0 || lastBuild >= firstProbe {
		t.Errorf("build scan's last read %d, probe scan's first %d: want build first", lastBuild, firstProbe)
	}
}

func TestProbeFrame(t *testing.T) {
	f, err := Probe(sampleSource())
	if err != nil {
		t.Fatal(err)
	}
	writeContract(t, "probe", data.Frames{f})
	if f.Meta.Type != data.FrameTypeNumericWide || f.Rows() != 1 {
		t.Fatalf("type %q rows %d", f.Meta.Type, f.Rows())
	}
	want := map[string]float64{"duration": 0.95, "reads": 4, "writes": 1, "spills": 1, "locks": 2, "events": 21, "lost": 3}
	for name, v := range want {
		if got := field(t, f, name).At(0).(float64); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	io := f.Fields[len(want)]
	if io.Name != "waits" || io.Labels["category"] != "Io" || io.At(0).(float64) != 0.1 {
		t.Errorf("first wait field = %s %v %v", io.Name, io.Labels, io.At(0))
	}
	checkProbeForAlerting(t, data.Frames{f})
	var names []string
	for _, fd := range f.Fields {
		if len(names) == 0 || names[len(names)-1] != fd.Name {
			names = append(names, fd.Name)
		}
	}
	if !slices.Equal(names, ProbeMetrics) {
		t.Errorf("probe metrics %v, ProbeMetrics says %v", names, ProbeMetrics)
	}
}

// checkProbeForAlerting holds a probe response to the data plane numeric
// contract and to alert evaluation's rule that every number has its own
// label set, and checks each number names its metric in a label.
func checkProbeForAlerting(t *testing.T, fs data.Frames) {
	t.Helper()
	ns, err := grafanarule.NumericContract(fs)
	if err != nil {
		t.Fatalf("data plane numeric contract: %v", err)
	}
	if _, err := grafanarule.AlertInstances(ns); err != nil {
		t.Fatalf("alert evaluation: %v", err)
	}
	for _, n := range ns {
		if n.Labels["metric"] != n.Name {
			t.Errorf("number %s has labels %v: want metric=%q", n.Name, n.Labels, n.Name)
		}
	}
}

func TestProbeMetricsSelects(t *testing.T) {
	f, err := Probe(sampleSource())
	if err != nil {
		t.Fatal(err)
	}
	sel, err := SelectProbeMetrics(f, []string{"spills", "waits"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fd := range sel.Fields {
		names = append(names, fd.Name)
	}
	if strings.Join(names, ",") != "spills,waits,waits,waits,waits,waits" || sel.Meta.Type != data.FrameTypeNumericWide {
		t.Errorf("selected %v (%s)", names, sel.Meta.Type)
	}
	checkProbeForAlerting(t, data.Frames{sel})
	if all, err := SelectProbeMetrics(f, nil); err != nil || len(all.Fields) != len(f.Fields) {
		t.Errorf("no selection keeps every number: %v", err)
	}
	for _, bad := range [][]string{{"nosuch"}, {"reads", "reads"}, {""}} {
		if _, err := SelectProbeMetrics(f, bad); err == nil {
			t.Errorf("metrics %q accepted", bad)
		}
	}
}

func TestFrameJSONHasNoSecretsOrSurprises(t *testing.T) {
	fs := build(t, sampleSource(), Request{})
	b, err := json.Marshal(fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"password", "Password", "secret"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("frames mention %q", s)
		}
	}
}

// A Source's own call tree replaces the stack table's in the Flame Graph;
// the per-stack frames still come from the table.
func TestSourceStacksOverrideTheFlameGraph(t *testing.T) {
	src := sampleSource()
	src.Stacks = sampleStacks()
	fs := build(t, src, Request{Groups: []string{GroupCallStacks}})
	if len(fs) != 2 || fs[0].Name != "callstacks" || fs[1].Name != "stack_frames" {
		t.Fatalf("frames %v", fs)
	}
	if fs[0].Rows() != 4 || field(t, fs[0], "value").At(0) != int64(4) {
		t.Fatalf("flame graph of the given tree: %d rows", fs[0].Rows())
	}
	src.Bundle.Trace.Stacks = nil
	src.Stacks = nil
	for _, f := range build(t, src, Request{}) {
		if f.Name == "callstacks" || f.Name == "stack_frames" {
			t.Errorf("a trace without stacks returns %s", f.Name)
		}
	}
}

// TestPagesFrameKeepsToTheBudget: the pages frame holds at most
// maxDataPoints rows, the most touched pages, and says how many there were
// (issue 25 item 7: 200,000 rows on a 1M-event trace whatever the budget).
func TestPagesFrameKeepsToTheBudget(t *testing.T) {
	src := generatedSource(t, 3000, 3)
	all := byName(t, build(t, src, Request{MaxDataPoints: 1_000_000, Groups: []string{GroupPages}}), "pages")
	total := all.Rows()
	if total < 1000 {
		t.Fatalf("the generated trace touches %d pages; the test needs more than the budget", total)
	}
	f := byName(t, build(t, src, Request{MaxDataPoints: 200, Groups: []string{GroupPages}}), "pages")
	if f.Rows() != 200 {
		t.Fatalf("pages frame has %d rows with a budget of 200", f.Rows())
	}
	c := customOf(t, f)
	if fmt.Sprint(c["pagesTotal"]) != fmt.Sprint(total) || fmt.Sprint(c["pagesShown"]) != "200" {
		t.Errorf("meta says %v of %v pages; want 200 of %d", c["pagesShown"], c["pagesTotal"], total)
	}
	// the kept pages are the most touched: none left out was touched more
	minKept := int64(1 << 62)
	reads, writes := field(t, f, "reads"), field(t, f, "writes")
	for i := range f.Rows() {
		minKept = min(minKept, reads.At(i).(int64)+writes.At(i).(int64))
	}
	kept := map[string]bool{}
	for i := range f.Rows() {
		kept[field(t, f, "pageId").At(i).(string)] = true
	}
	for i := range all.Rows() {
		if id := field(t, all, "pageId").At(i).(string); !kept[id] && field(t, all, "reads").At(i).(int64)+field(t, all, "writes").At(i).(int64) > minKept {
			t.Fatalf("page %s was left out but touched more than a kept page", id)
		}
	}
}

// Whatever metrics list a query sends, the probe either refuses it or
// returns numbers that still satisfy the data plane contract and alerting's
// uniqueness rule.
func FuzzSelectProbeMetrics(f *testing.F) {
	f.Add("duration")
	f.Add("spills,waits")
	f.Add("reads,reads")
	f.Add("nosuch,,")
	f.Fuzz(func(t *testing.T, list string) {
		p, err := Probe(sampleSource())
		if err != nil {
			t.Fatal(err)
		}
		metrics := strings.Split(list, ",")
		sel, err := SelectProbeMetrics(p, metrics)
		if err != nil {
			return
		}
		if len(sel.Fields) == 0 {
			t.Fatalf("metrics %q accepted with no number", metrics)
		}
		checkProbeForAlerting(t, data.Frames{sel})
	})
}
