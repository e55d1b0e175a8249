package frames

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/compare"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// findingsSource is the sample trace with its findings: the sample's
// lost events (the bundle's), and reads concentrated in the Orders scan.
func findingsSource(t *testing.T) *Source {
	t.Helper()
	src := sampleSource()
	tr := src.Bundle.Trace
	for i := range 150 {
		tr.Lanes.Read = append(tr.Lanes.Read, timeline.PageEvent{T: 320 + int64(i), Match: timeline.Match{NodeID: 2, Rule: timeline.RuleObject, Confidence: timeline.ConfidenceStrong}})
	}
	for i := range 10 {
		tr.Lanes.Read = append(tr.Lanes.Read, timeline.PageEvent{T: 30 + int64(i), Match: timeline.Match{NodeID: 1, Rule: timeline.RuleObject, Confidence: timeline.ConfidenceStrong}})
	}
	slices.SortStableFunc(tr.Lanes.Read, func(a, b timeline.PageEvent) int { return int(a.T - b.T) })
	cfg := findings.DefaultConfig()
	cfg.MaxEvidence = 20 // keeps the golden file small; evidenceTotal counts all
	cfg.MinReads = 100   // the sample reads 164 pages: below the production floor
	rep, err := findings.Analyze(findings.FromBundle(src.Bundle, nil), cfg)
	if err != nil {
		t.Fatal(err)
	}
	src.Findings = rep
	return src
}

func TestFindingsFrame(t *testing.T) {
	src := findingsSource(t)
	fs := build(t, src, Request{Groups: []string{GroupTrace, GroupFindings}})
	if len(fs) != 2 || fs[0].Name != "trace" || fs[1].Name != "findings" {
		t.Fatalf("frames %v", names(fs))
	}
	f := fs[1]
	rep := src.Findings
	if n, _ := f.RowLen(); n != len(rep.Findings) || n < 2 {
		t.Fatalf("%d rows for %d findings", n, len(rep.Findings))
	}
	for i, want := range rep.Findings {
		if got := field(t, f, "rule").At(i).(string); got != want.Rule {
			t.Errorf("row %d rule %s, want %s", i, got, want.Rule)
		}
		if got := field(t, f, "title").At(i).(string); got != want.Title {
			t.Errorf("row %d title %q", i, got)
		}
		var ev []findings.EventRef
		if err := json.Unmarshal(field(t, f, "evidence").At(i).(json.RawMessage), &ev); err != nil || len(ev) != len(want.Evidence) {
			t.Errorf("row %d evidence %v %v", i, ev, err)
		}
	}
	// reads-concentrated: the Orders scan (node 2), its reads' span on the
	// trace's clock.
	var row = -1
	for i, fd := range rep.Findings {
		if fd.Rule == "reads-concentrated" {
			row = i
		}
	}
	if row < 0 {
		t.Fatalf("no reads-concentrated finding: %+v", rep.Findings)
	}
	if id := field(t, f, "primaryNodeId").At(row).(*int64); id == nil || *id != 2 {
		t.Errorf("primaryNodeId %v", id)
	}
	zero, _ := time.Parse(time.RFC3339Nano, src.Bundle.Trace.ZeroTime)
	if st := field(t, f, "start").At(row).(*time.Time); st == nil || !st.Equal(zero.Add(320*time.Microsecond)) {
		t.Errorf("start %v", st)
	}
	if l := field(t, f, "reference").Config.Links; len(l) != 1 || l[0].URL != "${__value.raw}" {
		t.Errorf("reference links %+v", l)
	}
	c := customOf(t, f)
	if c["traceId"] != sampleID || c["counts"].(map[string]int)["warning"] == 0 || c["config"].(findings.Config) != rep.Config {
		t.Errorf("meta %+v", c)
	}
	// Without a report there is no findings frame, whatever the groups.
	plain := sampleSource()
	if fs := build(t, plain, Request{}); slices.Contains(names(fs), "findings") {
		t.Error("findings frame without findings")
	}
	all := build(t, src, Request{})
	if names(all)[1] != "findings" {
		t.Errorf("order %v", names(all))
	}
	golden(t, "findings", data.Frames{f})
	writeContract(t, "findings", data.Frames{f})
}

