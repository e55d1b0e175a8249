package frames

import (
	"fmt"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// WaitCategories are the wait categories of timeline.WaitCategory, in the
// order the probe frame lists them.
var WaitCategories = []string{"Io", "Cpu", "Concurrency", "Parallelism", "Other"}

// Probe builds the numeric-wide frame an alert rule reads (docs/frames.md
// §3.9): one value per measure, waits by category in ms. It follows the data
// plane numeric contract (https://grafana.com/developers/dataplane/numeric)
// and every number carries its own label set (metric=<name>, plus category
// for waits): alert evaluation keys each number by its labels alone and
// rejects a response where two share one (grafana/grafana
// pkg/services/ngalert/eval/eval.go), so distinct field names are not enough.
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
		return unit(data.NewField(name, data.Labels{"metric": name}, []float64{v}), u)
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
		f := unit(data.NewField("waits", data.Labels{"metric": "waits", "category": c}, []float64{float64(waitUs[c]) / 1000}), "ms")
		fields = append(fields, f)
	}
	f := data.NewFrame("probe", fields...)
	f.Meta = &data.FrameMeta{Type: data.FrameTypeNumericWide, TypeVersion: data.FrameTypeVersion{0, 1},
		Custom: custom{"traceId": src.TraceID, "truncated": b.Result.Truncated}}
	return f, nil
}

// maxProbeMetrics bounds a probe query's metrics list (each name is one of
// the frame's few metrics, so anything longer is not a real selection).
const maxProbeMetrics = 32

// ProbeMetrics are the metric names of the probe frame, in its order.
var ProbeMetrics = []string{"duration", "reads", "writes", "spills", "locks", "events", "lost", "waits"}

// CheckProbeMetrics refuses a probe query's metrics list that names an
// unknown metric, one twice, or too many; the plugin checks it before the
// probe runs.
func CheckProbeMetrics(metrics []string) error {
	if len(metrics) > maxProbeMetrics {
		return fmt.Errorf("probe metrics: %d names, at most %d", len(metrics), maxProbeMetrics)
	}
	seen := map[string]bool{}
	for _, m := range metrics {
		if !slices.Contains(ProbeMetrics, m) {
			return fmt.Errorf("probe metrics: %q is not a probe metric (docs/frames.md §3.9)", m)
		}
		if seen[m] {
			return fmt.Errorf("probe metrics: %q named twice", m)
		}
		seen[m] = true
	}
	return nil
}

// SelectProbeMetrics keeps the numbers of a probe frame whose metric is
// named in metrics (all of them when metrics is empty), so an alert rule
// can evaluate one measure: Grafana's expressions have no way to pick a
// series by label, a threshold applies to every number it receives.
func SelectProbeMetrics(f *data.Frame, metrics []string) (*data.Frame, error) {
	if len(metrics) == 0 {
		return f, nil
	}
	if err := CheckProbeMetrics(metrics); err != nil {
		return nil, err
	}
	out := data.NewFrame(f.Name)
	out.Meta = f.Meta
	for _, fd := range f.Fields {
		if slices.Contains(metrics, fd.Name) {
			out.Fields = append(out.Fields, fd)
		}
	}
	return out, nil
}
