package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/pluginhost"
	"github.com/queryreplay/queryreplay/pkg/frames"
)

// benchLiveSQL and benchLiveOptions are the benchmark query, the
// one pkg/tracer's BenchmarkLiveTrace traces, with its options: about 170k
// events (the issue asks for 100k) over more than 5 s paced, from a cold
// buffer pool read page by page. (liveSQL, which the tests use, makes
// three times as many events.)
const (
	benchLiveSQL     = "SELECT COUNT(*) FROM dbo.OrderLines AS a CROSS JOIN dbo.Products AS b WHERE a.OrderID <= 7000"
	benchLiveOptions = `{"clearBufferPool":true,"disableReadAhead":true}`
)

// What the panel sees of a live trace, measured through the real plugin
// binary over gRPC as Grafana Live drives it (issue 29, "reaches the
// panel"): a live query, SubscribeStream, then RunStream's packets, each
// stamped when it arrives. The query is benchLiveSQL on a stand-in paced to
// the wall clock (its events' times follow this machine's clock).
//
//	go test ./cmd/gpx_queryreplay -run '^$' -bench LiveLatency -benchtime 1x
//
// Reported (medians over b.N traces):
//   - first-frame-ms: query start to the first packet carrying an update;
//   - first-frame-from-subscribe-ms: RunStream called (the panel
//     subscribed; the trace's session setup included) to that packet;
//   - event-delay-ms: median over events of its time to the arrival of
//     the first packet carrying it;
//   - end-to-final-ms: query end to the final (finished) packet;
//   - query-ms: the batch's client round trip (the issue asks for at
//     least 5 s).
//
// The query's start is not in any packet, so it is taken as the earliest
// arrival minus the elapsed time the packet reports (the tracer counts
// elapsed from just before it sends the batch): the packet's own transit
// is left out, and the batch's start is placed no later than it was, so
// every figure errs long by the few ms between the tracer's clock start
// and the batch's. A live event's tUs counts from the batch's start; its
// time is start + tUs. The query's end is start plus the batch's client
// round trip (the finished trace's clientRoundTripUs). In binned mode an
// event's time is its bucket's middle, and a lane's new events are taken
// to be its latest (the tracer reads the event file in order).
func BenchmarkLiveLatency(b *testing.B) {
	h, _, pctx := onPacedStandinWith(b, `,"allowBufferPoolClear":true`)
	var first, firstSub, ends, ran []float64
	var delays []weighted
	var packets, events int
	for i := 0; i < b.N; i++ {
		r := measureLive(b, h, pctx)
		first, firstSub, ends, ran = append(first, r.first), append(firstSub, r.firstSub), append(ends, r.end), append(ran, r.ran)
		delays = append(delays, r.delays...)
		packets, events = r.packets, r.events
		if r.negative > 0 {
			b.Logf("trace %d: %d events carried before their own time: the start estimate is late", i, r.negative)
		}
	}
	b.ReportMetric(median(first), "first-frame-ms")
	b.ReportMetric(median(firstSub), "first-frame-from-subscribe-ms")
	b.ReportMetric(weightedMedian(delays), "event-delay-ms")
	b.ReportMetric(median(ends), "end-to-final-ms")
	b.ReportMetric(median(ran), "query-ms")
	b.ReportMetric(float64(packets), "packets")
	b.ReportMetric(float64(events), "live-events")
}

// arrival is one stream packet as the panel receives it.
type arrival struct {
	at     time.Time
	status frames.LiveStatus
	events frames.LiveEvents
}

// liveRun is one live trace's figures, in ms.
type liveRun struct {
	first, firstSub, end float64
	ran                  float64 // the batch's round trip
	delays               []weighted
	packets, events      int
	negative             int
}

func measureLive(b *testing.B, h *pluginhost.Host, pctx backend.PluginContext) liveRun {
	b.Helper()
	path := startLiveWith(b, h, pctx, benchLiveSQL, benchLiveOptions)
	// a bound, not a timing: a loaded machine stretches the paced query
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := h.SubscribeStream(ctx, pctx, path); err != nil {
		b.Fatal(err)
	}
	var got []arrival
	subscribed := time.Now()
	err := h.RunStream(ctx, pctx, path, func(p []byte) {
		got = append(got, decodeArrival(b, time.Now(), p))
	})
	if err != nil {
		b.Fatal(err)
	}
	if len(got) == 0 {
		b.Fatal("the stream sent nothing")
	}
	if last := got[len(got)-1].status; !last.Done || last.TraceID == "" {
		b.Fatalf("the stream did not end with a stored trace (%d packets, the last %+v)", len(got), last)
	}
	start := batchStart(got)
	end := start.Add(batchRoundTrip(b, h, pctx, got[len(got)-1].status.TraceID))
	r := liveRun{packets: len(got), end: ms(got[len(got)-1].at.Sub(end)), ran: ms(end.Sub(start))}
	logTimeline(b, got, start, end)
	for _, a := range got {
		if a.status.Seq > 0 {
			r.first, r.firstSub = ms(a.at.Sub(start)), ms(a.at.Sub(subscribed))
			break
		}
	}
	seen := map[string]int64{}
	for _, a := range got {
		for _, n := range newEvents(a.events, seen) {
			d := ms(a.at.Sub(start.Add(time.Duration(n.tUs) * time.Microsecond)))
			if d < 0 {
				r.negative += int(n.count)
			}
			r.delays = append(r.delays, weighted{d, n.count})
			r.events += int(n.count)
		}
	}
	return r
}

