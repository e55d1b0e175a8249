package frames

import (
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// opStats counts, per operator, the lane entries tied to it.
type opStats struct {
	reads, writes, locks, waits, spills, splits, logs, other int64
	waitUs                                                   int64
	byConfidence                                             [5]int64
}

func (s *opStats) matched() int64 {
	return s.reads + s.writes + s.locks + s.waits + s.spills + s.other
}

// operatorStats walks every lane once. Spills are the memory events that
// spilled; other memory events, splits, log records and file I/O count as
// "other" for the arcs (and splits and logs also by themselves).
func (v *view) operatorStats() map[timeline.NodeID]*opStats {
	out := make(map[timeline.NodeID]*opStats, len(v.tr.Operators))
	get := func(m timeline.Match) *opStats {
		s := out[m.NodeID]
		if s == nil {
			s = &opStats{}
			out[m.NodeID] = s
		}
		if int(m.Confidence) < len(s.byConfidence) {
			s.byConfidence[m.Confidence]++
		}
		return s
	}
	l := &v.tr.Lanes
	for i := range l.Read {
		get(l.Read[i].Match).reads++
	}
	for i := range l.Write {
		get(l.Write[i].Match).writes++
	}
	for i := range l.Lock {
		get(l.Lock[i].Match).locks++
	}
	for i := range l.Wait {
		s := get(l.Wait[i].Match)
		s.waits++
		s.waitUs += int64(l.Wait[i].DurationUs)
	}
	for i := range l.Memory {
		if s := get(l.Memory[i].Match); l.Memory[i].Spill {
			s.spills++
		} else {
			s.other++
		}
	}
	for i := range l.Split {
		s := get(l.Split[i].Match)
		s.splits++
		s.other++
	}
	for i := range l.Log {
		s := get(l.Log[i].Match)
		s.logs++
		s.other++
	}
	for i := range l.IO {
		get(l.IO[i].Match).other++
	}
	return out
}

func (v *view) statsOf(all map[timeline.NodeID]*opStats, id int) *opStats {
	if s := all[timeline.NodeID(id)]; s != nil {
		return s
	}
	return &opStats{}
}

func intPtr(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func (v *view) runtime(id int) Runtime {
	return v.src.Runtime[id] // the zero Runtime (all nil) when unknown
}

// runtimeLabels name the plan's runtime counters by what they count.
var runtimeLabels = map[string]string{
	"logicalReads": "logical reads (plan)", "physicalReads": "physical reads (plan)",
	"actualElapsedMs": "elapsed (plan)", "actualCpuMs": "CPU (plan)",
}

func (v *view) operatorsFrame() *data.Frame {
	ops := v.tr.Operators
	stats := v.operatorStats()
	n := len(ops)
	ids, parents := make([]int64, n), make([]*int64, n)
	phys, logi, beh, obj, src := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	names := make([]string, n)
	starts, ends := make([]time.Time, n), make([]time.Time, n)
	startUs, emitUs, endUs, durUs := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	counts := make([][]int64, 13)
	for i := range counts {
		counts[i] = make([]int64, n)
	}
	rt := make([][]*int64, 6)
	for i := range rt {
		rt[i] = make([]*int64, n)
	}
	est := make([]*float64, n)
	notExec, notExecWhy := make([]bool, n), make([]string, n)
	execs, rebinds, rewinds := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, o := range ops {
		notExec[i], notExecWhy[i] = o.NotExecuted, o.NotExecutedReason
		execs[i], rebinds[i], rewinds[i] = o.Executions, o.Rebinds, o.Rewinds
		ids[i], parents[i] = int64(o.ID), intPtr(o.Parent)
		phys[i], logi[i], beh[i], obj[i], src[i] = o.PhysicalOp, o.LogicalOp, o.Behavior, o.Object, o.TimeSource
		names[i] = o.DisplayName()
		starts[i], ends[i] = v.at(o.Start), v.at(o.End)
		startUs[i], emitUs[i], endUs[i], durUs[i] = o.Start, o.FirstEmit, o.End, o.End-o.Start
		s := v.statsOf(stats, o.ID)
		for k, c := range []int64{s.reads, s.writes, s.locks, s.waits, s.spills, s.splits, s.logs, s.waitUs, s.matched(),
			s.byConfidence[timeline.ConfidenceExact], s.byConfidence[timeline.ConfidenceStrong],
			s.byConfidence[timeline.ConfidenceWeak], s.byConfidence[timeline.ConfidenceLow]} {
			counts[k][i] = c
		}
		r := v.runtime(o.ID)
		for k, p := range []*int64{r.ActualRows, r.Executions, r.ElapsedMs, r.CPUMs, r.LogicalReads, r.PhysicalReads} {
			rt[k][i] = p
		}
		est[i] = r.EstimatedRows
	}
	fields := []*data.Field{
		data.NewField("nodeId", nil, ids),
		data.NewField("parentId", nil, parents),
		data.NewField("physicalOp", nil, phys),
		// name: as SSMS shows it (Key Lookup for a Clustered Index Seek
		// with Lookup="1"); what every view labels the operator with.
		data.NewField("name", nil, names).SetConfig(&data.FieldConfig{DisplayName: "operator"}),
		data.NewField("logicalOp", nil, logi),
		data.NewField("behavior", nil, beh),
		data.NewField("object", nil, obj),
		data.NewField("timeSource", nil, src),
		data.NewField("start", nil, starts),
		data.NewField("end", nil, ends),
		unit(data.NewField("startUs", nil, startUs), "µs"),
		unit(data.NewField("firstEmitUs", nil, emitUs), "µs"),
		unit(data.NewField("endUs", nil, endUs), "µs"),
		unit(data.NewField("durationUs", nil, durUs), "µs"),
	}
	for k, name := range []string{"reads", "writes", "locks", "waits", "spills", "splits", "logRecords", "waitUs", "matched",
		"matchExact", "matchStrong", "matchWeak", "matchLow"} {
		f := data.NewField(name, nil, counts[k])
		switch name {
		case "waitUs":
			unit(f, "µs")
			f.Config.DisplayName = "time waited"
		case "reads":
			// the trace's physical_page_read events, not the plan's
			// logical reads (docs/frames.md, "Vocabulary")
			f.SetConfig(&data.FieldConfig{DisplayName: "page reads (trace)"})
		}
		fields = append(fields, f)
	}
	for k, name := range []string{"actualRows", "actualExecutions", "actualElapsedMs", "actualCpuMs", "logicalReads", "physicalReads"} {
		f := data.NewField(name, nil, rt[k])
		if name == "actualElapsedMs" || name == "actualCpuMs" {
			unit(f, "ms")
		}
		if label, ok := runtimeLabels[name]; ok {
			if f.Config == nil {
				f.Config = &data.FieldConfig{}
			}
			f.Config.DisplayName = label
		}
		fields = append(fields, f)
	}
	fields = append(fields, data.NewField("estimatedRows", nil, est),
		data.NewField("notExecuted", nil, notExec),
		data.NewField("notExecutedReason", nil, notExecWhy),
		data.NewField("executions", nil, execs),
		data.NewField("rebinds", nil, rebinds),
		data.NewField("rewinds", nil, rewinds),
	)
	f := data.NewFrame("operators", fields...)
	f.Meta = v.meta(nil)
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}

func (v *view) phasesFrame() *data.Frame {
	var ids, startUs, endUs, execution, executions []int64
	var kinds []string
	var starts, ends []time.Time
	for _, o := range v.tr.Operators {
		for _, p := range o.Phases {
			ids = append(ids, int64(o.ID))
			execution, executions = append(execution, int64(p.Execution)), append(executions, p.Executions)
			kinds = append(kinds, string(p.Kind))
			starts, ends = append(starts, v.at(p.Start)), append(ends, v.at(max(p.End, p.Start+v.resolutionUs)))
			startUs, endUs = append(startUs, p.Start), append(endUs, p.End)
		}
	}
	f := data.NewFrame("phases",
		hidden(data.NewField("nodeId", nil, orEmpty(ids))),
		data.NewField("phase", nil, orEmpty(kinds)),
		data.NewField("start", nil, orEmpty(starts)),
		data.NewField("end", nil, orEmpty(ends)),
		hidden(unit(data.NewField("startUs", nil, orEmpty(startUs)), "µs")),
		hidden(unit(data.NewField("endUs", nil, orEmpty(endUs)), "µs")),
		hidden(data.NewField("execution", nil, orEmpty(execution))),
		hidden(data.NewField("executions", nil, orEmpty(executions))),
	)
	f.Meta = v.meta(nil)
	return f
}

// threadsFrame holds the per-thread bars of parallel operators.
func (v *view) threadsFrame() *data.Frame {
	var ids, threads, startUs, endUs, rows, execs []int64
	var starts, ends []time.Time
	var states, sources []string
	for _, o := range v.tr.Operators {
		for _, t := range o.Threads {
			ids, threads = append(ids, int64(o.ID)), append(threads, int64(t.Thread))
			starts, ends = append(starts, v.at(t.Start)), append(ends, v.at(max(t.End, t.Start+v.resolutionUs)))
			startUs, endUs = append(startUs, t.Start), append(endUs, t.End)
			states = append(states, strconv.Itoa(o.ID)+" "+o.DisplayName()+" thread "+strconv.Itoa(t.Thread))
			rows, execs, sources = append(rows, t.Rows), append(execs, t.Executions), append(sources, t.Source)
		}
	}
	f := data.NewFrame("threads",
		data.NewField("start", nil, orEmpty(starts)),
		data.NewField("end", nil, orEmpty(ends)),
		data.NewField("state", nil, orEmpty(states)),
		hidden(data.NewField("nodeId", nil, orEmpty(ids))),
		hidden(data.NewField("thread", nil, orEmpty(threads))),
		hidden(unit(data.NewField("startUs", nil, orEmpty(startUs)), "µs")),
		hidden(unit(data.NewField("endUs", nil, orEmpty(endUs)), "µs")),
		hidden(data.NewField("rows", nil, orEmpty(rows))),
		hidden(data.NewField("executions", nil, orEmpty(execs))),
		hidden(data.NewField("source", nil, orEmpty(sources))),
	)
	f.Meta = v.meta(nil)
	return f
}

// arcs are the Node Graph arc fields: each operator's share of its tied
// events per kind, with Grafana's named colours.
var arcs = []struct{ name, color string }{
	{"reads", "blue"}, {"writes", "orange"}, {"locks", "purple"}, {"waits", "yellow"}, {"spills", "red"}, {"other", "green"},
}

func (v *view) planFrames() (*data.Frame, *data.Frame) {
	ops := v.tr.Operators
	stats := v.operatorStats()
	n := len(ops)
	ids, titles, subtitles := make([]string, n), make([]string, n), make([]string, n)
	mainstat, events := make([]float64, n), make([]int64, n)
	arcVals := make([][]float64, len(arcs))
	for k := range arcVals {
		arcVals[k] = make([]float64, n)
	}
	dLogical, dBehavior, dObject, dSource := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	dActual, dEst := make([]*int64, n), make([]*float64, n)
	dReads, dSpills := make([]int64, n), make([]int64, n)
	dNotExec := make([]string, n)
	var eIDs, eSrc, eDst []string
	var eRows []*int64
	for i, o := range ops {
		id := strconv.Itoa(o.ID)
		ids[i], titles[i], subtitles[i] = id, o.DisplayName(), o.Object
		if o.Object == "" {
			subtitles[i] = o.LogicalOp
		}
		mainstat[i] = float64(o.End-o.Start) / 1000
		s := v.statsOf(stats, o.ID)
		events[i] = s.matched()
		if total := s.matched(); total > 0 {
			for k, c := range []int64{s.reads, s.writes, s.locks, s.waits, s.spills, s.other} {
				arcVals[k][i] = float64(c) / float64(total)
			}
		}
		r := v.runtime(o.ID)
		dLogical[i], dBehavior[i], dObject[i], dSource[i] = o.LogicalOp, o.Behavior, o.Object, o.TimeSource
		dActual[i], dEst[i], dReads[i], dSpills[i] = r.ActualRows, r.EstimatedRows, s.reads, s.spills
		if o.NotExecuted {
			dNotExec[i] = "not executed: " + o.NotExecutedReason
		}
		if o.Parent != nil {
			p := strconv.Itoa(*o.Parent)
			eIDs, eSrc, eDst = append(eIDs, id+"-"+p), append(eSrc, id), append(eDst, p)
			eRows = append(eRows, r.ActualRows)
		}
	}
	fields := []*data.Field{
		data.NewField("id", nil, ids),
		data.NewField("title", nil, titles),
		data.NewField("subtitle", nil, subtitles),
		data.NewField("mainstat", nil, mainstat).SetConfig(&data.FieldConfig{Unit: "ms", DisplayName: "elapsed"}),
		data.NewField("secondarystat", nil, events).SetConfig(&data.FieldConfig{DisplayName: "events"}),
	}
	for k, a := range arcs {
		fields = append(fields, data.NewField("arc__"+a.name, nil, arcVals[k]).SetConfig(&data.FieldConfig{
			DisplayName: a.name, Color: map[string]any{"mode": "fixed", "fixedColor": a.color}}))
	}
	fields = append(fields,
		data.NewField("detail__logicalOp", nil, dLogical).SetConfig(&data.FieldConfig{DisplayName: "logical operator"}),
		data.NewField("detail__behavior", nil, dBehavior).SetConfig(&data.FieldConfig{DisplayName: "behavior"}),
		data.NewField("detail__object", nil, dObject).SetConfig(&data.FieldConfig{DisplayName: "object"}),
		data.NewField("detail__timeSource", nil, dSource).SetConfig(&data.FieldConfig{DisplayName: "times from"}),
		data.NewField("detail__actualRows", nil, dActual).SetConfig(&data.FieldConfig{DisplayName: "actual rows"}),
		data.NewField("detail__estimatedRows", nil, dEst).SetConfig(&data.FieldConfig{DisplayName: "estimated rows"}),
		data.NewField("detail__reads", nil, dReads).SetConfig(&data.FieldConfig{DisplayName: "page reads"}),
		data.NewField("detail__spills", nil, dSpills).SetConfig(&data.FieldConfig{DisplayName: "spills"}),
		data.NewField("detail__notExecuted", nil, dNotExec).SetConfig(&data.FieldConfig{DisplayName: "not executed"}),
	)
	nodes := data.NewFrame("nodes", fields...)
	nodes.Meta = v.meta(nil)
	nodes.Meta.PreferredVisualization = data.VisTypeNodeGraph
	edges := data.NewFrame("edges",
		data.NewField("id", nil, orEmpty(eIDs)),
		data.NewField("source", nil, orEmpty(eSrc)),
		data.NewField("target", nil, orEmpty(eDst)),
		data.NewField("mainstat", nil, orEmpty(eRows)).SetConfig(&data.FieldConfig{DisplayName: "rows"}),
	)
	edges.Meta = v.meta(nil)
	edges.Meta.PreferredVisualization = data.VisTypeNodeGraph
	return nodes, edges
}

// orEmpty turns nil into an empty slice: a field needs a typed vector.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
