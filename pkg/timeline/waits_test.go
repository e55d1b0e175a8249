package timeline

import (
	"encoding/json"
	"testing"
)

// Issue 26 item 2: wait_info's duration and signal_duration are whole
// milliseconds. A wait whose begin and end the trace caught 476 µs apart
// lasted 476 µs — not the 0 its duration field rounds to — and says that
// the field read 0 ms. A wait seen only by its end (or wait_completed)
// with a 0 ms duration was shorter than 1 ms: its time is unknown, and
// it says so rather than passing for no wait at all.
func TestWaitDurationsInMicroseconds(t *testing.T) {
	plan := loadPlan(t, "KeyLookup.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.wait(3, false, "PAGEIOLATCH_SH", 0)
	st.at(3666)
	st.wait(4, true, "PAGEIOLATCH_SH", 0)
	st.at(4142)
	st.wait(5, false, "PAGEIOLATCH_SH", 0)
	st.at(5000)
	st.wait(7, true, "PAGEIOLATCH_SH", 2) // 2 ms by the field, 2.250 ms by the clock
	st.at(7250)
	st.wait(8, true, "IO_COMPLETION", 0) // end only, under 1 ms
	st.wait(9, true, "IO_COMPLETION", 3) // end only, 3 ms
	st.batchEnd(10, 10000)
	tr := build(t, plan, nil, &Options{Statement: -1}, st.events)
	w := tr.Lanes.Wait
	if len(w) != 4 {
		t.Fatalf("%d waits: %+v", len(w), w)
	}
	byT := map[int64]WaitInterval{}
	for _, x := range w {
		byT[x.T] = x
	}
	if x := byT[3666]; x.End != 4142 || x.DurationUs != 476 || x.DurationMs != 0 || !x.UnderOneMs || x.DurationSource != "events" {
		t.Errorf("begin/end 476 µs apart: %+v", x)
	}
	if x := byT[5000]; x.DurationUs != 2250 || x.DurationMs != 2 || x.UnderOneMs || x.DurationSource != "events" {
		t.Errorf("begin/end 2.250 ms apart, field 2 ms: %+v", x)
	}
	var endOnly0, endOnly3 *WaitInterval
	for i := range w {
		switch {
		case w[i].WaitType == "IO_COMPLETION" && w[i].DurationMs == 0:
			endOnly0 = &w[i]
		case w[i].WaitType == "IO_COMPLETION":
			endOnly3 = &w[i]
		}
	}
	if endOnly0 == nil || endOnly0.DurationUs != 0 || !endOnly0.UnderOneMs || endOnly0.DurationSource != "duration_ms" {
		t.Errorf("end-only wait, 0 ms: %+v", endOnly0)
	}
	if endOnly3 == nil || endOnly3.DurationUs != 3000 || endOnly3.UnderOneMs || endOnly3.End-endOnly3.T != 3000 {
		t.Errorf("end-only wait, 3 ms: %+v", endOnly3)
	}
	js := jsonLane(t, traceJSON(t, tr), "wait")
	if js[0]["durationUs"] != 476.0 || js[0]["underOneMs"] != true || js[0]["durationMs"] != 0.0 {
		t.Errorf("JSON wait %v", js[0])
	}
}

// A trace saved before waits said where their length came from (schema 3
// without durationSource) loads with the measured length of a wait whose
// begin and end were captured.
func TestSavedWaitDurationsUpgraded(t *testing.T) {
	const saved = `{"schema":3,"zeroTime":"","start":0,"end":5000,"operators":[],"lanes":{"plan":[],"read":[],"write":[],"lock":[],
"wait":[{"t":3666,"end":4142,"nodeId":null,"waitType":"PAGEIOLATCH_SH","category":"Buffer IO","durationUs":0},
{"t":1000,"end":3000,"nodeId":null,"waitType":"IO_COMPLETION","category":"Other Disk IO","durationUs":2000}],
"memory":[],"split":[],"log":[],"io":[]},"summary":{"events":0,"lanes":{},"unmatched":{},"ordering":"","spread":false,"timingLimitUs":0,"operators":[]}}`
	var tr Trace
	if err := json.Unmarshal([]byte(saved), &tr); err != nil {
		t.Fatal(err)
	}
	w := tr.Lanes.Wait
	if w[0].DurationUs != 476 || !w[0].UnderOneMs || w[0].DurationSource != "events" {
		t.Errorf("saved 476 µs wait %+v", w[0])
	}
	if w[1].DurationUs != 2000 || w[1].UnderOneMs || w[1].DurationMs != 2 {
		t.Errorf("saved 2 ms wait %+v", w[1])
	}
}

// Issue 26 item 3: one elapsed time per trace, from the batch's own events,
// and the lead-in before the first operator said as such. The batch runs
// 0–80 ms; the plan's operators only from 67 ms (the reads) to 75 ms.
func TestElapsedAndLeadIn(t *testing.T) {
	plan := loadSynthetic(t, "sort_over_scan.sqlplan")
	cat := NewCatalog()
	for p := uint64(100); p < 104; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Orders", Index: "PK_Orders"})
	}
	for _, c := range []struct {
		name              string
		start, done       bool
		wantElapsed       int64
		wantSource        string
		wantLead, wantOps int64
	}{
		{"batch_events", true, true, 80000, "batch_events", 67000, 8000},
		{"no_start", false, true, 78500, "batch_duration", 0, 8000},
		{"no_completion", true, false, 75000, "extent", 67000, 8000},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStream()
			if c.start {
				st.batchStart(0)
			}
			for i := 0; i < 4; i++ {
				st.read(67+i, 1, uint64(100+i))
			}
			st.profile(75, 0, 0, 8000)
			if c.done {
				st.batchEnd(80, 78500) // its duration field, µs
			}
			tr := build(t, plan, cat, nil, st.events)
			s := tr.Summary
			if s.ElapsedUs != c.wantElapsed || s.ElapsedSource != c.wantSource {
				t.Errorf("elapsed %d (%s), want %d (%s)", s.ElapsedUs, s.ElapsedSource, c.wantElapsed, c.wantSource)
			}
			if s.LeadInUs != c.wantLead || s.OperatorUs != c.wantOps {
				t.Errorf("lead-in %d, operators %d; want %d, %d (operators %+v)", s.LeadInUs, s.OperatorUs, c.wantLead, c.wantOps, tr.Operators)
			}
		})
	}
}
