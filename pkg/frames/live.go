package frames

import (
	"encoding/json"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// Live frames (docs/frames.md §3.14): while a trace runs, its consumers
// (the plugin's Grafana Live stream, the viewer's server-sent events) send
// one frame, `live`, after each update (about four a second). Each one is a complete snapshot of
// the trace so far — the operators' progress, every event read back so far
// at a bounded level of detail, and a status — so a consumer that drops or
// coalesces messages for a slow client loses nothing, and Grafana can
// replace its copy (StreamingFrameAction replace) instead of appending.

// LiveFrameName is the name of the live frame.
const LiveFrameName = "live"

// Bounds of one live frame, whatever the trace: a panel never receives
// every event of a million-event trace.
const (
	// MaxLiveRaw is how many events a live frame carries one by one; past
	// it, the events are binned per lane and time bucket.
	MaxLiveRaw = 1000
	// MaxLiveBuckets is the number of time buckets per lane once binned;
	// the bucket width doubles as the trace grows.
	MaxLiveBuckets = 240
	// MaxLiveLanes bounds the distinct lanes (the eight of docs/frames.md
	// §3.5; anything else counts as "other").
	MaxLiveLanes = 8
	// MaxLiveOperators bounds the operator rows of one frame.
	MaxLiveOperators = 1000
	// MaxLivePlanBytes bounds the showplan XML a live frame repeats; a
	// larger plan is left out (planOmitted) and the panel lists the
	// operators instead of drawing them.
	MaxLivePlanBytes = 256 << 10
	// MaxLiveText bounds each text of a raw event (name, object, detail).
	MaxLiveText = 128
	// MaxLiveFrameBytes is what one live frame's JSON stays under, whatever
	// the trace (tested with the worst case): far below the plugin's 16 MiB
	// gRPC messages and small enough to send every second.
	MaxLiveFrameBytes = 2 << 20
	// minLiveBucketUs is the first bucket width once binned.
	minLiveBucketUs = 1000
)

// liveLanes are the lanes a live event may name (docs/frames.md §3.5).
var liveLanes = map[string]bool{"read": true, "write": true, "lock": true, "wait": true,
	"memory": true, "split": true, "log": true, "io": true}

// LiveStatus is the live frame's meta.custom.live.
type LiveStatus struct {
	Seq           int    `json:"seq"`
	ElapsedMs     int64  `json:"elapsedMs"`
	Running       bool   `json:"running"`
	Done          bool   `json:"done"`
	EventsSoFar   int64  `json:"eventsSoFar"`
	EventsDropped int64  `json:"eventsDropped"`
	TraceID       string `json:"traceId,omitempty"`
	Error         string `json:"error,omitempty"`
	PlanOmitted   bool   `json:"planOmitted,omitempty"`
}

// LiveEvents is the live frame's meta.custom.events: columns of equal
// length, one row per event (mode "raw", count 1) or per lane and time
// bucket (mode "binned": tUs is the bucket's start, durationUs its width,
// busyUs the summed durations of its events, name/object/detail empty).
type LiveEvents struct {
	Mode       string   `json:"mode"`
	BucketUs   int64    `json:"bucketUs"`
	TUs        []int64  `json:"tUs"`
	DurationUs []int64  `json:"durationUs"`
	Lane       []string `json:"lane"`
	Name       []string `json:"name"`
	Object     []string `json:"object"`
	Detail     []string `json:"detail"`
	Count      []int64  `json:"count"`
	BusyUs     []int64  `json:"busyUs"`
}

type binKey struct {
	lane string
	idx  int64
}

type bin struct{ count, busyUs int64 }

// Live accumulates a live trace's updates into live frames. It is safe for
// one writer (the tracer's Live callback) and many readers.
type Live struct {
	mu       sync.Mutex
	status   LiveStatus
	ops      []tracer.OperatorProgress
	plan     string
	raw      []tracer.LiveEvent
	binned   bool
	bucketUs int64
	bins     map[binKey]bin
}

// NewLive starts an empty live trace (status running, nothing read yet).
func NewLive() *Live {
	return &Live{status: LiveStatus{Running: true}, bins: map[binKey]bin{}}
}

// Add folds one update in.
func (l *Live) Add(u tracer.LiveUpdate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status.Seq, l.status.ElapsedMs = u.Seq, u.Elapsed.Milliseconds()
	l.status.Running = u.Running
	l.status.EventsSoFar = max(l.status.EventsSoFar, u.EventsSoFar)
	l.status.EventsDropped += max(u.EventsDropped, 0)
	if u.PlanXML != "" {
		l.plan = u.PlanXML
		l.status.PlanOmitted = len(u.PlanXML) > MaxLivePlanBytes
	}
	if u.Operators != nil {
		l.ops = append(l.ops[:0], u.Operators[:min(len(u.Operators), MaxLiveOperators)]...)
	}
	for _, e := range u.Events {
		l.addEvent(e)
	}
}

// Finish marks the trace ended: stored as traceID, or failed with err.
func (l *Live) Finish(traceID string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status.Running, l.status.Done, l.status.TraceID = false, true, traceID
	if err != nil {
		l.status.Error = err.Error()
	}
}

// Status is the status so far.
func (l *Live) Status() LiveStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status
}

func (l *Live) addEvent(e tracer.LiveEvent) {
	if !liveLanes[e.Lane] {
		e.Lane = "other"
	}
	e.TUs = max(e.TUs, 0)
	e.Name, e.Object, e.Detail = cutText(e.Name), cutText(e.Object), cutText(e.Detail)
	if !l.binned {
		if len(l.raw) < MaxLiveRaw {
			l.raw = append(l.raw, e)
			return
		}
		l.binAll()
	}
	l.addBin(e)
}

