// Package frames turns a stored trace into the Grafana data frames that
// docs/frames.md specifies: the trace meta frame, the findings, the
// per-operator table and phases, the plan as Node Graph nodes and edges, one
// State Timeline frame per lane (raw, or binned when a lane exceeds the row
// budget), pages, log records, call stacks as a Flame Graph, the numeric
// probe frame, and the compare response of two traces.
//
// It is an adapter: it reshapes a trace it is given (re-slicing by a time
// window, binning to a row budget, counting per operator). It must not parse
// events or plans, run anything on SQL Server or keep state between calls;
// the same Source and Request give the same frames. Binning is hand-written
// because it is the hot path of every zoom (docs/frames.md §4.3): it makes
// two passes over the lane with no per-entry allocation.
package frames

import (
	"fmt"
	"slices"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// ReplayPanelID is set as the preferred visualisation plugin on lane frames,
// so Explore opens them in the replay panel.
const ReplayPanelID = "queryreplay-replay-panel"

// DefaultMaxDataPoints is the row budget per lane when the query gives none.
const DefaultMaxDataPoints = 1000

// MaxDataPointsLimit caps the budget a query may ask for.
const MaxDataPointsLimit = 1_000_000

// Frame groups a query may ask for (docs/frames.md §3).
const (
	GroupTrace      = "trace"
	GroupOperators  = "operators"
	GroupPlan       = "plan"
	GroupLanes      = "lanes"
	GroupPages      = "pages"
	GroupLog        = "log"
	GroupCallStacks = "callstacks"
	GroupFindings   = "findings"
	GroupSummary    = "summary"
)

// AllGroups is every frame group, in response order.
var AllGroups = []string{GroupTrace, GroupFindings, GroupOperators, GroupPlan, GroupLanes, GroupPages, GroupLog, GroupCallStacks, GroupStatements, GroupSummary}

// Runtime is an operator's actual-plan runtime counters, summed over
// threads; nil fields were not reported.
type Runtime struct {
	ActualRows    *int64
	Executions    *int64
	ElapsedMs     *int64
	CPUMs         *int64
	LogicalReads  *int64
	PhysicalReads *int64
	// ReadAheads is ActualReadAheads: kept apart from PhysicalReads
	// (docs/frames.md, "Vocabulary").
	ReadAheads *int64
	// Scans is ActualScans (Table I/O's scan count).
	Scans         *int64
	EstimatedRows *float64
}

// Source is a stored trace as the frames need it.
type Source struct {
	TraceID string
	Bundle  *bundle.Bundle // Bundle.Trace must be set
	// Runtime holds the actual plan's counters by NodeId; may be nil.
	Runtime map[int]Runtime
	// Stacks is a merged call-stack tree to draw instead of the trace's
	// own stack table (nil: the table's stacks, weighted by their events).
	Stacks *callstack.Tree
	// Findings is the trace's findings report (pkg/findings over
	// FindingsInput); nil leaves the findings frame out.
	Findings *findings.Report
	// CPUMs is the statement's CPU time from the actual plan's
	// QueryTimeStats CpuTime (ms); nil when the plan has none.
	CPUMs *int64
}

// Window is a closed range on the trace clock, in µs from time zero.
type Window struct {
	FromUs int64 `json:"fromUs"`
	ToUs   int64 `json:"toUs"`
}

// Request says what to return.
type Request struct {
	// Window restricts lanes and pages; nil is the whole trace.
	Window *Window
	// MaxDataPoints is the row budget per lane; 0 is DefaultMaxDataPoints.
	MaxDataPoints int
	// Groups lists the frame groups; nil is all of them.
	Groups []string
	// Output asks for what one built-in panel reads (Outputs) instead of
	// the groups; empty is the groups.
	Output string
	// Statement picks the node of the bundle's statement tree whose own
	// timeline the frames draw (statements.go); nil is the bundle's Trace.
	Statement *int
}

// Validate reports a request the frames cannot honour.
func (r Request) Validate() error {
	if r.Window != nil && r.Window.FromUs > r.Window.ToUs {
		return fmt.Errorf("window fromUs %d is after toUs %d", r.Window.FromUs, r.Window.ToUs)
	}
	if r.MaxDataPoints < 0 || r.MaxDataPoints > MaxDataPointsLimit {
		return fmt.Errorf("maxDataPoints %d is outside 0-%d", r.MaxDataPoints, MaxDataPointsLimit)
	}
	for _, g := range r.Groups {
		if !slices.Contains(AllGroups, g) {
			return fmt.Errorf("frame group %q is not one of %v", g, AllGroups)
		}
	}
	return validOutput(r.Output)
}

func (r Request) budget() int {
	if r.MaxDataPoints == 0 {
		return DefaultMaxDataPoints
	}
	return r.MaxDataPoints
}

func (r Request) wants(group string) bool {
	return r.Groups == nil || slices.Contains(r.Groups, group)
}

// view is one Build call's shared state.
type view struct {
	src    *Source
	tr     *timeline.Trace
	zero   time.Time
	win    Window
	budget int
	// resolutionUs is the drawing quantum: window ÷ budget, at least 1 µs.
	resolutionUs int64
	binned       []string
	// stmt is the statement tree node the frames draw, -1 without a tree;
	// node is that node when the request picked it (nil: the bundle's
	// Trace, under the batch's text).
	stmt int
	node *timeline.Statement
}

func (v *view) at(us int64) time.Time { return v.zero.Add(time.Duration(us) * time.Microsecond) }

// Build returns the frames of src for req, in the order of docs/frames.md §3.
func Build(src *Source, req Request) (data.Frames, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if src == nil || src.Bundle == nil || src.Bundle.Trace == nil {
		return nil, fmt.Errorf("trace %s has no timeline", traceIDOf(src))
	}
	v, err := newView(src, req)
	if err != nil {
		return nil, err
	}
	if req.Output != "" {
		return v.output(req.Output), nil
	}
	var out data.Frames
	if req.wants(GroupFindings) && v.src.Findings != nil { // v.src: left out for another statement
		out = append(out, v.findingsFrame())
	}
	if req.wants(GroupOperators) {
		out = append(out, v.operatorsFrame(), v.phasesFrame(), v.threadsFrame())
	}
	if req.wants(GroupPlan) {
		nodes, edges := v.planFrames()
		out = append(out, nodes, edges)
	}
	if req.wants(GroupLanes) {
		out = append(out, v.laneFrames()...)
		if f := v.escalationsFrame(); f != nil {
			out = append(out, f)
		}
	}
	if req.wants(GroupPages) {
		out = append(out, v.pagesFrame())
	}
	if req.wants(GroupLog) {
		out = append(out, v.logRecordsFrame())
	}
	if req.wants(GroupStatements) && len(src.Bundle.Statements) > 0 {
		out = append(out, v.statementsFrame())
	}
	if req.wants(GroupCallStacks) {
		tree := src.Stacks
		if tree == nil {
			tree = v.stackTree()
		}
		if tree != nil && tree.Stacks > 0 {
			out = append(out, CallStacks(src.TraceID, tree))
		}
		if len(v.tr.Stacks) > 0 {
			out = append(out, v.stackFramesFrame())
		}
	}
	if req.wants(GroupSummary) {
		out = append(out, v.tableIOFrame(), v.waitStatsFrame())
	}
	// The trace frame goes first but is built last: it reports which
	// lanes this response binned.
	if req.wants(GroupTrace) {
		out = append(data.Frames{v.traceFrame()}, out...)
	}
	return out, nil
}

func traceIDOf(src *Source) string {
	if src == nil {
		return "(none)"
	}
	return src.TraceID
}

func newView(src *Source, req Request) (*view, error) {
	tr, stmt, err := statementTrace(src.Bundle, req)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", src.TraceID, err)
	}
	var node *timeline.Statement
	if req.Statement != nil {
		node = &src.Bundle.Statements[stmt]
		// the findings only when the response has their frame: a zoom's
		// view query asks for lanes alone and should not rerun the rules
		src = statementSource(src, stmt, req.Output == "" && req.wants(GroupFindings))
	}
	zero := src.Bundle.Run.StartedAt
	if tr.ZeroTime != "" {
		t, err := time.Parse(time.RFC3339Nano, tr.ZeroTime)
		if err != nil {
			return nil, fmt.Errorf("trace %s: zero time %q: %w", src.TraceID, tr.ZeroTime, err)
		}
		zero = t
	}
	v := &view{src: src, tr: tr, zero: zero.UTC(), budget: req.budget(), win: Window{FromUs: tr.Start, ToUs: tr.End}, stmt: stmt, node: node}
	if req.Window != nil {
		v.win = *req.Window
	}
	v.resolutionUs = max(1, (v.win.ToUs-v.win.FromUs)/int64(v.budget))
	return v, nil
}

// custom is a frame's meta.custom: every frame carries the trace id.
type custom map[string]any

func (v *view) meta(extra custom) *data.FrameMeta {
	c := custom{"traceId": v.src.TraceID}
	if v.stmt >= 0 {
		// the statement whose operators and events these are (issue 30)
		c["statementId"] = v.stmt
	}
	for k, val := range extra {
		c[k] = val
	}
	return &data.FrameMeta{Custom: c}
}

// hidden keeps a field out of State Timeline rows and legends but in the
// tooltip and the table view.
func hidden(f *data.Field) *data.Field {
	cfg := f.Config
	if cfg == nil {
		cfg = &data.FieldConfig{}
	}
	if cfg.Custom == nil {
		cfg.Custom = map[string]any{}
	}
	cfg.Custom["hideFrom"] = map[string]bool{"viz": true, "legend": true, "tooltip": false}
	f.Config = cfg
	return f
}

func unit(f *data.Field, u string) *data.Field {
	if f.Config == nil {
		f.Config = &data.FieldConfig{}
	}
	f.Config.Unit = u
	return f
}

func nodePtr(n timeline.NodeID) *int64 {
	if n < 0 {
		return nil
	}
	v := int64(n)
	return &v
}
