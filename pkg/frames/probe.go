package frames

import (
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// WaitCategories are the wait categories of timeline.WaitCategory, in the
// order the probe frame lists them.
var WaitCategories = []string{"Io", "Cpu", "Concurrency", "Parallelism"}

// Probe builds the numeric-wide frame an alert rule reads (docs/frames.md
// §3.9): one value per measure, waits by category in ms.
func Probe(src *Source) (*data.Frame, error) {
	if src == nil || src.Bundle == nil || src.Bundle.Trace == nil {
		return nil, fmt.Errorf("probe %s has no timeline", traceIDOf(src))
	}
	b, tr := src.Bundle, src.Bundle.Trace
	spills := 0
	for _, m := range tr.Lanes.Memory {
		if m.Spill {
			spills++
		}
	}
	waitUs := map[string]uint64{}
	for _, w := range tr.Lanes.Wait {
		waitUs[w.Category] += w.DurationUs
	}
	num := func(name string, v float64, u string) *data.Field {
		return unit(data.NewField(name, nil, []float64{v}), u)
	}
	fields := []*data.Field{
		num("duration", float64(b.Result.DurationUs)/1000, "ms"),
		num("reads", float64(len(tr.Lanes.Read)), "short"),
		num("writes", float64(len(tr.Lanes.Write)), "short"),
		num("spills", float64(spills), "short"),
		num("locks", float64(len(tr.Lanes.Lock)), "short"),
		num("events", float64(b.Result.Events), "short"),
		num("lost", float64(int64(b.Result.Lost)+b.Result.DroppedEvents), "short"),
	}
	for _, c := range WaitCategories {
		f := unit(data.NewField("waits", data.Labels{"category": c}, []float64{float64(waitUs[c]) / 1000}), "ms")
		fields = append(fields, f)
	}
	f := data.NewFrame("probe", fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeNumericWide, TypeVersion: data.FrameTypeVersion{0, 1},
		Custom: custom{"traceId": src.TraceID, "truncated": b.Result.Truncated}}
	return f, nil
}
