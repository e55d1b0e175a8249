package frames

import (
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// GroupStatements is the statement tree of a batch that ran more than one
// statement (docs/frames.md, "statements"): the batch, its statements and
// those of the procedures they called, each row with its parent's id.
const GroupStatements = "statements"

// statementTrace returns the timeline the frames draw: the bundle's Trace,
// or, when req.Statement names a node of the statement tree, that
// statement's own. id is the statement the frames belong to (-1 when the
// bundle has no tree).
func statementTrace(b *bundle.Bundle, req Request) (tr *timeline.Trace, id int, err error) {
	if req.Statement == nil {
		return b.Trace, primaryStatement(b), nil
	}
	n := *req.Statement
	if n < 0 || n >= len(b.Statements) || b.Statements[n].Trace == nil {
		return nil, -1, fmt.Errorf("statement %d is not one of the trace's %d statements", n, len(b.Statements))
	}
	return b.Statements[n].Trace, n, nil
}

// statementSource is src as statement n's frames need it: the primary
// statement keeps the counters and findings the caller worked out for the
// bundle's Trace; any other statement gets its own, from its own plan and
// timeline (findings.StatementInputOf), so its header, summaries and
// findings never show the first statement's figures or none at all. The
// findings are worked out only when withFindings (the response has them).
func statementSource(src *Source, n int, withFindings bool) *Source {
	b := src.Bundle
	if n == primaryStatement(b) {
		return src
	}
	other := *src
	other.Runtime, other.Findings, other.CPUMs = nil, nil, nil
	in, ok := findings.StatementInputOf(b, b.Statements[n])
	if !ok {
		return &other // the batch or an EXEC: no plan, no operators to judge
	}
	other.Runtime = RuntimeOf(in.Input.Plan)
	if withFindings {
		if rep, err := findings.Analyze(in.Input, findings.DefaultConfig()); err == nil {
			other.Findings = rep
		}
	}
	if ts := planTimeStats(in.Input.Plan); ts != nil {
		cpu := ts.CPUMs
		other.CPUMs = &cpu
	}
	return &other
}

func planTimeStats(st *showplan.Statement) *showplan.TimeStats {
	if st == nil {
		return nil
	}
	return st.TimeStats
}

// RuntimeOf reads a plan statement's per-operator runtime counters (summed
// over threads) by NodeId; nil without a statement.
func RuntimeOf(st *showplan.Statement) map[int]Runtime {
	if st == nil || len(st.Operators) == 0 {
		return nil
	}
	out := make(map[int]Runtime, len(st.Operators))
	for _, op := range st.Operators {
		est := op.EstimateRows
		r := Runtime{EstimatedRows: &est}
		if a := op.Actual; a != nil {
			r.ActualRows, r.Executions = i64p(a.Rows), i64p(a.Executions)
			r.LogicalReads, r.PhysicalReads, r.ReadAheads = i64p(a.LogicalReads), i64p(a.PhysicalReads), i64p(a.ReadAheads)
			r.Scans = i64p(a.Scans)
			if a.HasTiming {
				r.ElapsedMs, r.CPUMs = i64p(a.ElapsedMs), i64p(a.CPUMs)
			}
		}
		out[op.NodeID] = r
	}
	return out
}

func i64p(v int64) *int64 { return &v }

// primaryStatement is the node whose operators the bundle's Trace draws:
// the first statement with a plan; -1 without a tree.
func primaryStatement(b *bundle.Bundle) int {
	for _, s := range b.Statements {
		if s.Plan != "" {
			return s.ID
		}
	}
	return -1
}

// statementsFrame is the statement tree: one row per node, in tree order
// as the tracer numbered them (a parent before its children).
func (v *view) statementsFrame() *data.Frame {
	st := v.src.Bundle.Statements
	n := len(st)
	id, parent := make([]int64, n), make([]int64, n)
	kind, text, object := make([]string, n), make([]string, n), make([]string, n)
	nest, offStart, offEnd := make([]int64, n), make([]int64, n), make([]int64, n)
	start, end := make([]int64, n), make([]int64, n)
	elapsed, rows, logical, physical, waits := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	events, execs := make([]int64, n), make([]int64, n)
	hasPlan := make([]bool, n)
	for i, s := range st {
		if i == 0 && s.Kind == "batch" {
			s = batchNode(st)
		}
		id[i], parent[i], kind[i], text[i], object[i] = int64(s.ID), int64(s.Parent), s.Kind, s.Text, s.ObjectName
		nest[i], offStart[i], offEnd[i] = int64(s.NestLevel), s.OffsetStart, s.OffsetEnd
		start[i], end[i] = s.StartUs, s.EndUs
		elapsed[i], rows[i], logical[i], physical[i], waits[i] = int64(s.ElapsedUs), int64(s.Rows), int64(s.LogicalReads), int64(s.PhysicalReads), int64(s.WaitUs)
		events[i], execs[i], hasPlan[i] = int64(s.Events), int64(s.Executions), s.Plan != ""
	}
	f := data.NewFrame("statements",
		data.NewField("id", nil, id), data.NewField("parentId", nil, parent), data.NewField("kind", nil, kind),
		data.NewField("text", nil, text), data.NewField("objectName", nil, object), data.NewField("nestLevel", nil, nest),
		data.NewField("offsetStart", nil, offStart), data.NewField("offsetEnd", nil, offEnd),
		unit(data.NewField("startUs", nil, start), "µs"), unit(data.NewField("endUs", nil, end), "µs"),
		unit(data.NewField("elapsedUs", nil, elapsed), "µs"), data.NewField("rows", nil, rows),
		data.NewField("logicalReads", nil, logical), data.NewField("physicalReads", nil, physical),
		unit(data.NewField("waitUs", nil, waits), "µs"), data.NewField("events", nil, events),
		data.NewField("executions", nil, execs), data.NewField("hasPlan", nil, hasPlan))
	f.Meta = v.meta(custom{"group": GroupStatements})
	return f
}

// batchNode is the tree's batch node with its own figures: no statement
// event fires for the batch itself, so its elapsed is the batch's from its
// own sql_batch_starting/completed events (its timeline's summary), and its
// rows and reads are its statements' summed over the leaves of the tree —
// the statements that ran no others — so a procedure's statements are
// counted once whether or not its EXEC's completed event includes them.
func batchNode(st []timeline.Statement) timeline.Statement {
	n := st[0]
	if tr := n.Trace; tr != nil && n.ElapsedUs == 0 && tr.Summary.ElapsedSource != "" && tr.Summary.ElapsedSource != "extent" {
		n.ElapsedUs = uint64(max(tr.Summary.ElapsedUs, 0))
		if n.EndUs == 0 {
			n.EndUs = n.StartUs + tr.Summary.ElapsedUs
		}
	}
	parents := make(map[int]bool, len(st))
	for _, s := range st[1:] {
		parents[s.Parent] = true
	}
	var rows, logical, physical uint64
	for _, s := range st[1:] {
		if !parents[s.ID] {
			rows, logical, physical = rows+s.Rows, logical+s.LogicalReads, physical+s.PhysicalReads
		}
	}
	if n.Rows == 0 && n.LogicalReads == 0 && n.PhysicalReads == 0 {
		n.Rows, n.LogicalReads, n.PhysicalReads = rows, logical, physical
	}
	return n
}
