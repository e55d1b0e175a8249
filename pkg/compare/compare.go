package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Side is one of the two traces.
type Side struct {
	// Label names the side for people (a file name, "before").
	Label string
	Trace *timeline.Trace
	// Plan is the side's actual plan statement (findings.PlanStatement);
	// nil when there is none.
	Plan *showplan.Statement
	// Statements are the planned statements of the side's statement tree
	// (StatementsOf); when both sides have them, statements are matched
	// first and operators within each matched pair.
	Statements []StatementSide
}

// Status of an operator in the comparison.
const (
	StatusSame     = "same"     // matched, same kind and object, no significant change
	StatusChanged  = "changed"  // matched, same kind and object, figures changed
	StatusReplaced = "replaced" // matched, another kind or object took its place
	StatusAdded    = "added"    // only in B
	StatusRemoved  = "removed"  // only in A
)

// Result is a comparison of two traces.
type Result struct {
	A SideSummary `json:"a"`
	B SideSummary `json:"b"`
	// ReadsSource says what "reads" counts: "logical" (the plans' runtime
	// counters, both sides have them) or "physical" (physical_page_read
	// events).
	ReadsSource string `json:"readsSource"`
	// Operators: matched pairs in A's plan order, then removed (A order),
	// then added (B order).
	Operators []OperatorDiff `json:"operators"`
	// Statement compares the statement-wide totals.
	Statement []Metric `json:"statement"`
	Counts    Counts   `json:"counts"`
	// Verdict is one line for the whole statement.
	Verdict string `json:"verdict"`
	// Statements compares the matched statements (pairs, then removed,
	// then added) when both sides have statement trees.
	Statements []StatementDiff `json:"statements,omitempty"`
}

// Counts sums the operators by status.
type Counts struct {
	Same     int `json:"same"`
	Changed  int `json:"changed"`
	Replaced int `json:"replaced"`
	Added    int `json:"added"`
	Removed  int `json:"removed"`
}

// SideSummary describes one side.
type SideSummary struct {
	Label       string `json:"label"`
	Operators   int    `json:"operators"`
	HasCounters bool   `json:"hasCounters"`
	// Statements counts the side's planned statements (0 without a tree).
	Statements int `json:"statements,omitempty"`
	// DurationUs is the batch's elapsed time (timeline Summary.ElapsedUs);
	// LeadInUs the part before the first operator, OperatorUs the
	// operators' own time (first start to last end).
	DurationUs int64 `json:"durationUs"`
	LeadInUs   int64 `json:"leadInUs"`
	OperatorUs int64 `json:"operatorUs"`
	// ZeroTime is the side's time zero (RFC 3339): both timelines start at
	// their own batch start, so they are aligned at start on one axis.
	ZeroTime string `json:"zeroTime"`
}

// OperatorSide is one side's operator.
type OperatorSide struct {
	NodeID     int    `json:"nodeId"`
	Name       string `json:"name"`
	PhysicalOp string `json:"physicalOp"`
	LogicalOp  string `json:"logicalOp"`
	Object     string `json:"object,omitempty"`
	StartUs    int64  `json:"startUs"`
	EndUs      int64  `json:"endUs"`
}

// Label is "Name (object)" or Name.
func (o *OperatorSide) Label() string {
	if o.Object != "" {
		return o.Name + " (" + o.Object + ")"
	}
	return o.Name
}

// OperatorDiff compares one operator (pair).
type OperatorDiff struct {
	Status string `json:"status"`
	// How is the matching step that paired them (empty for added and
	// removed operators).
	How     string        `json:"how,omitempty"`
	A       *OperatorSide `json:"a"`
	B       *OperatorSide `json:"b"`
	Metrics []Metric      `json:"metrics"`
	Verdict string        `json:"verdict"`
	// Statement is the statement (pair) the operator belongs to; nil when
	// the sides have no statement trees.
	Statement *StatementRef `json:"statement,omitempty"`
}

// Metric is one figure on both sides; A or B is nil where the side does not
// have the operator or the figure (rows without runtime counters).
type Metric struct {
	Name string `json:"name"`
	// Label says what the figure counts, in the vocabulary of
	// docs/frames.md: "logical reads" or "page reads in the trace" for
	// reads, "elapsed" and "operator time" for the statement's times.
	Label   string   `json:"label,omitempty"`
	Unit    string   `json:"unit"`
	A       *float64 `json:"a"`
	B       *float64 `json:"b"`
	Changed bool     `json:"changed"`
}

