package plugin

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/testtrace"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tracestore"
)

// offlineDatasource is a datasource whose server is unreachable: enough for
// views, which run nothing on SQL Server.
func offlineDatasource(b *testing.B, store map[string]any) *Datasource {
	b.Helper()
	f := &fixture{dir: b.TempDir()}
	j := map[string]any{"host": "127.0.0.1", "port": 1, "user": "sa", "encrypt": "disable", "connectTimeoutSeconds": 1,
		"traceStore": map[string]any{"directory": f.dir}}
	for k, v := range store {
		j["traceStore"].(map[string]any)[k] = v
	}
	return openDatasource(b, settingsFromJSON(b, j, standinPass))
}

// BenchmarkView1M re-slices a stored 1,000,000-event trace (window = all,
// 1,000 max data points) through QueryData's view path, as every zoom of
// the panel does; "arrow" adds the encoding the SDK sends to Grafana.
// Target (issue 15): < 50 ms and < 20 MB allocated per view.
//
//	go test ./pkg/plugin -run '^$' -bench View1M -benchtime 20x
func BenchmarkView1M(b *testing.B) {
	generated, err := testtrace.Generated(200_000, 7)
	if err != nil {
		b.Fatal(err)
	}
	d := offlineDatasource(b, map[string]any{"maxMemoryMB": 2048})
	e, err := d.store.Put(context.Background(), generated)
	if err != nil {
		b.Fatal(err)
	}
	q := query("V", map[string]any{"queryType": "view", "traceId": e.ID, "maxDataPoints": 1000})
	b.ReportMetric(float64(e.Info.Events), "events")
	runtime.GC() // the setup's garbage (decoding 1M events, the gzip bundle) is not the view's
	for _, arrow := range []bool{false, true} {
		name := "query"
		if arrow {
			name = "query+arrow"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := d.query(context.Background(), editor, q, true)
				if r.Error != nil {
					b.Fatal(r.Error)
				}
				if arrow {
					if _, err := data.Frames(r.Frames).MarshalArrow(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkTrace100k traces a batch of seven merge_join demo statements on
// the stand-in (cold cache, read-ahead off: about 113,000 events) end to
// end through QueryData, timing each step from the progress reports: the
// query, stop and drop, server read-back, the first decode pass, name
// resolution with the timeline build (second decode pass), call stacks and
// page headers, storing the bundle and building the frames; then the
// frames' JSON encoding. "other" is the rest of the total (connecting,
// creating and starting the session, the rollback).
//
// Read-back and decode are one progress step ("reading events"): the
// tracer copies the event files from the server, then decodes them,
// reporting every 10,000 events. The decode rate between the first and the
// last of those reports gives the decode time of all the events; the rest
// of the step is the read-back. Resolution and the timeline build share
// the "resolving names" step with no report between them, so they stay one
// figure (splitting them needs a progress step in pkg/tracer).
//
//	go test ./pkg/plugin -run '^$' -bench Trace100k -benchtime 1x
func BenchmarkTrace100k(b *testing.B) {
	f := startStandin(b)
	d := f.datasource(b, "bench", map[string]any{"allowBufferPoolClear": true, "maxEvents": 2_000_000, "traceTimeout": "10m"})
	const mj = "SELECT o.OrderID, o.OrderDate, l.LineNumber, l.Quantity FROM dbo.Orders AS o JOIN dbo.OrderLines AS l ON l.OrderID = o.OrderID WHERE o.OrderID <= 2000"
	m := map[string]any{"sql": strings.Repeat(mj+";\n", 7), "maxDataPoints": 1000,
		"options": map[string]any{"clearBufferPool": true, "disableReadAhead": true}}
	var mu sync.Mutex
	var reports []progressReport
	d.progress = func(p tracer.Progress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, progressReport{p.Step, p.Events, time.Now()})
	}
	var events float64
	var total, encode, decode time.Duration
	steps := map[string]time.Duration{}
	for b.Loop() {
		mu.Lock()
		reports = nil
		mu.Unlock()
		began := time.Now()
		r := d.query(context.Background(), editor, query("T", m), true)
		if r.Error != nil {
			b.Fatal(r.Error)
		}
		done := time.Now()
		total += done.Sub(began)
		ev, _ := r.Frames[0].FieldByName("events")
		n := ev.At(0).(int64)
		events = float64(n)
		mu.Lock()
		for step, d := range stepDurations(reports, done) {
			steps[step] += d
		}
		dec, ok := decodeTime(reports, n)
		mu.Unlock()
		if !ok {
			b.Fatal("too few progress reports while reading events to tell read-back from decode")
		}
		decode += dec
		for _, fr := range r.Frames {
			if _, err := data.FrameToJSON(fr, data.IncludeAll); err != nil {
				b.Fatal(err)
			}
		}
		encode += time.Since(done)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	reading := steps["reading events"]
	named := []struct{ step, unit string }{
		{"running", "query-ms"}, {"stopping", "stop+drop-ms"}, {"reading events", "readback+decode-ms"},
		{"resolving names", "resolve+timeline-ms"}, {"resolving call stacks and page headers", "stacks+headers-ms"},
		{"storing", "store-ms"}, {"building frames", "frames-ms"},
	}
	other := total
	b.ReportMetric(events, "events")
	b.ReportMetric(ms(total), "total-ms")
	for _, s := range named {
		b.ReportMetric(ms(steps[s.step]), s.unit)
		other -= steps[s.step]
	}
	b.ReportMetric(ms(reading-min(decode, reading)), "readback-ms")
	b.ReportMetric(ms(min(decode, reading)), "decode-ms")
	b.ReportMetric(ms(other), "other-ms")
	b.ReportMetric(ms(encode), "json-ms")
}

// progressReport is one tracer or datasource progress report, when it came.
type progressReport struct {
	step   string
	events int64
	at     time.Time
}

// stepDurations is the time from each step's first report to the next
// step's (the last step ends at end).
func stepDurations(reports []progressReport, end time.Time) map[string]time.Duration {
	out := map[string]time.Duration{}
	for i := 0; i < len(reports); {
		j := i
		for j < len(reports) && reports[j].step == reports[i].step {
			j++
		}
		until := end
		if j < len(reports) {
			until = reports[j].at
		}
		out[reports[i].step] += until.Sub(reports[i].at)
		i = j
	}
	return out
}

// decodeTime estimates the decoding of all n events from the decode rate
// between the first and the last "reading events" report that counted
// events; false when there are fewer than two such reports.
func decodeTime(reports []progressReport, n int64) (time.Duration, bool) {
	var first, last *progressReport
	for i := range reports {
		r := &reports[i]
		if r.step != "reading events" || r.events == 0 {
			continue
		}
		if first == nil {
			first = r
		}
		last = r
	}
	if first == nil || last.events <= first.events || !last.at.After(first.at) {
		return 0, false
	}
	perEvent := float64(last.at.Sub(first.at)) / float64(last.events-first.events)
	return time.Duration(perEvent * float64(n)), true
}

// BenchmarkStore20x100k fills a store with 20 traces of about 100,000 events
// and reports the heap they hold next to the store's own estimate, under a
// byte bound of 16 traces' worth: the bound must hold.
//
//	go test ./pkg/plugin -run '^$' -bench Store20x100k -benchtime 1x
func BenchmarkStore20x100k(b *testing.B) {
	for b.Loop() {
		before := heap()
		bundles := make([]*bundle.Bundle, 20)
		for i := range bundles {
			bb, err := testtrace.Generated(20_000, 7)
			if err != nil {
				b.Fatal(err)
			}
			bundles[i] = bb
		}
		d, err := tracestore.OpenDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		// first unbounded, to measure all 20
		s, _ := tracestore.New(d, tracestore.Options{MaxTraces: 20, MaxMemoryBytes: 1 << 40})
		for _, bb := range bundles {
			if _, err := s.Put(context.Background(), bb); err != nil {
				b.Fatal(err)
			}
		}
		bundles = nil
		after := heap()
		est, n := s.MemoryBytes()
		b.ReportMetric(float64(n), "traces")
		b.ReportMetric(float64(after-before)/(1<<20), "heap-MB")
		b.ReportMetric(float64(est)/(1<<20), "estimate-MB")
		one := est / int64(n)
		bounded, _ := tracestore.New(d, tracestore.Options{MaxTraces: 20, MaxMemoryBytes: 16 * one})
		list, _ := s.List(context.Background())
		for _, info := range list {
			if _, err := bounded.Get(context.Background(), info.ID); err != nil {
				b.Fatal(err)
			}
			if got, _ := bounded.MemoryBytes(); got > 16*one {
				b.Fatalf("byte bound broken: %d > %d", got, 16*one)
			}
		}
		_, held := bounded.MemoryBytes()
		b.ReportMetric(float64(held), "traces-under-bound")
		runtime.KeepAlive(s)
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
