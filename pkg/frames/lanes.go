package frames

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// LaneNames are the lanes, in response order; each becomes frame "lane_<name>".
var LaneNames = []string{"read", "write", "lock", "wait", "memory", "split", "log", "io"}

// laneSpec tells the generic lane code how to read one lane's entries.
type laneSpec[E any] struct {
	name   string
	point  bool // entries are instants (end = start)
	traced bool
	start  func(*E) int64
	end    func(*E) int64
	match  func(*E) timeline.Match
	// node is match(e).NodeID without copying the Match (the hot path).
	node  func(*E) timeline.NodeID
	state func(*E) string
	// stack is the entry's call-stack id (0: none); nil for lanes whose
	// events carry no stack.
	stack func(*E) uint32
	// details builds the lane-specific fields for the selected entries.
	details func(es []E, idx []int) []*data.Field
}

func (v *view) laneFrames() data.Frames {
	l := &v.tr.Lanes
	g := v.src.Bundle.Run.Groups
	mod := v.src.Bundle.Run.Modification
	return data.Frames{
		laneFrame(v, pageSpec(l, "read"), l.Read),
		laneFrame(v, pageSpec(l, "write"), l.Write),
		laneFrame(v, lockSpec(l, g.Locks), l.Lock),
		laneFrame(v, waitSpec(g.Waits), l.Wait),
		laneFrame(v, memorySpec(g.Memory), l.Memory),
		laneFrame(v, splitSpec(l, g.Splits), l.Split),
		laneFrame(v, logSpec(l, g.Log || mod), l.Log),
		laneFrame(v, ioSpec(g.FileIO), l.IO),
	}
}

// bounds returns [lo, hi): the entries starting inside the window.
func bounds[E any](v *view, s *laneSpec[E], es []E) (int, int) {
	lo := sort.Search(len(es), func(i int) bool { return s.start(&es[i]) >= v.win.FromUs })
	hi := sort.Search(len(es), func(i int) bool { return s.start(&es[i]) > v.win.ToUs })
	return lo, hi
}

// inWindow calls fn for every entry in the window, in start order: for
// point lanes the entries starting inside it, for intervals those that
// overlap it.
func inWindow[E any](v *view, s *laneSpec[E], es []E, fn func(i int)) {
	lo, hi := bounds(v, s, es)
	if !s.point {
		for i := 0; i < lo; i++ {
			if s.end(&es[i]) >= v.win.FromUs {
				fn(i)
			}
		}
	}
	for i := lo; i < hi; i++ {
		fn(i)
	}
}

// countInWindow is how many entries inWindow visits.
func countInWindow[E any](v *view, s *laneSpec[E], es []E) int {
	lo, hi := bounds(v, s, es)
	n := hi - lo
	if !s.point {
		for i := 0; i < lo; i++ {
			if s.end(&es[i]) >= v.win.FromUs {
				n++
			}
		}
	}
	return n
}

func laneFrame[E any](v *view, s laneSpec[E], es []E) *data.Frame {
	n := countInWindow(v, &s, es)
	extra := custom{"lane": s.name, "traced": s.traced, "total": len(es), "inWindow": n, "window": v.win,
		"resolutionUs": v.resolutionUs, "binned": false}
	var f *data.Frame
	if n > v.budget {
		var bins int
		var width int64
		f, bins, width = binnedLane(v, &s, es)
		extra["binned"], extra["bins"], extra["binWidthUs"] = true, bins, width
		v.binned = append(v.binned, s.name)
	} else {
		idx := make([]int, 0, n)
		inWindow(v, &s, es, func(i int) { idx = append(idx, i) })
		f = rawLane(v, &s, es, idx)
	}
	f.Meta = v.meta(extra)
	f.Meta.PreferredVisualizationPluginID = ReplayPanelID
	return f
}

func stateField(lane string, vals []string) *data.Field {
	return data.NewField("state", nil, vals).SetConfig(&data.FieldConfig{DisplayNameFromDS: lane})
}

