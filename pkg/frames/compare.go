package frames

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/compare"
)

// CompareMetrics are the fixed metric columns of compare_operators, as
// <metric>A, <metric>B and <metric>Changed (docs/frames.md §3.11): the
// comparison lists only the metrics a pair has, the frame has them all.
// The wait columns are one per WaitCategories entry (the shared wait
// table's categories, Other included).
var CompareMetrics = slices.Concat([]string{"reads", "pageReads", "rows", "executions", "durationUs", "spills", "tempdbWrites", "locks", "splits",
	"logRecords"}, waitMetrics(), []string{"phaseConsumeUs", "phaseBuildUs", "phaseProbeUs", "phaseEmitUs", "phaseReexecutedUs"})

func waitMetrics() []string {
	out := make([]string, len(WaitCategories))
	for i, c := range WaitCategories {
		out[i] = "wait" + c + "Us"
	}
	return out
}

// CompareGroups are each side's frame groups when a compare query names
// none: enough for two timelines on one axis.
var CompareGroups = []string{GroupTrace, GroupOperators, GroupLanes}

// Compare builds a compare response: the compare summary, compare_operators,
// then each side's frames (suffixed _a and _b, meta.custom.side) with both
// sides' times on A's clock, so the timelines are aligned at their starts.
func Compare(a, b *Source, res *compare.Result, req Request) (data.Frames, error) {
	if req.Groups == nil {
		req.Groups = CompareGroups
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	for _, s := range []*Source{a, b} {
		if s == nil || s.Bundle == nil || s.Bundle.Trace == nil {
			return nil, fmt.Errorf("trace %s has no timeline", traceIDOf(s))
		}
	}
	va, err := newView(a, req)
	if err != nil {
		return nil, err
	}
	out := data.Frames{compareFrame(a.TraceID, b.TraceID, res), compareOperatorsFrame(a.TraceID, b.TraceID, res)}
	fa, err := Build(a, req)
	if err != nil {
		return nil, err
	}
	fb, err := Build(onClock(b, va.zero), req)
	if err != nil {
		return nil, err
	}
	return append(append(out, side(fa, "a")...), side(fb, "b")...), nil
}

// onClock is s with its time zero moved to zero (a shallow copy: the
// stored trace is shared and never written).
func onClock(s *Source, zero time.Time) *Source {
	tr := *s.Bundle.Trace
	tr.ZeroTime = zero.Format(time.RFC3339Nano)
	b := *s.Bundle
	b.Trace = &tr
	c := *s
	c.Bundle = &b
	return &c
}

func side(fs data.Frames, name string) data.Frames {
	for _, f := range fs {
		f.Name += "_" + name
		if c, ok := f.Meta.Custom.(custom); ok {
			c["side"] = name
		}
	}
	return fs
}

func compareMeta(idA, idB string, extra custom) *data.FrameMeta {
	c := custom{"traceIds": []string{idA, idB}}
	for k, v := range extra {
		c[k] = v
	}
	return &data.FrameMeta{Custom: c, PreferredVisualization: data.VisTypeTable}
}

// compareFrame is the one-row summary.
func compareFrame(idA, idB string, r *compare.Result) *data.Frame {
	c := r.Counts
	f := data.NewFrame("compare",
		data.NewField("traceIdA", nil, []string{idA}), data.NewField("traceIdB", nil, []string{idB}),
		data.NewField("labelA", nil, []string{r.A.Label}), data.NewField("labelB", nil, []string{r.B.Label}),
		data.NewField("verdict", nil, []string{r.Verdict}), data.NewField("readsSource", nil, []string{r.ReadsSource}),
		data.NewField("same", nil, []int64{int64(c.Same)}), data.NewField("changed", nil, []int64{int64(c.Changed)}),
		data.NewField("replaced", nil, []int64{int64(c.Replaced)}), data.NewField("added", nil, []int64{int64(c.Added)}),
		data.NewField("removed", nil, []int64{int64(c.Removed)}),
		unit(data.NewField("durationUsA", nil, []int64{r.A.DurationUs}), "µs"), unit(data.NewField("durationUsB", nil, []int64{r.B.DurationUs}), "µs"))
	extra := custom{"labels": []string{r.A.Label, r.B.Label}, "readsSource": r.ReadsSource, "counts": c,
		"verdict": r.Verdict, "statement": r.Statement}
	if len(r.Statements) > 0 {
		extra["statements"] = r.Statements // the statement pairs (issue 30)
	}
	f.Meta = compareMeta(idA, idB, extra)
	return f
}

// compareOperatorsFrame has one row per operator (pair).
func compareOperatorsFrame(idA, idB string, r *compare.Result) *data.Frame {
	n := len(r.Operators)
	status, how, verdict := make([]string, n), make([]string, n), make([]string, n)
	nameA, nameB, objA, objB := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nodeA, nodeB := make([]*int64, n), make([]*int64, n)
	stmtA, stmtB, stmtText := make([]*int64, n), make([]*int64, n), make([]string, n)
	spans := [4][]*int64{make([]*int64, n), make([]*int64, n), make([]*int64, n), make([]*int64, n)}
	ma, mb, changed := map[string][]*float64{}, map[string][]*float64{}, map[string][]bool{}
	for _, m := range CompareMetrics {
		ma[m], mb[m], changed[m] = make([]*float64, n), make([]*float64, n), make([]bool, n)
	}
	for i, d := range r.Operators {
		status[i], how[i], verdict[i] = d.Status, d.How, d.Verdict
		if st := d.Statement; st != nil {
			stmtA[i], stmtB[i], stmtText[i] = statementID(st.A), statementID(st.B), st.Text
		}
		if o := d.A; o != nil {
			nodeA[i], nameA[i], objA[i] = ptr(int64(o.NodeID)), o.Name, o.Object
			spans[0][i], spans[1][i] = ptr(o.StartUs), ptr(o.EndUs)
		}
		if o := d.B; o != nil {
			nodeB[i], nameB[i], objB[i] = ptr(int64(o.NodeID)), o.Name, o.Object
			spans[2][i], spans[3][i] = ptr(o.StartUs), ptr(o.EndUs)
		}
		for _, m := range d.Metrics {
			if _, ok := ma[m.Name]; ok {
				ma[m.Name][i], mb[m.Name][i], changed[m.Name][i] = m.A, m.B, m.Changed
			}
		}
	}
	fields := []*data.Field{
		data.NewField("status", nil, status), data.NewField("how", nil, how), data.NewField("verdict", nil, verdict),
		data.NewField("nodeIdA", nil, nodeA), data.NewField("nodeIdB", nil, nodeB),
		data.NewField("nameA", nil, nameA), data.NewField("nameB", nil, nameB), data.NewField("objectA", nil, objA), data.NewField("objectB", nil, objB),
		unit(data.NewField("startUsA", nil, spans[0]), "µs"), unit(data.NewField("endUsA", nil, spans[1]), "µs"),
		unit(data.NewField("startUsB", nil, spans[2]), "µs"), unit(data.NewField("endUsB", nil, spans[3]), "µs"),
		data.NewField("statementIdA", nil, stmtA), data.NewField("statementIdB", nil, stmtB), data.NewField("statement", nil, stmtText),
	}
	for _, m := range CompareMetrics {
		fa, fb := data.NewField(m+"A", nil, ma[m]), data.NewField(m+"B", nil, mb[m])
		if u := metricUnit(m); u != "" {
			unit(fa, u)
			unit(fb, u)
		}
		fields = append(fields, fa, fb, data.NewField(m+"Changed", nil, changed[m]))
	}
	f := data.NewFrame("compare_operators", fields...)
	f.Meta = compareMeta(idA, idB, nil)
	return f
}

// statementID is a statement tree node id, null where the side lacks the
// statement (or has no tree).
func statementID(id int) *int64 {
	if id < 0 {
		return nil
	}
	return ptr(int64(id))
}

func metricUnit(m string) string {
	if strings.HasSuffix(m, "Us") {
		return "µs"
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
