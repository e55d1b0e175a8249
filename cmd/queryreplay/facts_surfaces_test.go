package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/compare"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Issue 26, "Done when": every surface shows the same number for the same
// fact. Each demo scenario is traced once with the real tracer against the
// stand-in; its reads of each kind, elapsed time, time waited and operator
// names are then read back from the terminal replay's text, the bundle
// file's JSON, the frames, the findings and a comparison of the trace with
// itself, and must agree with each other.
func TestSameFactsOnEverySurface(t *testing.T) {
	srv := startTraceStandin(t)
	for _, sc := range standin.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			run := traceNamed(t, srv, sc.Name)
			// the procedure scenario is the split batch: its headline must be the batch's
			if _, n, ok := findings.BatchFacts(run.bundle); sc.Name == "procedure_nested" && (!ok || n < 3) {
				t.Errorf("procedure_nested: batch facts ok=%v over %d statements, want a split batch", ok, n)
			}
			checkSurfacesAgree(t, run)
		})
	}
}

// checkBatchFacts checks a split batch's headline against another path:
// the statements frame's rows (each node's waits and events) and the sum
// of each statement's own profile.
func checkBatchFacts(t *testing.T, b *bundle.Bundle, bf findings.Facts, n int) {
	t.Helper()
	fr, err := frames.Build(&frames.Source{TraceID: "t", Bundle: b}, frames.Request{})
	if err != nil {
		t.Fatal(err)
	}
	sf := frameNamed(t, fr, "statements")
	var waitUs int64
	statements := 0
	for i := 0; i < sf.Rows(); i++ {
		waitUs += intAt(t, sf, "waitUs", i)
		if fieldNamed(t, sf, "kind").At(i).(string) == "statement" {
			statements++
		}
	}
	if waitUs != bf.WaitUs || statements != n {
		t.Errorf("batch facts: %d µs waited in %d statements; the statements frame says %d µs in %d", bf.WaitUs, n, waitUs, statements)
	}
	var logical int64
	for _, st := range b.Statements {
		if st.Plan != "" && st.Trace != nil {
			logical += statementProfile(st).LogicalReads
		}
	}
	if bf.HasCounters && bf.LogicalReads != logical {
		t.Errorf("batch logical reads %d, statements' plans %d", bf.LogicalReads, logical)
	}
	if bf.ElapsedUs != b.Trace.Summary.ElapsedUs {
		t.Errorf("batch elapsed %d, the batch's %d", bf.ElapsedUs, b.Trace.Summary.ElapsedUs)
	}
}

