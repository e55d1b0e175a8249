package frames

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/testtrace"
)

// Each output returns what its panel reads, the panel's frame first
// (Grafana's Flame Graph draws series[0]; the Node Graph reads nodes and
// edges by name), whatever frame groups the query also names.
func TestOutputsPutThePanelsFrameFirst(t *testing.T) {
	for _, c := range []struct {
		output string
		want   []string
	}{
		{OutputNodeGraph, []string{"nodes", "edges"}},
		{OutputFlameGraph, []string{"callstacks"}},
		{OutputTable, []string{"operators"}},
		{OutputStateTimeline, append(phaseFrameNames(sampleSource()), laneFrameNames()...)},
	} {
		fs := build(t, sampleSource(), Request{Output: c.output, Groups: []string{GroupTrace}})
		if got := names(fs); !slices.Equal(got, c.want) {
			t.Errorf("output %s: frames %v, want %v", c.output, got, c.want)
		}
	}
	// each operator's phases are one row, named after the operator
	ph := build(t, sampleSource(), Request{Output: OutputStateTimeline})[0]
	state := field(t, ph, "state")
	if state.Config.DisplayNameFromDS != "0 Hash Match" || state.Len() != 2 || state.At(0) != "build" || state.At(1) != "probe" {
		t.Errorf("phases_0: %q %v", state.Config.DisplayNameFromDS, []any{state.At(0), state.At(1)})
	}
	if err := (Request{Output: "flamegraph"}).Validate(); err == nil || !strings.Contains(err.Error(), "flameGraph") {
		t.Errorf("unknown output: %v", err)
	}
}

// phaseFrameNames: one frame per operator with phases, in plan order.
func phaseFrameNames(src *Source) []string {
	var out []string
	for _, o := range src.Bundle.Trace.Operators {
		if len(o.Phases) > 0 {
			out = append(out, "phases_"+strconv.Itoa(o.ID))
		}
	}
	return out
}

func laneFrameNames() []string {
	var out []string
	for _, l := range LaneNames {
		out = append(out, "lane_"+l)
	}
	return out
}

// A trace without call stacks still answers the Flame Graph with its
// fields (a zero root) and says why it is empty.
func TestFlameGraphOutputWithoutStacks(t *testing.T) {
	src := sampleSource()
	src.Bundle.Trace.Stacks, src.Stacks = nil, nil
	fs := build(t, src, Request{Output: OutputFlameGraph})
	f := fs[0]
	for _, n := range []string{"label", "level", "value", "self"} {
		field(t, f, n)
	}
	if f.Rows() != 1 || len(f.Meta.Notices) != 1 || !strings.Contains(f.Meta.Notices[0].Text, "callStacks") {
		t.Fatalf("rows %d, notices %+v", f.Rows(), f.Meta.Notices)
	}
}

// On the State Timeline output every row's start is ScaledEpoch plus one
// millisecond per µs from the trace start, so starts a µs apart are
// distinct milliseconds (on the real clock many share one), and the
// extent in meta.custom.timeBase covers every row.
func TestStateTimelineOutputScalesMicroseconds(t *testing.T) {
	b, err := testtrace.Generated(400, 3)
	if err != nil {
		t.Fatal(err)
	}
	src := &Source{TraceID: sampleID, Bundle: b}
	real := build(t, src, Request{Groups: []string{GroupLanes}, MaxDataPoints: 100_000})
	scaled := build(t, src, Request{Output: OutputStateTimeline, MaxDataPoints: 100_000})
	origin := b.Trace.Start
	read := byName(t, scaled, "lane_read")
	tb := customOf(t, read)["timeBase"].(custom)
	toMs := tb["toMs"].(int64)
	for _, f := range scaled {
		startUs, start := field(t, f, "startUs"), field(t, f, "start")
		for i := 0; i < f.Rows(); i++ {
			want := time.UnixMilli(startUs.At(i).(int64) - origin).UTC()
			if got := start.At(i).(time.Time); !got.Equal(want) {
				t.Fatalf("%s row %d: start %v, want %v", f.Name, i, got, want)
			}
			if ms := want.UnixMilli(); ms < 0 || ms > toMs {
				t.Fatalf("%s row %d: %d ms outside the time base 0–%d", f.Name, i, ms, toMs)
			}
		}
	}
	distinct := func(f *data.Frame, name string, key func(any) int64) int {
		seen := map[int64]bool{}
		fl := field(t, f, name)
		for i := 0; i < fl.Len(); i++ {
			seen[key(fl.At(i))] = true
		}
		return len(seen)
	}
	us := distinct(read, "startUs", func(v any) int64 { return v.(int64) })
	ms := func(v any) int64 { return v.(time.Time).UnixMilli() }
	if got := distinct(read, "start", ms); got != us {
		t.Errorf("scaled read lane: %d distinct start times for %d distinct µs starts", got, us)
	}
	// the reason for the output: on the real clock the same lane collapses
	if got := distinct(byName(t, real, "lane_read"), "start", ms); got >= us {
		t.Fatalf("the generated trace has no sub-millisecond reads (%d ms for %d µs): the test proves nothing", got, us)
	}
}

// FuzzOutput: any output name is refused before anything is built, or is
// one of Outputs and answers with that panel's frame first.
func FuzzOutput(f *testing.F) {
	for _, o := range append(slices.Clone(Outputs), "", "flamegraph", "nodeGraph ", "table\x00", "stateTimeline,table") {
		f.Add(o)
	}
	first := map[string]string{OutputNodeGraph: "nodes", OutputFlameGraph: "callstacks", OutputStateTimeline: "phases_0", OutputTable: "operators"}
	f.Fuzz(func(t *testing.T, o string) {
		fs, err := Build(sampleSource(), Request{Output: o})
		if o != "" && !slices.Contains(Outputs, o) {
			if err == nil || !strings.Contains(err.Error(), "output") {
				t.Fatalf("output %q: err %v, want refused", o, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("output %q: %v", o, err)
		}
		want := first[o]
		if o == "" {
			want = "trace"
		}
		if len(fs) == 0 || fs[0].Name != want {
			t.Fatalf("output %q: frames %v, want %s first", o, names(fs), want)
		}
	})
}

// A time range on the scaled clock is the window of the same µs from the
// trace start; one off that clock, or covering the trace, is the whole trace.
func TestScaledWindow(t *testing.T) {
	ms := func(n int64) time.Time { return ScaledEpoch.Add(time.Duration(n) * time.Millisecond) }
	now := time.Now()
	for _, c := range []struct {
		from, to time.Time
		want     *Window
	}{
		{ms(100), ms(200), &Window{FromUs: -50 + 100, ToUs: -50 + 200}},
		{ms(-10), ms(300), &Window{FromUs: -50, ToUs: 250}},
		{ms(0), ms(1000), nil},              // covers the trace (−50…900)
		{now.Add(-6 * time.Hour), now, nil}, // Grafana's default range: not the scaled clock
		{ms(2000), ms(3000), nil},           // after the trace
		{time.Time{}, ms(10), nil},
	} {
		got := ScaledWindow(c.from, c.to, -50, 900)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("ScaledWindow(%v, %v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