func rawLane[E any](v *view, s *laneSpec[E], es []E, idx []int) *data.Frame {
	n := len(idx)
	starts, ends := make([]time.Time, n), make([]time.Time, n)
	startUs, endUs := make([]int64, n), make([]int64, n)
	states, rules, confs, cands := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nodes, stacks := make([]*int64, n), make([]*int64, n)
	ambiguous := make([]bool, n)
	index := make([]int64, n)
	for k, i := range idx {
		e := &es[i]
		index[k] = int64(i)
		a, b := s.start(e), s.end(e)
		startUs[k], endUs[k] = a, b
		starts[k], ends[k] = v.at(a), v.at(max(b, a+v.resolutionUs))
		states[k] = s.state(e)
		m := s.match(e)
		nodes[k], rules[k], confs[k] = nodePtr(m.NodeID), m.Rule.String(), m.Confidence.String()
		ambiguous[k], cands[k] = m.Ambiguous, candidates(v.tr.CandidatesOf(&m))
		if s.stack != nil {
			if id := s.stack(e); id != 0 {
				v := int64(id)
				stacks[k] = &v
			}
		}
	}
	fields := []*data.Field{
		data.NewField("start", nil, starts),
		data.NewField("end", nil, ends),
		stateField(s.name, states),
		hidden(data.NewField("nodeId", nil, nodes)),
		hidden(unit(data.NewField("startUs", nil, startUs), "µs")),
		hidden(unit(data.NewField("endUs", nil, endUs), "µs")),
		hidden(data.NewField("rule", nil, rules)),
		hidden(data.NewField("confidence", nil, confs)),
		hidden(data.NewField("ambiguous", nil, ambiguous)),
		hidden(data.NewField("candidates", nil, cands)),
		// the entry's position in the whole lane: findings' evidence ids
		// ("<lane>/<index>") resolve to a row through it, whatever the window
		hidden(data.NewField("index", nil, index)),
		hidden(data.NewField("stackId", nil, stacks)),
	}
	for _, f := range s.details(es, idx) {
		fields = append(fields, hidden(f))
	}
	return data.NewFrame("lane_"+s.name, fields...)
}

// binnedLane counts the window's entries per (bin, operator). Pass one finds
// the operators present (node ids are small, so a slice indexes them); the
// bin count is the budget divided among them; pass two counts.
func binnedLane[E any](v *view, s *laneSpec[E], es []E) (*data.Frame, int, int64) {
	slotOf := make([]int32, 2, 64) // index node+1: 0 is unmatched
	slotOf[0], slotOf[1] = -1, -1
	inWindow(v, s, es, func(i int) {
		k := int(s.node(&es[i])) + 1
		for k >= len(slotOf) {
			slotOf = append(slotOf, -1)
		}
		slotOf[k] = 0
	})
	present := 0
	var slotNode []timeline.NodeID
	for k := range slotOf {
		if slotOf[k] == 0 {
			slotOf[k] = int32(present)
			slotNode = append(slotNode, timeline.NodeID(k-1))
			present++
		}
	}
	bins := max(1, v.budget/present)
	span := v.win.ToUs - v.win.FromUs + 1
	width := (span + int64(bins) - 1) / int64(bins)
	counts := make([]int64, bins*present)
	first := make([]int64, bins*present)
	last := make([]int64, bins*present)
	inWindow(v, s, es, func(i int) {
		e := &es[i]
		a := s.start(e)
		b := min(int((max(a, v.win.FromUs)-v.win.FromUs)/width), bins-1)
		c := b*present + int(slotOf[int(s.node(e))+1])
		if counts[c] == 0 {
			first[c], last[c] = a, s.end(e)
		} else {
			first[c], last[c] = min(first[c], a), max(last[c], s.end(e))
		}
		counts[c]++
	})
	rows := 0
	for _, c := range counts {
		if c > 0 {
			rows++
		}
	}
	labels := v.operatorLabels()
	starts, ends := make([]time.Time, 0, rows), make([]time.Time, 0, rows)
	startUs, endUs := make([]int64, 0, rows), make([]int64, 0, rows)
	states, nodes := make([]string, 0, rows), make([]*int64, 0, rows)
	cnt, firsts, lasts := make([]int64, 0, rows), make([]int64, 0, rows), make([]int64, 0, rows)
	for c, n := range counts {
		if n == 0 {
			continue
		}
		b, slot := c/present, c%present
		a := v.win.FromUs + int64(b)*width
		z := a + width
		node := slotNode[slot]
		starts, ends = append(starts, v.at(a)), append(ends, v.at(z))
		startUs, endUs = append(startUs, a), append(endUs, z)
		states, nodes = append(states, labels(node)), append(nodes, nodePtr(node))
		cnt, firsts, lasts = append(cnt, n), append(firsts, first[c]), append(lasts, last[c])
	}
	f := data.NewFrame("lane_"+s.name,
		data.NewField("start", nil, starts),
		data.NewField("end", nil, ends),
		stateField(s.name, states),
		hidden(data.NewField("nodeId", nil, nodes)),
		hidden(unit(data.NewField("startUs", nil, startUs), "µs")),
		hidden(unit(data.NewField("endUs", nil, endUs), "µs")),
		hidden(data.NewField("count", nil, cnt)),
		hidden(unit(data.NewField("firstUs", nil, firsts), "µs")),
		hidden(unit(data.NewField("lastUs", nil, lasts), "µs")),
	)
	return f, bins, width
}