func checkSurfacesAgree(t *testing.T, run *scenarioRun) {
	b := run.bundle
	prof := findings.NewProfile(b.Trace, run.in.Plan)
	want := prof.Facts()

	// Terminal replay.
	var buf bytes.Buffer
	writeReplay(&buf, "facts", "", b, replayOptions{Width: 30})
	text := buf.String()
	// a batch split into statements heads its replay with the whole batch's
	// figures, labelled (issue 30); else the one statement's
	head, label := want, ""
	if bf, n, ok := findings.BatchFacts(b); ok {
		head, label = bf, batchLabel(n)
		checkBatchFacts(t, b, bf, n)
	}
	for _, line := range []string{"Time" + label + ": " + head.TimeText(), "Reads" + label + ": " + head.ReadsText(),
		"Waits" + label + ": " + head.WaitsText(), fmt.Sprintf("%.1f ms elapsed", float64(want.ElapsedUs)/1000)} {
		if !strings.Contains(text, line) {
			t.Errorf("terminal lacks %q:\n%s", line, text)
		}
	}

	// The bundle as saved: its JSON says the same elapsed time and waits.
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var saved bundle.Bundle
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	sf := findings.FactsOf(saved.Trace, want.HasCounters, want.LogicalReads, want.PhysicalReads, want.ReadAheads)
	if sf.ElapsedUs != want.ElapsedUs || sf.WaitUs != want.WaitUs || sf.PageReads != want.PageReads || sf.LeadInUs != want.LeadInUs {
		t.Errorf("bundle JSON facts %+v, want %+v", sf, want)
	}
	if m := regexp.MustCompile(`"durationUs":0,"durationSource":"events"`).Find(raw); m != nil {
		for _, w := range saved.Trace.Lanes.Wait {
			if w.DurationSource == "events" && w.End > w.T && w.DurationUs == 0 {
				t.Errorf("bundle wait %+v: measured, yet 0 µs", w)
			}
		}
	}

	// Frames.
	fr, err := frames.Build(&frames.Source{TraceID: "t", Bundle: b, Runtime: runtimeOf(run.in.Plan)}, frames.Request{})
	if err != nil {
		t.Fatal(err)
	}
	tf, of := frameNamed(t, fr, "trace"), frameNamed(t, fr, "operators")
	if got := intAt(t, tf, "durationUs", 0); got != want.ElapsedUs {
		t.Errorf("trace frame elapsed %d, want %d", got, want.ElapsedUs)
	}
	if got := intAt(t, tf, "pageReads", 0); got != int64(want.PageReads) {
		t.Errorf("trace frame page reads %d, want %d", got, want.PageReads)
	}
	if got := intAt(t, tf, "waitUs", 0); got != want.WaitUs {
		t.Errorf("trace frame waits %d µs, want %d", got, want.WaitUs)
	}
	if want.HasCounters {
		if got := intAt(t, tf, "logicalReads", 0); got != want.LogicalReads {
			t.Errorf("trace frame logical reads %d, want %d", got, want.LogicalReads)
		}
	}
	if want.HasCounters {
		if got := intAt(t, tf, "readAheads", 0); got != want.ReadAheads {
			t.Errorf("trace frame read-ahead reads %d, want %d", got, want.ReadAheads)
		}
	}
	// the summaries (issue 28): Wait Stats add up to the time waited, Table
	// I/O's logical reads to the plan's, and the terminal names each wait
	// type with its time
	ws := frameNamed(t, fr, "wait_stats")
	var waitSum int64
	for i := 0; i < ws.Rows(); i++ {
		us := intAt(t, ws, "waitUs", i)
		waitSum += us
		line := fmt.Sprintf("%s ×%d (%.2f ms", fieldNamed(t, ws, "waitType").At(i).(string), intAt(t, ws, "waits", i), float64(us)/1000)
		if i < 5 && !strings.Contains(text, line) {
			t.Errorf("terminal top waits lack %q", line)
		}
	}
	if waitSum != want.WaitUs {
		t.Errorf("wait_stats total %d µs, facts %d", waitSum, want.WaitUs)
	}
	if want.HasCounters {
		tio := frameNamed(t, fr, "table_io")
		var logical int64
		for i := 0; i < tio.Rows(); i++ {
			if p := fieldNamed(t, tio, "logicalReads").At(i).(*int64); p != nil {
				logical += *p
			}
		}
		if logical > want.LogicalReads {
			t.Errorf("table_io logical reads %d exceed the plan's %d", logical, want.LogicalReads)
		}
	}
	// meta.custom as the panel reads it: JSON
	var custom struct {
		Facts map[string]any `json:"facts"`
	}
	if js, err := json.Marshal(tf.Meta.Custom); err != nil || json.Unmarshal(js, &custom) != nil {
		t.Fatalf("trace frame meta: %v", err)
	}
	facts := custom.Facts
	if facts["reads"] != want.ReadsText() || facts["time"] != want.TimeText() {
		t.Errorf("frame facts %v", facts)
	}

	// Findings: the reads finding names its kind and counts the same reads.
	if f := findingNamed(run.report, "reads-concentrated"); f != nil {
		kind := "page reads in the trace"
		if want.HasCounters && want.LogicalReads > 0 {
			kind = "logical reads"
		}
		if !strings.Contains(f.Title, "of the "+kind+": ") {
			t.Errorf("finding %q does not say %s", f.Title, kind)
		}
		total := numberNamed(f, "totalReads")
		if kind == "logical reads" && int64(total) != want.LogicalReads || kind != "logical reads" && int(total) != want.PageReads {
			t.Errorf("finding counts %v %s, facts %+v", total, kind, want)
		}
	}

	// Compare, the trace with itself: the same elapsed, operator time,
	// reads and waits, each labelled.
	r, err := compare.Compare(compare.Side{Label: "a", Trace: b.Trace, Plan: run.in.Plan}, compare.Side{Label: "b", Trace: b.Trace, Plan: run.in.Plan})
	if err != nil {
		t.Fatal(err)
	}
	reads := float64(want.PageReads)
	if r.ReadsSource == "logical" {
		reads = float64(want.LogicalReads)
	}
	for name, v := range map[string]float64{"durationUs": float64(want.ElapsedUs), "operatorUs": float64(want.OperatorUs),
		"reads": reads, "pageReads": float64(want.PageReads), "waitUs": float64(want.WaitUs)} {
		m, ok := compareMetric(r, name)
		if !ok || m.A == nil || *m.A != v || m.Label == "" {
			t.Errorf("compare %s = %+v, want %v, labelled", name, m, v)
		}
	}

	// Operator names: the plan's display name everywhere.
	names := map[int64]string{}
	ids, nameField := fieldNamed(t, of, "nodeId"), fieldNamed(t, of, "name")
	for i := 0; i < of.Rows(); i++ {
		names[ids.At(i).(int64)] = nameField.At(i).(string)
	}
	for _, o := range b.Trace.Operators {
		po := run.in.Plan.OperatorByID(o.ID)
		if po == nil {
			continue
		}
		if o.DisplayName() != po.DisplayName || names[int64(o.ID)] != po.DisplayName || prof.Op(o.ID).Name == "" ||
			!strings.HasPrefix(prof.Op(o.ID).Name, po.DisplayName) {
			t.Errorf("node %d named %q (trace) %q (frames) %q (findings), plan %q", o.ID, o.DisplayName(), names[int64(o.ID)], prof.Op(o.ID).Name, po.DisplayName)
		}
		// the terminal's row (its name column clips long labels)
		if label := []rune(operatorLabel(o)); !o.NotExecuted && !strings.Contains(text, string(label[:min(len(label), 30)])) {
			t.Errorf("terminal lacks %q", string(label))
		}
		if po.IsKeyLookup && (o.DisplayName() != "Key Lookup" || strings.Contains(text, "Clustered Index Seek dbo.Orders.PK_Orders")) {
			t.Errorf("key lookup node %d shown as %q", o.ID, o.DisplayName())
		}
	}
	for _, d := range r.Operators {
		if po := run.in.Plan.OperatorByID(d.A.NodeID); po != nil && !strings.HasPrefix(d.A.Name, po.DisplayName) {
			t.Errorf("compare names node %d %q, plan %q", d.A.NodeID, d.A.Name, po.DisplayName)
		}
	}
}