// cutText bounds a text of a raw event (on a rune boundary).
func cutText(s string) string {
	if len(s) <= MaxLiveText {
		return s
	}
	r := []rune(s[:MaxLiveText])
	if len(r) > 0 && r[len(r)-1] == utf8.RuneError {
		r = r[:len(r)-1]
	}
	return string(r)
}

// binAll switches from raw events to bins, folding the raw ones in.
func (l *Live) binAll() {
	l.binned, l.bucketUs = true, minLiveBucketUs
	for _, r := range l.raw {
		l.addBin(r)
	}
	l.raw = nil
}

func (l *Live) addBin(e tracer.LiveEvent) {
	// widen the buckets until the event fits: doubling is bounded by the
	// 63 bits of a time
	for i := 0; i < 63 && e.TUs/l.bucketUs >= MaxLiveBuckets; i++ {
		l.widen()
	}
	k := binKey{e.Lane, e.TUs / l.bucketUs}
	b := l.bins[k]
	b.count++
	b.busyUs += max(e.DurationUs, 0)
	l.bins[k] = b
}

// widen doubles the bucket width, merging neighbouring buckets.
func (l *Live) widen() {
	l.bucketUs *= 2
	merged := make(map[binKey]bin, len(l.bins))
	for k, b := range l.bins {
		nk := binKey{k.lane, k.idx / 2}
		m := merged[nk]
		m.count += b.count
		m.busyUs += b.busyUs
		merged[nk] = m
	}
	l.bins = merged
}

// events is the events so far as columns.
func (l *Live) events() LiveEvents {
	ev := LiveEvents{Mode: "raw", TUs: []int64{}, DurationUs: []int64{}, Lane: []string{}, Name: []string{},
		Object: []string{}, Detail: []string{}, Count: []int64{}, BusyUs: []int64{}}
	if !l.binned {
		for _, e := range l.raw {
			ev.add(e.TUs, e.DurationUs, e.Lane, e.Name, e.Object, e.Detail, 1, max(e.DurationUs, 0))
		}
		return ev
	}
	ev.Mode, ev.BucketUs = "binned", l.bucketUs
	keys := make([]binKey, 0, len(l.bins))
	for k := range l.bins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].idx != keys[j].idx {
			return keys[i].idx < keys[j].idx
		}
		return keys[i].lane < keys[j].lane
	})
	for _, k := range keys {
		b := l.bins[k]
		ev.add(k.idx*l.bucketUs, l.bucketUs, k.lane, "", "", "", b.count, b.busyUs)
	}
	return ev
}

func (ev *LiveEvents) add(t, d int64, lane, name, object, detail string, count, busy int64) {
	ev.TUs, ev.DurationUs, ev.Lane = append(ev.TUs, t), append(ev.DurationUs, d), append(ev.Lane, lane)
	ev.Name, ev.Object, ev.Detail = append(ev.Name, name), append(ev.Object, object), append(ev.Detail, detail)
	ev.Count, ev.BusyUs = append(ev.Count, count), append(ev.BusyUs, busy)
}

// Frame is the live frame now: one row per operator (its progress), with
// the status, the events and the plan in meta.custom.
func (l *Live) Frame() *data.Frame {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.ops)
	ids, threads := make([]int64, n), make([]int64, n)
	phys, obj, state := make([]string, n), make([]string, n), make([]string, n)
	counters := make([][]int64, 7)
	for k := range counters {
		counters[k] = make([]int64, n)
	}
	for i, o := range l.ops {
		ids[i], threads[i] = int64(o.NodeID), int64(o.Threads)
		phys[i], obj[i], state[i] = cutText(o.PhysicalOp), cutText(o.Object), cutText(o.State)
		for k, v := range []int64{o.Rows, o.EstimateRows, o.LogicalReads, o.PhysicalReads, o.ReadAheadReads, o.ElapsedMs, o.CPUMs} {
			counters[k][i] = v
		}
	}
	fields := data.Fields{data.NewField("nodeId", nil, ids), data.NewField("physicalOp", nil, phys),
		data.NewField("name", nil, append([]string(nil), phys...)).SetConfig(&data.FieldConfig{DisplayName: "operator"}),
		data.NewField("object", nil, obj), data.NewField("state", nil, state)}
	for k, name := range []string{"actualRows", "estimatedRows", "logicalReads", "physicalReads", "readAheadReads", "actualElapsedMs", "actualCpuMs"} {
		f := data.NewField(name, nil, counters[k])
		if label, ok := liveLabels[name]; ok {
			f.SetConfig(&data.FieldConfig{DisplayName: label})
		}
		if name == "actualElapsedMs" || name == "actualCpuMs" {
			unit(f, "ms")
		}
		fields = append(fields, f)
	}
	fields = append(fields, data.NewField("threads", nil, threads))
	f := data.NewFrame(LiveFrameName, fields...)
	custom := map[string]any{"live": l.status, "events": l.events()}
	if l.plan != "" && !l.status.PlanOmitted {
		custom["planXml"] = l.plan
	}
	f.SetMeta(&data.FrameMeta{Custom: custom, PreferredVisualization: data.VisTypeTable})
	return f
}

// liveLabels name the live counters as the finished operators frame does
// (docs/frames.md, "Vocabulary"), said to be so far.
var liveLabels = map[string]string{
	"actualRows": "rows so far", "estimatedRows": "estimated rows",
	"logicalReads": "logical reads so far", "physicalReads": "physical reads so far",
	"readAheadReads": "read-ahead reads so far", "actualElapsedMs": "elapsed so far", "actualCpuMs": "CPU so far",
}

// LiveFrameJSON is the live frame as Grafana's data frame JSON (schema and
// data), what the viewer's event stream sends.
func LiveFrameJSON(f *data.Frame) ([]byte, error) {
	return json.Marshal(f)
}