func names(fs data.Frames) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// The compare response of the sample against a copy whose Orders scan is
// a seek reading far fewer pages.
func TestCompareFrames(t *testing.T) {
	a := findingsSource(t)
	b := findingsSource(t)
	b.TraceID = "0190d5c2a0e87c3b9a51e2f4c6d8b0a2"
	bt := *b.Bundle.Trace
	bt.ZeroTime = "2026-11-30T08:00:00Z"
	bt.Operators = slices.Clone(bt.Operators)
	bt.Operators[2].PhysicalOp, bt.Operators[2].LogicalOp, bt.Operators[2].Object = "Index Seek", "Index Seek", "[dbo].[Orders].[IX_Orders_CustomerID]"
	bt.Lanes.Read = slices.DeleteFunc(slices.Clone(bt.Lanes.Read), func(e timeline.PageEvent) bool { return e.NodeID == 2 && e.T > 330 })
	bb := *b.Bundle
	bb.Trace = &bt
	b.Bundle = &bb
	res, err := compare.Compare(compare.Side{Label: "a", Trace: a.Bundle.Trace}, compare.Side{Label: "b", Trace: b.Bundle.Trace})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Compare(a, b, res, Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"compare", "compare_operators"}
	for _, s := range []string{"a", "b"} {
		for _, n := range []string{"trace", "operators", "phases", "threads", "lane_read", "lane_write", "lane_lock", "lane_wait", "lane_memory", "lane_split", "lane_log", "lane_io"} {
			want = append(want, n+"_"+s)
		}
	}
	if !slices.Equal(names(fs), want) {
		t.Fatalf("frames %v\nwant %v", names(fs), want)
	}
	sum := fs[0]
	if v := field(t, sum, "verdict").At(0).(string); v != res.Verdict || field(t, sum, "replaced").At(0).(int64) != 1 {
		t.Errorf("summary verdict %q", v)
	}
	ops := fs[1]
	// One wait column per category of the shared wait table, as the probe
	// frame has them (Other included).
	for _, c := range WaitCategories {
		field(t, ops, "wait"+c+"UsA")
	}
	var row = -1
	for i := range ops.Rows() {
		if field(t, ops, "status").At(i).(string) == compare.StatusReplaced {
			row = i
		}
	}
	count := func(tr *timeline.Trace) (n float64) {
		for _, e := range tr.Lanes.Read {
			if e.NodeID == 2 {
				n++
			}
		}
		return n
	}
	ca, cb := count(a.Bundle.Trace), count(b.Bundle.Trace)
	if row < 0 || field(t, ops, "verdict").At(row).(string) != fmt.Sprintf("Index Seek replaced Clustered Index Scan: page reads in the trace %v → %v", ca, cb) {
		t.Fatalf("replaced row %d: %v", row, field(t, ops, "verdict").At(max(row, 0)))
	}
	if a, b := field(t, ops, "readsA").At(row).(*float64), field(t, ops, "readsB").At(row).(*float64); *a != ca || *b != cb || !field(t, ops, "readsChanged").At(row).(bool) {
		t.Errorf("reads %v → %v", *a, *b)
	}
	if field(t, ops, "rowsA").At(row).(*float64) != nil {
		t.Error("rows without runtime counters should be null")
	}
	// B's lanes are on A's clock: the same µs gives the same time.
	ra, rb := byName(t, fs, "lane_read_a"), byName(t, fs, "lane_read_b")
	if ta, tb := field(t, ra, "start").At(0).(time.Time), field(t, rb, "start").At(0).(time.Time); !ta.Equal(tb) {
		t.Errorf("first read: a %v, b %v: not on one axis", ta, tb)
	}
	if customOf(t, rb)["side"] != "b" || customOf(t, rb)["traceId"] != b.TraceID {
		t.Errorf("side meta %+v", customOf(t, rb))
	}
	if b.Bundle.Trace.ZeroTime != "2026-11-30T08:00:00Z" {
		t.Error("the stored trace was modified")
	}
	// The sides are Build's own frames (golden in trace_response).
	golden(t, "compare_response", fs[:2])
	writeContract(t, "compare_response", fs[:2])
	if _, err := Compare(a, &Source{TraceID: "x"}, res, Request{}); err == nil {
		t.Error("a side without a trace accepted")
	}
}