// operatorLabels returns "<id> <physical op>" for a node, "unmatched" for
// none.
func (v *view) operatorLabels() func(timeline.NodeID) string {
	names := make(map[timeline.NodeID]string, len(v.tr.Operators))
	for _, o := range v.tr.Operators {
		names[timeline.NodeID(o.ID)] = strconv.Itoa(o.ID) + " " + o.DisplayName()
	}
	return func(n timeline.NodeID) string {
		if n < 0 {
			return "unmatched"
		}
		if s, ok := names[n]; ok {
			return s
		}
		return strconv.Itoa(int(n))
	}
}

// candidates writes an ambiguous match's candidate operators as "1,4".
func candidates(ns []timeline.NodeID) string {
	var b strings.Builder
	for i, n := range ns {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(n)))
	}
	return b.String()
}

// col builds a field from the selected entries.
func col[E, T any](name string, es []E, idx []int, get func(*E) T) *data.Field {
	vals := make([]T, len(idx))
	for k, i := range idx {
		vals[k] = get(&es[i])
	}
	return data.NewField(name, nil, vals)
}

func objectOr(o *timeline.ObjectName, none string) string {
	if o == nil {
		return none
	}
	return o.String()
}

func pageSpec(l *timeline.Lanes, name string) laneSpec[timeline.PageEvent] {
	type E = timeline.PageEvent
	return laneSpec[E]{name: name, point: true, traced: true,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.T },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		state: func(e *E) string { return objectOr(l.ObjectOf(e.Object), "unresolved") },
		stack: func(e *E) uint32 { return e.Stack },
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("database", es, idx, func(e *E) int64 { return int64(e.DatabaseID) }),
				col("file", es, idx, func(e *E) int64 { return int64(e.FileID) }),
				col("page", es, idx, func(e *E) int64 { return int64(e.PageID) }),
				col("pageId", es, idx, func(e *E) string { return pageID(e.FileID, e.PageID) }),
				col("object", es, idx, func(e *E) string { return objectOr(l.ObjectOf(e.Object), "") }),
			}
		}}
}

func pageID(file, page uint64) string {
	return strconv.FormatUint(file, 10) + ":" + strconv.FormatUint(page, 10)
}

func lockSpec(l *timeline.Lanes, traced bool) laneSpec[timeline.LockInterval] {
	type E = timeline.LockInterval
	return laneSpec[E]{name: "lock", traced: traced,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.End },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		state: func(e *E) string { return e.Mode },
		stack: func(e *E) uint32 { return e.Stack },
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("resourceType", es, idx, func(e *E) string { return e.ResourceType }),
				col("resource", es, idx, func(e *E) string { return e.Resource }),
				col("object", es, idx, func(e *E) string { return objectOr(l.ObjectOf(e.Object), "") }),
				col("row", es, idx, func(e *E) string { return e.Row }),
				col("transactionId", es, idx, func(e *E) int64 { return e.TransactionID }),
				col("open", es, idx, func(e *E) bool { return e.Open || e.HeldToEnd }),
				col("heldToEnd", es, idx, func(e *E) bool { return e.HeldToEnd || e.Open }),
				col("acquireSeen", es, idx, func(e *E) bool { return e.AcquireSeen }),
			}
		}}
}