func decodeArrival(b *testing.B, at time.Time, p []byte) arrival {
	var f data.Frame
	if err := json.Unmarshal(p, &f); err != nil {
		b.Fatalf("a stream packet is not a frame: %v", err)
	}
	var c struct {
		Live   frames.LiveStatus `json:"live"`
		Events frames.LiveEvents `json:"events"`
	}
	raw, _ := json.Marshal(f.Meta.Custom)
	if err := json.Unmarshal(raw, &c); err != nil {
		b.Fatal(err)
	}
	return arrival{at: at, status: c.Live, events: c.Events}
}

// logTimeline says where the time went: each packet's arrival after the
// batch's start, its update, and the batch's end among them.
func logTimeline(b *testing.B, got []arrival, start, end time.Time) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "batch ran %.0f ms; packets (arrival ms, seq, elapsed ms, events so far, running/done):", ms(end.Sub(start)))
	for _, a := range got {
		fmt.Fprintf(&sb, " [%.0f %d %d %d %v/%v]", ms(a.at.Sub(start)), a.status.Seq, a.status.ElapsedMs, a.status.EventsSoFar, a.status.Running, a.status.Done)
	}
	b.Log(sb.String())
}

// batchStart is the earliest arrival of an update less the elapsed time it
// reports.
func batchStart(got []arrival) time.Time {
	var t time.Time
	for _, a := range got {
		if a.status.Seq == 0 {
			continue
		}
		if s := a.at.Add(-time.Duration(a.status.ElapsedMs) * time.Millisecond); t.IsZero() || s.Before(t) {
			t = s
		}
	}
	return t
}

// batchRoundTrip is the finished trace's client round trip of the batch,
// from a bundle query through the binary.
func batchRoundTrip(b *testing.B, h *pluginhost.Host, pctx backend.PluginContext, traceID string) time.Duration {
	r := queryOnce(b, h, pctx, "bundle", fmt.Sprintf(`{"queryType":"bundle","traceId":%q,"frames":["trace"]}`, traceID))
	if r.Error != nil {
		b.Fatal(r.Error)
	}
	tr := findFrame(r.Frames, "trace")
	if tr == nil {
		b.Fatal("the finished trace has no trace frame")
	}
	f, _ := tr.FieldByName("clientRoundTripUs")
	if f == nil {
		b.Fatal("the trace frame has no clientRoundTripUs")
	}
	return time.Duration(f.At(0).(int64)) * time.Microsecond
}

// carried is count events at tUs first carried by one packet.
type carried struct {
	tUs   int64
	count int64
}

// newEvents are the events a packet carries that no earlier one did: per
// lane, the count above what was seen, taken from the lane's latest rows.
// seen is updated.
func newEvents(ev frames.LiveEvents, seen map[string]int64) []carried {
	type row struct {
		t, n int64
	}
	lanes := map[string][]row{}
	for i, lane := range ev.Lane {
		t, n := ev.TUs[i], int64(1)
		if ev.Mode == "binned" {
			t += ev.BucketUs / 2
			n = ev.Count[i]
		}
		lanes[lane] = append(lanes[lane], row{t, n})
	}
	var out []carried
	for lane, rows := range lanes {
		total := int64(0)
		for _, r := range rows {
			total += r.n
		}
		fresh := total - seen[lane]
		seen[lane] = max(total, seen[lane])
		slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.t, a.t) })
		for _, r := range rows {
			if fresh <= 0 {
				break
			}
			n := min(r.n, fresh)
			out = append(out, carried{r.t, n})
			fresh -= n
		}
	}
	return out
}

// weighted is a value counted n times.
type weighted struct {
	v float64
	n int64
}

func weightedMedian(xs []weighted) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.SortFunc(s, func(a, b weighted) int { return cmp.Compare(a.v, b.v) })
	total := int64(0)
	for _, x := range s {
		total += x.n
	}
	acc := int64(0)
	for _, x := range s {
		acc += x.n
		if 2*acc > total {
			return x.v
		}
	}
	return s[len(s)-1].v
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
