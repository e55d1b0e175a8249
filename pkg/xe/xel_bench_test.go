package xe_test

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// The .xel benchmark decodes the real file's 553 events, repeated in memory
// (its event buffers appended QUERYREPLAY_XEL_BENCH_REPEAT times, 100 by
// default: 55,300 events), as .xel and as the event_file XML that
// Event.AppendXML writes for the same events, so both readers do the same
// work:
//
//	go test ./pkg/xe -run '^$' -bench 'XEL' -benchtime 20x -cpu 1
var xelBenchData = sync.OnceValues(func() (xel, xml []byte) {
	real, err := os.ReadFile(xelRealFile)
	if err != nil {
		panic(err)
	}
	n := 100
	if s := os.Getenv("QUERYREPLAY_XEL_BENCH_REPEAT"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	xel = xelRepeat(real, n)
	r := xe.NewXELReader(bytes.NewReader(xel))
	r.ReuseEvents()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		xml = ev.AppendXML(xml, xe.FormEventFile)
		xml = append(xml, '\n')
	}
	return xel, xml
})

func xelBenchDecodeXEL(b *testing.B, data []byte, reuse bool) int {
	r := xe.NewXELReader(bytes.NewReader(data))
	if reuse {
		r.ReuseEvents()
	}
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func xelBenchDecodeXML(b *testing.B, data []byte, reuse bool) int {
	d := xe.NewDecoder(bytes.NewReader(data))
	if reuse {
		d.ReuseEvents()
	}
	n := 0
	for {
		_, err := d.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkXELDecode reports events/s for each reader and mode.
func BenchmarkXELDecode(b *testing.B) {
	xel, xml := xelBenchData()
	want := xelBenchDecodeXEL(b, xel, true)
	for _, c := range []struct {
		name   string
		data   []byte
		decode func(*testing.B, []byte, bool) int
		reuse  bool
	}{
		{"xel/reuse", xel, xelBenchDecodeXEL, true},
		{"xml/reuse", xml, xelBenchDecodeXML, true},
		{"xel/owned", xel, xelBenchDecodeXEL, false},
		{"xml/owned", xml, xelBenchDecodeXML, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if n := c.decode(b, c.data, c.reuse); n != want {
					b.Fatalf("%d events, want %d", n, want)
				}
			}
			b.ReportMetric(float64(want)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkXELSpeedup decodes the same events as .xel and as XML in every
// iteration (ReuseEvents for both) and reports both rates and their ratio;
// the fastest pass of each counts, being the least disturbed by other work
// on a shared machine.
func BenchmarkXELSpeedup(b *testing.B) {
	xel, xml := xelBenchData()
	events := xelBenchDecodeXEL(b, xel, true)
	bestXEL, bestXML := time.Duration(1<<62), time.Duration(1<<62)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		xelBenchDecodeXEL(b, xel, true)
		t1 := time.Now()
		xelBenchDecodeXML(b, xml, true)
		t2 := time.Now()
		bestXEL, bestXML = min(bestXEL, t1.Sub(t0)), min(bestXML, t2.Sub(t1))
	}
	b.ReportMetric(float64(events)/bestXEL.Seconds(), "xel-events/s")
	b.ReportMetric(float64(events)/bestXML.Seconds(), "xml-events/s")
	b.ReportMetric(bestXML.Seconds()/bestXEL.Seconds(), "speedup")
	b.ReportMetric(float64(len(xml))/float64(len(xel)), "xml/xel-bytes")
}