func waitSpec(traced bool) laneSpec[timeline.WaitInterval] {
	type E = timeline.WaitInterval
	return laneSpec[E]{name: "wait", traced: traced,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.End },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		state: func(e *E) string { return e.WaitType },
		stack: func(e *E) uint32 { return e.Stack },
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("category", es, idx, func(e *E) string { return e.Category }),
				unit(col("durationUs", es, idx, func(e *E) int64 { return int64(e.DurationUs) }), "µs"),
				col("open", es, idx, func(e *E) bool { return e.Open }),
			}
		}}
}

func memorySpec(traced bool) laneSpec[timeline.MemoryEvent] {
	type E = timeline.MemoryEvent
	return laneSpec[E]{name: "memory", point: true, traced: traced,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.T },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		state: func(e *E) string { return e.Kind },
		stack: func(e *E) uint32 { return e.Stack },
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("detail", es, idx, func(e *E) string { return e.Detail }),
				unit(col("grantedKB", es, idx, func(e *E) int64 { return int64(e.GrantedMemoryKB) }), "kbytes"),
				unit(col("usedKB", es, idx, func(e *E) int64 { return int64(e.UsedMemoryKB) }), "kbytes"),
				col("spill", es, idx, func(e *E) bool { return e.Spill }),
			}
		}}
}

func splitSpec(l *timeline.Lanes, traced bool) laneSpec[timeline.SplitEvent] {
	type E = timeline.SplitEvent
	return laneSpec[E]{name: "split", point: true, traced: traced,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.T },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		stack: func(e *E) uint32 { return e.Stack },
		state: func(e *E) string {
			if e.Operation == "" {
				return "page_split"
			}
			return e.Operation
		},
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("file", es, idx, func(e *E) int64 { return int64(e.FileID) }),
				col("page", es, idx, func(e *E) int64 { return int64(e.PageID) }),
				col("newFile", es, idx, func(e *E) int64 { return int64(e.NewFileID) }),
				col("newPage", es, idx, func(e *E) int64 { return int64(e.NewPageID) }),
				col("object", es, idx, func(e *E) string { return objectOr(l.ObjectOf(e.Object), "") }),
			}
		}}
}

func logSpec(l *timeline.Lanes, traced bool) laneSpec[timeline.LogEvent] {
	type E = timeline.LogEvent
	return laneSpec[E]{name: "log", point: true, traced: traced,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.T },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		stack: func(e *E) uint32 { return e.Stack },
		state: func(e *E) string {
			if e.Operation == "" {
				return e.Kind
			}
			return e.Operation
		},
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("kind", es, idx, func(e *E) string { return e.Kind }),
				col("context", es, idx, func(e *E) string { return e.Context }),
				col("object", es, idx, func(e *E) string { return objectOr(l.ObjectOf(e.Object), "") }),
				col("transactionId", es, idx, func(e *E) int64 { return e.TransactionID }),
				unit(col("size", es, idx, func(e *E) int64 { return int64(e.Size) }), "bytes"),
			}
		}}
}

func ioSpec(traced bool) laneSpec[timeline.IOInterval] {
	type E = timeline.IOInterval
	return laneSpec[E]{name: "io", traced: traced,
		start: func(e *E) int64 { return e.T }, end: func(e *E) int64 { return e.End },
		match: func(e *E) timeline.Match { return e.Match }, node: func(e *E) timeline.NodeID { return e.NodeID },
		state: func(e *E) string {
			if e.Write {
				return "write"
			}
			return "read"
		},
		details: func(es []E, idx []int) []*data.Field {
			return []*data.Field{
				col("database", es, idx, func(e *E) int64 { return int64(e.DatabaseID) }),
				col("file", es, idx, func(e *E) int64 { return int64(e.FileID) }),
				col("offset", es, idx, func(e *E) int64 { return int64(e.Offset) }),
				unit(col("size", es, idx, func(e *E) int64 { return int64(e.Size) }), "bytes"),
				unit(col("durationUs", es, idx, func(e *E) int64 { return int64(e.DurationUs) }), "µs"),
				col("completed", es, idx, func(e *E) bool { return e.Completed }),
				col("open", es, idx, func(e *E) bool { return e.Open }),
			}
		}}
}
