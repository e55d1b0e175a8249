package frames

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

func summaryFrame(t *testing.T, fs data.Frames, name string) *data.Frame {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no %s frame", name)
	return nil
}

func summaryCell(t *testing.T, f *data.Frame, field string, row int) any {
	t.Helper()
	fd, i := f.FieldByName(field)
	if i < 0 {
		t.Fatalf("%s has no field %s", f.Name, field)
	}
	v := fd.At(row)
	if p, ok := v.(*int64); ok {
		if p == nil {
			return nil
		}
		return *p
	}
	return v
}

// The sample's figures counted by hand: Customers is read by node 1 (3
// logical, 1 physical, 2 read-ahead, 1 scan; 1 page read, 1 lock);
// Orders by node 2, which has no plan counters (null, not 0; 2 page reads
// and 1 lock in the lanes). The unmatched read of page 9 has no object.
func TestTableIOFrame(t *testing.T) {
	f := summaryFrame(t, build(t, sampleSource(), Request{}), "table_io")
	if n, _ := f.RowLen(); n != 2 {
		t.Fatalf("table_io has %d rows, want 2", n)
	}
	want := []map[string]any{
		{"object": "dbo.Customers.PK_Customers", "table": "dbo.Customers", "index": "PK_Customers", "logicalReads": int64(3), "physicalReads": int64(1),
			"readAheads": int64(2), "scans": int64(1), "pageReads": int64(1), "locks": int64(1), "nodeIds": "1"},
		{"object": "dbo.Orders.PK_Orders", "table": "dbo.Orders", "index": "PK_Orders", "logicalReads": nil, "physicalReads": nil,
			"readAheads": nil, "scans": nil, "pageReads": int64(2), "locks": int64(1), "nodeIds": "2"},
	}
	for row, fields := range want {
		for name, w := range fields {
			if got := summaryCell(t, f, name, row); got != w {
				t.Errorf("row %d %s = %v, want %v", row, name, got, w)
			}
		}
	}
}

// Without the plan's counters the reads are null, never 0.
func TestTableIOWithoutCounters(t *testing.T) {
	src := sampleSource()
	src.Runtime = nil
	f := summaryFrame(t, build(t, src, Request{}), "table_io")
	if got := summaryCell(t, f, "logicalReads", 0); got != nil {
		t.Errorf("logicalReads without counters = %v, want null", got)
	}
	if got := summaryCell(t, f, "pageReads", 0); got != int64(2) {
		t.Errorf("pageReads = %v, want Orders' 2 first", got)
	}
}

// PAGEIOLATCH_SH waited 100 µs (measured); the open CXPACKET wait has no
// duration and counts its extent, 850 to 900.
func TestWaitStatsFrame(t *testing.T) {
	f := summaryFrame(t, build(t, sampleSource(), Request{}), "wait_stats")
	want := []map[string]any{
		{"waitType": "PAGEIOLATCH_SH", "class": "Buffer IO", "category": "Io", "waits": int64(1), "waitUs": int64(100), "firstUs": int64(40)},
		{"waitType": "CXPACKET", "class": "Parallelism", "category": "Parallelism", "waits": int64(1), "waitUs": int64(50), "firstUs": int64(850)},
	}
	if n, _ := f.RowLen(); n != len(want) {
		t.Fatalf("wait_stats has %d rows, want %d", n, len(want))
	}
	for row, fields := range want {
		for name, w := range fields {
			if got := summaryCell(t, f, name, row); got != w {
				t.Errorf("row %d %s = %v, want %v", row, name, got, w)
			}
		}
	}
	// the same total as the trace frame's waitUs
	tf := summaryFrame(t, build(t, sampleSource(), Request{}), "trace")
	if got := summaryCell(t, tf, "waitUs", 0); got != int64(150) {
		t.Errorf("trace waitUs = %v, want the wait_stats total 150", got)
	}
}

// The header's facts: rows returned, read-ahead reads summed over the
// operators (node 1's 2), the statement's CPU from the plan.
func TestTraceFrameHeaderFacts(t *testing.T) {
	f := summaryFrame(t, build(t, sampleSource(), Request{}), "trace")
	for name, w := range map[string]any{"rows": int64(12), "rowsAffected": int64(0), "readAheads": int64(2), "cpuMs": int64(7),
		"logicalReads": int64(3), "physicalReads": int64(1)} {
		if got := summaryCell(t, f, name, 0); got != w {
			t.Errorf("trace %s = %v, want %v", name, got, w)
		}
	}
	src := sampleSource()
	src.CPUMs = nil
	if got := summaryCell(t, summaryFrame(t, build(t, src, Request{}), "trace"), "cpuMs", 0); got != nil {
		t.Errorf("cpuMs without QueryTimeStats = %v, want null", got)
	}
}

// A window (the panel's zoom) never changes the summaries.
func TestSummariesIgnoreWindow(t *testing.T) {
	fs := build(t, sampleSource(), Request{Window: &Window{FromUs: 0, ToUs: 100}, Groups: []string{GroupSummary}})
	if len(fs) != 2 {
		t.Fatalf("summary group = %d frames, want table_io and wait_stats", len(fs))
	}
	if got := summaryCell(t, summaryFrame(t, fs, "table_io"), "pageReads", 1); got != int64(2) {
		t.Errorf("windowed Orders pageReads = %v, want the whole trace's 2", got)
	}
}