// Metric returns the named metric of d.
func (d *OperatorDiff) Metric(name string) (Metric, bool) { return metricNamed(d.Metrics, name) }

func metricNamed(ms []Metric, name string) (Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Compare matches the operators of a and b and compares them.
func Compare(a, b Side) (*Result, error) {
	if a.Trace == nil || b.Trace == nil {
		return nil, errors.New("compare: both sides need a timeline")
	}
	pa, pb := findings.NewProfile(a.Trace, a.Plan), findings.NewProfile(b.Trace, b.Plan)
	r := &Result{
		A: summary(a, pa), B: summary(b, pb), ReadsSource: "physical",
	}
	r.A.Statements, r.B.Statements = len(a.Statements), len(b.Statements)
	if pa.HasCounters && pb.HasCounters {
		r.ReadsSource = "logical"
	}
	logical := r.ReadsSource == "logical"
	if len(a.Statements) > 0 && len(b.Statements) > 0 {
		// the whole batch: every statement of each side, matched or not
		ta, tb := r.compareStatements(a.Statements, b.Statements)
		logical = r.ReadsSource == "logical"
		r.count()
		r.Statement = totalMetrics(ta, tb, logical)
		r.A.LeadInUs, r.A.OperatorUs = int64(ta.leadIn), int64(ta.operator)
		r.B.LeadInUs, r.B.OperatorUs = int64(tb.leadIn), int64(tb.operator)
		r.Verdict = r.overall() + r.statementsSaid()
		return r, nil
	}
	r.Operators = operatorDiffs(pa, pb, logical)
	r.count()
	r.Statement = statementMetrics(pa, pb, logical)
	r.Verdict = r.overall()
	return r, nil
}

// operatorDiffs matches the operators of two profiles by plan shape:
// matched pairs in A's plan order, then removed, then added.
func operatorDiffs(pa, pb *findings.Profile, logical bool) []OperatorDiff {
	r := &Result{}
	matches := Match(pa.Operators, pb.Operators)
	usedA, usedB := make([]bool, len(pa.Operators)), make([]bool, len(pb.Operators))
	for _, m := range matches {
		usedA[m.A], usedB[m.B] = true, true
		oa, ob := &pa.Operators[m.A], &pb.Operators[m.B]
		d := OperatorDiff{How: m.How, A: side(oa), B: side(ob), Metrics: metrics(oa, ob, logical)}
		d.Status = status(oa, ob, d.Metrics)
		d.Verdict = verdict(&d)
		r.Operators = append(r.Operators, d)
	}
	r.unmatched(pa, usedA, StatusRemoved, logical)
	r.unmatched(pb, usedB, StatusAdded, logical)
	return r.Operators
}

// count sums the operators by status.
func (r *Result) count() {
	for _, d := range r.Operators {
		switch d.Status {
		case StatusSame:
			r.Counts.Same++
		case StatusChanged:
			r.Counts.Changed++
		case StatusReplaced:
			r.Counts.Replaced++
		case StatusAdded:
			r.Counts.Added++
		case StatusRemoved:
			r.Counts.Removed++
		}
	}
}

// unmatched adds the operators of p not in used, as removed (A's) or
// added (B's).
func (r *Result) unmatched(p *findings.Profile, used []bool, status string, logical bool) {
	for i := range p.Operators {
		if used[i] {
			continue
		}
		o := &p.Operators[i]
		d := OperatorDiff{Status: status}
		if status == StatusRemoved {
			d.A, d.Metrics = side(o), metrics(o, nil, logical)
		} else {
			d.B, d.Metrics = side(o), metrics(nil, o, logical)
		}
		d.Verdict = verdict(&d)
		r.Operators = append(r.Operators, d)
	}
}

func summary(s Side, p *findings.Profile) SideSummary {
	f := p.Facts()
	return SideSummary{Label: s.Label, Operators: len(p.Operators), HasCounters: p.HasCounters, DurationUs: f.ElapsedUs,
		LeadInUs: f.LeadInUs, OperatorUs: f.OperatorUs, ZeroTime: s.Trace.ZeroTime}
}

// readsLabel names what "reads" counts on both sides.
func readsLabel(logical bool) string {
	if logical {
		return "logical reads"
	}
	return "page reads in the trace"
}

func side(o *findings.OperatorStats) *OperatorSide {
	return &OperatorSide{NodeID: o.NodeID, Name: o.Name, PhysicalOp: o.PhysicalOp, LogicalOp: o.LogicalOp, Object: o.Object, StartUs: o.StartUs, EndUs: o.EndUs}
}

// status decides between same, changed and replaced.
func status(a, b *findings.OperatorStats, ms []Metric) string {
	if a.PhysicalOp != b.PhysicalOp || a.LogicalOp != b.LogicalOp || !strings.EqualFold(a.Object, b.Object) {
		return StatusReplaced
	}
	for _, m := range ms {
		if m.Changed {
			return StatusChanged
		}
	}
	return StatusSame
}

// metricDef describes how one metric is read and when a change counts.
type metricDef struct {
	name, unit string
	label      string
	// floor is the least absolute change that counts; rel the least
	// change relative to the larger side.
	floor, rel float64
	get        func(o *findings.OperatorStats) (float64, bool)
}

func counter(f func(c *findings.Counters) int64) func(o *findings.OperatorStats) (float64, bool) {
	return func(o *findings.OperatorStats) (float64, bool) {
		if o.Counters == nil {
			return 0, false
		}
		return float64(f(o.Counters)), true
	}
}

func count(f func(o *findings.OperatorStats) int) func(o *findings.OperatorStats) (float64, bool) {
	return func(o *findings.OperatorStats) (float64, bool) { return float64(f(o)), true }
}

// Significance: page and row counts change when they move by at least 8
// pages or 1 row and 10%; times by 1 ms and 20%; spills, locks, splits and
// log records on any change.
func metricDefs(logical bool) []metricDef {
	reads := metricDef{name: "reads", label: readsLabel(logical), unit: "pages", floor: 8, rel: 0.1, get: count(func(o *findings.OperatorStats) int { return o.Reads })}
	if logical {
		reads.get = counter(func(c *findings.Counters) int64 { return c.LogicalReads })
	}
	return []metricDef{
		reads,
		{"pageReads", "pages", "page reads in the trace", 8, 0.1, count(func(o *findings.OperatorStats) int { return o.Reads })},
		{"rows", "rows", "rows", 1, 0.1, counter(func(c *findings.Counters) int64 { return c.Rows })},
		{"executions", "count", "executions", 1, 0.1, counter(func(c *findings.Counters) int64 { return c.Executions })},
		{"durationUs", "us", "time", 1000, 0.2, func(o *findings.OperatorStats) (float64, bool) { return float64(o.DurationUs), !o.NotExecuted }},
		{"spills", "count", "spills", 1, 0, count(func(o *findings.OperatorStats) int { return o.Spills + o.ExchangeSpills })},
		{"tempdbWrites", "pages", "", 8, 0.1, count(func(o *findings.OperatorStats) int { return o.TempdbWrites })},
		{"locks", "count", "locks", 1, 0, count(func(o *findings.OperatorStats) int { return o.Locks })},
		{"splits", "count", "splits", 1, 0, count(func(o *findings.OperatorStats) int { return o.Splits })},
		{"logRecords", "count", "", 1, 0, count(func(o *findings.OperatorStats) int { return o.LogRecords })},
	}
}

// metrics compares one pair (either side may be nil).
func metrics(a, b *findings.OperatorStats, logical bool) []Metric {
	var out []Metric
	for _, def := range metricDefs(logical) {
		out = append(out, measure(def, a, b))
	}
	// Waits by category and phases by kind, over the union of both sides.
	cats, phases := map[string]bool{}, map[string]bool{}
	for _, o := range []*findings.OperatorStats{a, b} {
		if o == nil {
			continue
		}
		for c := range o.WaitUs {
			cats[c] = true
		}
		for p := range o.PhaseUs {
			phases[p] = true
		}
	}
	for _, c := range sorted(cats) {
		out = append(out, measure(metricDef{"wait" + c + "Us", "us", c + " waits", 1000, 0.2, func(o *findings.OperatorStats) (float64, bool) {
			return float64(o.WaitUs[c]), true
		}}, a, b))
	}
	for _, p := range sorted(phases) {
		out = append(out, measure(metricDef{"phase" + strings.ToUpper(p[:1]) + p[1:] + "Us", "us", p + " phase", 1000, 0.2, func(o *findings.OperatorStats) (float64, bool) {
			v, ok := o.PhaseUs[p]
			return float64(v), ok
		}}, a, b))
	}
	return out
}

func measure(def metricDef, a, b *findings.OperatorStats) Metric {
	m := Metric{Name: def.name, Label: def.label, Unit: def.unit}
	if a != nil {
		if v, ok := def.get(a); ok {
			m.A = &v
		}
	}
	if b != nil {
		if v, ok := def.get(b); ok {
			m.B = &v
		}
	}
	if m.A != nil && m.B != nil {
		x, y := *m.A, *m.B
		d := abs64f(y - x)
		m.Changed = d > 0 && d >= def.floor && d >= def.rel*max(x, y)
	}
	return m
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// statementMetrics compares the totals of one statement on each side.
func statementMetrics(pa, pb *findings.Profile, logical bool) []Metric {
	return totalMetrics(totalsOf(pa, logical), totalsOf(pb, logical), logical)
}

// totals are a statement's (or a batch's) figures that compare compares.
type totals struct {
	elapsed, operator, leadIn       float64
	reads, pageReads, waits, spills float64
	locks                           float64
	granted, used                   float64
	grants                          bool
}

func totalsOf(p *findings.Profile, logical bool) totals {
	f := p.Facts()
	t := totals{elapsed: float64(f.ElapsedUs), operator: float64(f.OperatorUs), leadIn: float64(f.LeadInUs),
		pageReads: float64(p.PageReads), locks: float64(len(p.Trace.Lanes.Lock))}
	t.reads = t.pageReads
	if logical {
		t.reads = float64(p.LogicalReads)
	}
	for _, m := range p.Trace.Lanes.Memory {
		if m.Spill {
			t.spills++
		}
	}
	for _, w := range p.Trace.Lanes.Wait {
		t.waits += float64(findings.WaitUs(w))
	}
	if p.Grant != nil {
		t.granted, t.used, t.grants = float64(p.Grant.GrantedKB), float64(p.Grant.UsedKB), true
	}
	return t
}

// batchTotals are a side's whole batch: its elapsed (every statement's
// timeline has the batch's; the longest when they differ), the counts
// summed over every planned statement, the lead-in to the first operator
// of any statement and the operators' time from there to the last one's
// end (the timelines share the batch's time zero), the grants summed.
func batchTotals(ps []*findings.Profile, logical bool) totals {
	var t totals
	first, last := -1.0, -1.0
	for _, p := range ps {
		one := totalsOf(p, logical)
		t.elapsed = max(t.elapsed, one.elapsed)
		t.reads, t.pageReads, t.waits = t.reads+one.reads, t.pageReads+one.pageReads, t.waits+one.waits
		t.spills, t.locks = t.spills+one.spills, t.locks+one.locks
		t.granted, t.used, t.grants = t.granted+one.granted, t.used+one.used, t.grants || one.grants
		if len(p.Operators) > 0 {
			if first < 0 || one.leadIn < first {
				first = one.leadIn
			}
			last = max(last, one.leadIn+one.operator)
		}
	}
	if first >= 0 {
		t.leadIn, t.operator = first, last-first
	}
	return t
}

// totalMetrics compares two sides' totals.
func totalMetrics(ta, tb totals, logical bool) []Metric {
	both := func(name, unit string, floor, rel float64, a, b float64) Metric {
		m := Metric{Name: name, Label: statementLabels[name], Unit: unit, A: &a, B: &b}
		d := abs64f(b - a)
		m.Changed = d > 0 && d >= floor && d >= rel*max(a, b)
		return m
	}
	out := []Metric{
		both("durationUs", "us", 1000, 0.2, ta.elapsed, tb.elapsed),
		both("operatorUs", "us", 1000, 0.2, ta.operator, tb.operator),
		both("leadInUs", "us", 1000, 0.2, ta.leadIn, tb.leadIn),
		both("reads", "pages", 8, 0.1, ta.reads, tb.reads),
		both("pageReads", "pages", 8, 0.1, ta.pageReads, tb.pageReads),
		both("waitUs", "us", 1000, 0.2, ta.waits, tb.waits),
		both("spills", "count", 1, 0, ta.spills, tb.spills),
		both("locks", "count", 1, 0, ta.locks, tb.locks),
	}
	out[3].Label = readsLabel(logical)
	if ta.grants && tb.grants {
		out = append(out, both("grantedKB", "KB", 64, 0.1, ta.granted, tb.granted),
			both("usedKB", "KB", 64, 0.1, ta.used, tb.used))
	}
	return out
}

// statementLabels name the statement's figures (reads are labelled by
// their kind where they are made).
var statementLabels = map[string]string{
	"durationUs": "elapsed", "operatorUs": "operator time", "leadInUs": "lead-in", "pageReads": "page reads in the trace",
	"waitUs": "waits", "spills": "spills", "locks": "locks", "grantedKB": "grant", "usedKB": "used memory",
}

// verdictOrder is the order in which changes are worth telling.
var verdictOrder = []string{"spills", "reads", "tempdbWrites", "durationUs", "rows", "executions", "locks", "splits", "logRecords"}

// changes lists d's significant changes, most telling first, at most n.
func changes(ms []Metric, n int) []string {
	var out []string
	add := func(m Metric, label string) {
		if m.Changed && len(out) < n {
			out = append(out, fmt.Sprintf("%s %s → %s", label, value(m.Unit, *m.A), value(m.Unit, *m.B)))
		}
	}
	for _, name := range verdictOrder {
		if m, ok := metricNamed(ms, name); ok {
			label := m.Label
			switch name {
			case "tempdbWrites":
				label = "tempdb writes"
			case "logRecords":
				label = "log records"
			}
			if label == "" {
				label = name
			}
			add(m, label)
		}
		if name == "tempdbWrites" { // waits go after the I/O
			for _, m := range ms {
				if strings.HasPrefix(m.Name, "wait") {
					add(m, strings.TrimSuffix(strings.TrimPrefix(m.Name, "wait"), "Us")+" waits")
				}
			}
		}
	}
	return out
}

func value(unit string, v float64) string {
	switch {
	case v == 0:
		return "0"
	case unit == "us":
		return findings.Duration(int64(v))
	case unit == "KB":
		return findings.KB(int64(v))
	}
	return findings.Count(int64(v))
}

func verdict(d *OperatorDiff) string {
	switch d.Status {
	case StatusAdded:
		return "added " + d.B.Label() + describe(d.Metrics, false)
	case StatusRemoved:
		return "removed " + d.A.Label() + describe(d.Metrics, true)
	case StatusReplaced:
		na, nb := d.A.Name, d.B.Name
		if na == nb {
			na, nb = d.A.Label(), d.B.Label()
		}
		c := changes(d.Metrics, 2)
		if len(c) == 0 {
			return nb + " replaced " + na + ": no significant change"
		}
		return nb + " replaced " + na + ": " + strings.Join(c, ", ")
	}
	c := changes(d.Metrics, 3)
	if len(c) == 0 {
		return d.A.Name + ": no significant change"
	}
	return d.A.Name + ": " + strings.Join(c, ", ")
}

// describe gives an added or removed operator's cost: ": reads 31, 12 rows".
func describe(ms []Metric, a bool) string {
	var parts []string
	for _, name := range []string{"reads", "rows", "spills"} {
		m, ok := metricNamed(ms, name)
		p := m.B
		if a {
			p = m.A
		}
		if !ok || p == nil || *p == 0 {
			continue
		}
		label := m.Label
		if label == "" {
			label = name
		}
		parts = append(parts, label+" "+value(m.Unit, *p))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// overall is the statement's (or batch's) one-line verdict.
func (r *Result) overall() string { return oneLine(r.Statement, r.Counts) }

// oneLine says a comparison's totals and its operators' counts.
func oneLine(ms []Metric, c Counts) string {
	var parts []string
	for _, name := range []string{"durationUs", "operatorUs", "reads", "spills", "waitUs", "grantedKB"} {
		m, ok := metricNamed(ms, name)
		if !ok || !m.Changed && name != "durationUs" && name != "operatorUs" && name != "reads" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", m.Label, value(m.Unit, *m.A), value(m.Unit, *m.B)))
	}
	var ops []string
	for _, x := range []struct {
		n    int
		what string
	}{{c.Replaced, "replaced"}, {c.Changed, "changed"}, {c.Added, "added"}, {c.Removed, "removed"}} {
		if x.n > 0 {
			ops = append(ops, fmt.Sprintf("%d %s", x.n, x.what))
		}
	}
	s := strings.Join(parts, ", ")
	if len(ops) == 0 {
		return s + "; the plans have the same shape"
	}
	return s + "; operators: " + strings.Join(ops, ", ")
}
