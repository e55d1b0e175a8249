//go:build unix

package timeline

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// BenchmarkBuildMillionEvents builds a trace of 1,000,000 events — 94 % page
// reads, the rest locks, waits and thread profiles — on a 22-operator plan,
// feeding the Builder one reused event at a time as a decoder in
// ReuseEvents mode would. It reports ns/event and the heap the Builder and
// its Trace hold per event after Build (in use after a GC, input excluded).
func BenchmarkBuildMillionEvents(b *testing.B) {
	plan := loadPlan(b, "stack_overflow-what_is_my_accepted_answer_percentage_rate.sqlplan")
	cat := NewCatalog()
	for p := uint64(0); p < 50000; p++ {
		idx := "idxId"
		if p%5 == 0 {
			idx = "idxPostOwner"
		}
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Posts", Index: idx})
	}
	const n = 1_000_000
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	read := xe.Event{Name: "physical_page_read", Package: "sqlserver",
		Fields:  []xe.Field{{Name: "file_id", Value: xe.UintValue(1)}, {Name: "page_id", Value: xe.UintValue(0)}},
		Actions: []xe.Field{{Name: "event_sequence", Package: "package0"}, {Name: "database_id", Package: "sqlserver", Value: xe.UintValue(5)}}}
	lock := xe.Event{Name: "lock_acquired", Package: "sqlserver",
		Fields: []xe.Field{{Name: "resource_type", Value: xe.MapFieldValue(7, "KEY")}, {Name: "mode", Value: xe.MapFieldValue(3, "S")},
			{Name: "database_id", Value: xe.UintValue(5)}, {Name: "associated_object_id", Value: xe.UintValue(72057594043170816)},
			{Name: "resource_0", Value: xe.UintValue(0)}, {Name: "resource_description", Value: xe.StringValue("(8194443284a0)")}},
		Actions: read.Actions}
	wait := xe.Event{Name: "wait_info", Package: "sqlos",
		Fields:  []xe.Field{{Name: "wait_type", Value: xe.MapFieldValue(66, "PAGEIOLATCH_SH")}, {Name: "opcode", Value: xe.MapFieldValue(0, "Begin")}, {Name: "duration", Value: xe.UintValue(0)}},
		Actions: append([]xe.Field{{Name: "task_address", Package: "sqlos", Value: xe.PtrValue(0x1234)}}, read.Actions...)}
	profile := xe.Event{Name: "query_thread_profile", Package: "sqlserver",
		Fields:  []xe.Field{{Name: "node_id", Value: xe.UintValue(0)}, {Name: "thread_id", Value: xe.UintValue(1)}, {Name: "total_time_us", Value: xe.UintValue(100000)}},
		Actions: read.Actions}
	nodes := []uint64{14, 16, 18, 34, 36}
	// Values are made before the clock starts: formatting numbers is the
	// decoder's cost, not the timeline's.
	seqs := make([]xe.Value, n)
	for i := range seqs {
		seqs[i] = xe.UintValue(uint64(i + 1))
	}
	pages := make([]xe.Value, 50000)
	for i := range pages {
		pages[i] = xe.UintValue(uint64(i))
	}
	nodeVals := make([]xe.Value, len(nodes))
	for i, v := range nodes {
		nodeVals[i] = xe.UintValue(v)
	}
	begin, end, zero, one := xe.MapFieldValue(0, "Begin"), xe.MapFieldValue(1, "End"), xe.UintValue(0), xe.UintValue(1)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	b.ReportAllocs()
	var heapPerEvent float64
	var cpuPaused time.Duration
	cpuStart := cpuTime()
	for b.Loop() {
		bld, err := NewBuilder(plan, cat, nil, &Options{Statement: -1, ExpectedEvents: n})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i++ {
			var ev *xe.Event
			switch {
			case i%50 == 0:
				ev = &lock
				ev.Fields[4].Value = pages[i%len(pages)]
			case i%50 == 1:
				ev = &wait
				if i%100 == 1 {
					ev.Fields[1].Value, ev.Fields[2].Value = begin, zero
				} else {
					ev.Fields[1].Value, ev.Fields[2].Value = end, one
				}
			case i%20000 == 2:
				ev = &profile
				ev.Fields[0].Value = nodeVals[(i/20000)%len(nodes)]
			default:
				ev = &read
				ev.Fields[1].Value = pages[i%len(pages)]
			}
			ev.Actions[len(ev.Actions)-2].Value = seqs[i]
			ts := base.Add(time.Duration(i/40) * time.Millisecond) // 40 events per millisecond
			ev.Timestamp = xe.Timestamp{Time: ts}
			bld.Add(ev)
		}
		tr, err := bld.Build()
		if err != nil {
			b.Fatal(err)
		}
		// The forced GC and the heap reading measure memory, not the
		// build: the clock (and the CPU time below) leaves them out.
		b.StopTimer()
		pause := cpuTime()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heapPerEvent = float64(ms.HeapInuse-before.HeapInuse) / n
		if len(tr.Lanes.Read) < n*9/10 {
			b.Fatalf("only %d reads", len(tr.Lanes.Read))
		}
		runtime.KeepAlive(bld)
		cpuPaused += cpuTime() - pause
		b.StartTimer()
	}
	// CPU time is steadier than wall time on a shared machine; it includes
	// the GC's work on other cores.
	b.ReportMetric(float64((cpuTime()-cpuStart-cpuPaused).Nanoseconds())/float64(b.N)/n, "cpu-ns/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
	b.ReportMetric(heapPerEvent, "heap-B/event")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
