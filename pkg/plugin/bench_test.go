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
	bundle, err := testtrace.Generated(200_000, 7)
	if err != nil {
		b.Fatal(err)
	}
	d := offlineDatasource(b, map[string]any{"maxMemoryMB": 2048})
	e, err := d.store.Put(context.Background(), bundle)
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
				r := d.query(context.Background(), q)
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
// query, stop and drop, server read-back with the first decode pass, name
// resolution with the timeline build (second decode pass), storing the
// bundle and building the frames; then the frames' JSON encoding.
//
//	go test ./pkg/plugin -run '^$' -bench Trace100k -benchtime 1x
func BenchmarkTrace100k(b *testing.B) {
	f := startStandin(b)
	d := f.datasource(b, "bench", map[string]any{"allowBufferPoolClear": true, "maxEvents": 2_000_000, "traceTimeout": "10m"})
	const mj = "SELECT o.OrderID, o.OrderDate, l.LineNumber, l.Quantity FROM dbo.Orders AS o JOIN dbo.OrderLines AS l ON l.OrderID = o.OrderID WHERE o.OrderID <= 2000"
	m := map[string]any{"sql": strings.Repeat(mj+";\n", 7), "maxDataPoints": 1000,
		"options": map[string]any{"clearBufferPool": true, "disableReadAhead": true}}
	steps := map[string]time.Duration{}
	var mu sync.Mutex
	var last time.Time
	var lastStep string
	d.progress = func(p tracer.Progress) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if p.Step != lastStep {
			if lastStep != "" {
				steps[lastStep] += now.Sub(last)
			}
			last, lastStep = now, p.Step
		}
	}
	var events float64
	var total, encode time.Duration
	for b.Loop() {
		began := time.Now()
		lastStep = ""
		r := d.query(context.Background(), query("T", m))
		if r.Error != nil {
			b.Fatal(r.Error)
		}
		done := time.Now()
		mu.Lock()
		steps[lastStep] += done.Sub(last)
		mu.Unlock()
		total += done.Sub(began)
		ev, _ := r.Frames[0].FieldByName("events")
		events = float64(ev.At(0).(int64))
		for _, fr := range r.Frames {
			if _, err := data.FrameToJSON(fr, data.IncludeAll); err != nil {
				b.Fatal(err)
			}
		}
		encode += time.Since(done)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(events, "events")
	b.ReportMetric(ms(total), "total-ms")
	b.ReportMetric(ms(steps["running"]), "query-ms")
	b.ReportMetric(ms(steps["stopping"]), "stop+drop-ms")
	b.ReportMetric(ms(steps["reading events"]), "readback+decode-ms")
	b.ReportMetric(ms(steps["resolving names"]), "resolve+timeline-ms")
	b.ReportMetric(ms(steps["storing"]), "store-ms")
	b.ReportMetric(ms(steps["building frames"]), "frames-ms")
	b.ReportMetric(ms(encode), "json-ms")
}

// BenchmarkStore20x100k fills a store with 20 traces of about 100,000 events
// and reports the heap they hold next to the store's own estimate, under a
// byte bound of 16 traces' worth: the bound must hold.
//
//	go test ./pkg/plugin -run '^$' -bench Store20x100k -benchtime 1x
func BenchmarkStore20x100k(b *testing.B) {
	for b.Loop() {
		before := heap()
		bundles := make([]*tracer.Bundle, 20)
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