// runtimeOf is the per-operator counters the plugin gives the frames.
func runtimeOf(st *showplan.Statement) map[int]frames.Runtime {
	if st == nil {
		return nil
	}
	out := map[int]frames.Runtime{}
	for _, op := range st.Operators {
		var r frames.Runtime
		if a := op.Actual; a != nil {
			lr, pr, ra := a.LogicalReads, a.PhysicalReads, a.ReadAheads
			r.LogicalReads, r.PhysicalReads, r.ReadAheads = &lr, &pr, &ra
		}
		out[op.NodeID] = r
	}
	return out
}

func frameNamed(t *testing.T, fr data.Frames, name string) *data.Frame {
	t.Helper()
	for _, f := range fr {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no %s frame", name)
	return nil
}

func fieldNamed(t *testing.T, f *data.Frame, name string) *data.Field {
	t.Helper()
	for _, fl := range f.Fields {
		if fl.Name == name {
			return fl
		}
	}
	t.Fatalf("frame %s has no field %s", f.Name, name)
	return nil
}

func intAt(t *testing.T, f *data.Frame, name string, row int) int64 {
	t.Helper()
	switch v := fieldNamed(t, f, name).At(row).(type) {
	case int64:
		return v
	case *int64:
		if v == nil {
			return -1
		}
		return *v
	}
	t.Fatalf("field %s is not an integer", name)
	return 0
}

func findingNamed(r *findings.Report, rule string) *findings.Finding {
	for i := range r.Findings {
		if r.Findings[i].Rule == rule {
			return &r.Findings[i]
		}
	}
	return nil
}

func numberNamed(f *findings.Finding, name string) float64 {
	for _, n := range f.Numbers {
		if n.Name == name {
			return n.Value
		}
	}
	return -1
}

func compareMetric(r *compare.Result, name string) (compare.Metric, bool) {
	for _, m := range r.Statement {
		if m.Name == name {
			return m, true
		}
	}
	return compare.Metric{}, false
}
