package findings

import (
	"sort"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// WaitTypeTotal is one wait type's waits in a trace: the rows of the
// terminal's "Top waits" line and of the frames' wait_stats, counted by
// one rule (WaitUs) so every surface says the same time.
type WaitTypeTotal struct {
	WaitType string
	// Class is the type's class in the one wait table
	// (pkg/timeline/waitclasses.tsv): "Buffer IO", "Lock", …, "Other".
	Class string
	Waits int
	// WaitUs is the time waited, µs; Untimed counts the waits seen only by
	// their end whose duration read 0 ms (shorter than 1 ms, time unknown).
	WaitUs  int64
	Untimed int
	// FirstUs is the start of the type's first wait on the trace clock.
	FirstUs int64
}

// WaitsByType totals a trace's waits per wait type, most time first (then
// most waits, then name).
func WaitsByType(tr *timeline.Trace) []WaitTypeTotal {
	byType := map[string]*WaitTypeTotal{}
	for _, w := range tr.Lanes.Wait {
		a := byType[w.WaitType]
		if a == nil {
			a = &WaitTypeTotal{WaitType: w.WaitType, Class: timeline.WaitClass(w.WaitType), FirstUs: w.T}
			byType[w.WaitType] = a
		}
		a.Waits++
		a.WaitUs += WaitUs(w)
		a.FirstUs = min(a.FirstUs, w.T)
		if w.UnderOneMs && w.DurationSource == "duration_ms" {
			a.Untimed++
		}
	}
	out := make([]WaitTypeTotal, 0, len(byType))
	for _, a := range byType {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].WaitUs != out[j].WaitUs {
			return out[i].WaitUs > out[j].WaitUs
		}
		if out[i].Waits != out[j].Waits {
			return out[i].Waits > out[j].Waits
		}
		return out[i].WaitType < out[j].WaitType
	})
	return out
}
