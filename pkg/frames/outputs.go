package frames

import (
	"fmt"
	"slices"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Outputs a query may ask for instead of the whole response: each is what
// one of Grafana's built-in panels reads, first in the response because
// those panels draw data.series[0] or join every frame they get
// (docs/frames.md §3.12).
const (
	// OutputNodeGraph: `nodes` then `edges` (the Node Graph panel).
	OutputNodeGraph = "nodeGraph"
	// OutputFlameGraph: `callstacks` alone (the Flame Graph panel draws
	// series[0]).
	OutputFlameGraph = "flameGraph"
	// OutputStateTimeline: each operator's phases (`phases_<nodeId>`) and
	// the lanes, on the scaled time base.
	OutputStateTimeline = "stateTimeline"
	// OutputTable: `operators` alone (the Table panel).
	OutputTable = "table"
)

// Outputs lists every output, for validation and the editor.
var Outputs = []string{OutputNodeGraph, OutputFlameGraph, OutputStateTimeline, OutputTable}

// ScaledEpoch is time zero of the State Timeline output: the trace's first
// µs is this instant and every µs after it is one millisecond. Grafana's
// time values are whole epoch milliseconds and the State Timeline joins
// frames on them, so on the real clock every event of one millisecond
// would fall on one x value; scaled, events a µs apart stay apart. The
// Unix epoch keeps the scaled times readable: 00:00:01.500 is 1,500 µs
// into the trace.
var ScaledEpoch = time.Unix(0, 0).UTC()

// ScaledWindow is the window a time range on the scaled clock stands for,
// for a trace spanning startUs–endUs: the range in ms from ScaledEpoch is
// the window in µs from the trace start. Like a view's window on the real
// clock (docs/frames.md §4.2) it is clipped to the trace, and nil — the
// whole trace — when the range misses the trace, covers it, or is not on
// the scaled clock at all (a dashboard's default "last 6 hours").
func ScaledWindow(from, to time.Time, startUs, endUs int64) *Window {
	if from.IsZero() || to.IsZero() {
		return nil
	}
	a := startUs + from.Sub(ScaledEpoch).Milliseconds()
	b := startUs + to.Sub(ScaledEpoch).Milliseconds()
	if b < startUs || a > endUs || (a <= startUs && b >= endUs) {
		return nil
	}
	return &Window{FromUs: max(a, startUs), ToUs: min(b, endUs)}
}

func validOutput(o string) error {
	if o == "" || slices.Contains(Outputs, o) {
		return nil
	}
	return fmt.Errorf("output %q is not one of %v", o, Outputs)
}

// output builds the frames of one output; the request's Groups do not
// apply.
func (v *view) output(name string) data.Frames {
	switch name {
	case OutputNodeGraph:
		nodes, edges := v.planFrames()
		return data.Frames{nodes, edges}
	case OutputFlameGraph:
		return data.Frames{v.flameGraphFrame()}
	case OutputStateTimeline:
		return v.stateTimelineFrames()
	default: // OutputTable; Validate refused anything else
		return data.Frames{v.operatorsFrame()}
	}
}

// flameGraphFrame is the call-stack frame even for a trace without
// stacks: a root of zero with a notice, so the panel says there is
// nothing rather than that fields are missing.
func (v *view) flameGraphFrame() *data.Frame {
	tree := v.src.Stacks
	if tree == nil {
		tree = v.stackTree()
	}
	if tree != nil && tree.Stacks > 0 {
		return CallStacks(v.src.TraceID, tree)
	}
	f := CallStacks(v.src.TraceID, &callstack.Tree{})
	f.Meta.Notices = []data.Notice{{Severity: data.NoticeSeverityInfo,
		Text: "this trace has no call stacks: trace it with the call stacks option (options.callStacks)"}}
	return f
}

// stateTimelineFrames is each operator's phases and the lanes with their
// start and end fields moved to the scaled time base (ScaledEpoch + 1 ms
// per µs from the trace's start). The µs fields stay as they are.
func (v *view) stateTimelineFrames() data.Frames {
	out := append(v.operatorPhaseFrames(), v.laneFrames()...)
	origin := v.tr.Start
	base := custom{"scale": "1 µs = 1 ms", "epoch": ScaledEpoch, "originUs": origin,
		"fromMs": 0, "toMs": v.tr.End - origin}
	for _, f := range out {
		v.rescale(f, origin)
		c, _ := f.Meta.Custom.(custom)
		c["timeBase"] = base
	}
	return out
}

// rescale rewrites the frame's start and end times from its startUs and
// endUs fields; an end is at least one drawing quantum after its start,
// as on the real clock, so an instant still draws.
func (v *view) rescale(f *data.Frame, origin int64) {
	startUs, _ := f.FieldByName("startUs")
	endUs, _ := f.FieldByName("endUs")
	start, _ := f.FieldByName("start")
	end, _ := f.FieldByName("end")
	if startUs == nil || endUs == nil || start == nil || end == nil {
		return
	}
	at := func(us int64) time.Time { return ScaledEpoch.Add(time.Duration(us-origin) * time.Millisecond) }
	for i := 0; i < f.Rows(); i++ {
		a, _ := startUs.At(i).(int64)
		b, _ := endUs.At(i).(int64)
		start.Set(i, at(a))
		end.Set(i, at(max(b, a+v.resolutionUs)))
	}
}

// operatorPhaseFrames is one frame per operator with phases: its phases
// are the states of one State Timeline row named "<id> <operator>". The
// phases frame holds every operator's phases in one field, which the panel
// would draw as one row of overlapping states.
func (v *view) operatorPhaseFrames() data.Frames {
	label := v.operatorLabels()
	var out data.Frames
	for _, o := range v.tr.Operators {
		n := len(o.Phases)
		if n == 0 {
			continue
		}
		starts, ends := make([]time.Time, n), make([]time.Time, n)
		startUs, endUs, kinds := make([]int64, n), make([]int64, n), make([]string, n)
		for i, p := range o.Phases {
			startUs[i], endUs[i], kinds[i] = p.Start, p.End, string(p.Kind)
		}
		id := int64(o.ID)
		f := data.NewFrame(fmt.Sprintf("phases_%d", o.ID),
			data.NewField("start", nil, starts),
			data.NewField("end", nil, ends),
			stateField(label(timeline.NodeID(o.ID)), kinds),
			hidden(data.NewField("nodeId", nil, repeat(id, n))),
			hidden(unit(data.NewField("startUs", nil, startUs), "µs")),
			hidden(unit(data.NewField("endUs", nil, endUs), "µs")),
		)
		f.Meta = v.meta(custom{"nodeId": o.ID})
		out = append(out, f)
	}
	return out
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
