package findings

import (
	"fmt"
	"slices"
	"strings"
)

// skew is one parallel operator's distribution of rows over its worker
// threads.
type skew struct {
	op      *OperatorStats
	threads int
	rows    int64
	busiest int     // thread id
	top     int64   // its rows
	ratio   float64 // top over the average thread's rows
	excess  float64 // top share from even (0) to all (1)
	source  string
}

// threadRows returns the worker threads' rows of o: the timeline's
// per-thread bars, else the plan's per-thread counters. Thread 0 is the
// coordinator of a parallel branch and is left out when workers exist.
func (a *analysis) threadRows(o *OperatorStats) (ids []int, rows []int64, source string) {
	for _, b := range o.Threads {
		ids, rows = append(ids, b.Thread), append(rows, b.Rows)
	}
	source = "plan" // the bars' rows are the plan's per-thread counters
	if len(ids) == 0 && a.in.Plan != nil {
		if po := a.in.Plan.OperatorByID(o.NodeID); po != nil {
			for _, t := range po.Threads {
				ids, rows = append(ids, t.Thread), append(rows, t.Rows)
			}
		}
	}
	if slices.ContainsFunc(ids, func(t int) bool { return t > 0 }) {
		if i := slices.Index(ids, 0); i >= 0 {
			ids, rows = slices.Delete(ids, i, i+1), slices.Delete(rows, i, i+1)
		}
	}
	return ids, rows, source
}

func (a *analysis) skewOf(o *OperatorStats) *skew {
	ids, rows, src := a.threadRows(o)
	if len(ids) < 2 || a.batchSort(o) {
		return nil
	}
	s := &skew{op: o, threads: len(ids), source: src, busiest: ids[0]}
	for i, r := range rows {
		s.rows += r
		if r > s.top {
			s.top, s.busiest = r, ids[i]
		}
	}
	if s.rows < a.cfg.MinSkewRows {
		return nil
	}
	s.ratio = float64(s.top) / (float64(s.rows) / float64(s.threads))
	even := 1 / float64(s.threads)
	s.excess = (share(s.top, s.rows) - even) / (1 - even)
	if s.excess < a.cfg.SkewShare {
		return nil
	}
	return s
}

// batchSort: a batch-mode Sort returns its rows on one thread by design,
// which is no data skew.
func (a *analysis) batchSort(o *OperatorStats) bool {
	if o.PhysicalOp != "Sort" || a.in.Plan == nil {
		return false
	}
	po := a.in.Plan.OperatorByID(o.NodeID)
	return po != nil && strings.EqualFold(po.ExecutionMode, "Batch")
}

// parallelSkew reports the deepest skewed operator of each run of skewed
// operators: skew in a scan carries up through the operators above it in
// the same branch (up to the next Parallelism operator), and those are
// listed with it rather than reported again.
func parallelSkew(a *analysis) []Finding {
	skewed := map[int]*skew{}
	for i := range a.p.Operators {
		if s := a.skewOf(&a.p.Operators[i]); s != nil {
			skewed[a.p.Operators[i].NodeID] = s
		}
	}
	children := map[int][]int{}
	for _, o := range a.p.Operators {
		if o.Parent != nil {
			children[*o.Parent] = append(children[*o.Parent], o.NodeID)
		}
	}
	// owner[n] is the node whose finding n joins.
	owner := map[int]int{}
	var lead []int
	for _, o := range a.p.Operators {
		s := skewed[o.NodeID]
		if s == nil {
			continue
		}
		if d, ok := a.skewedBelow(o.NodeID, s.busiest, skewed, children); ok {
			owner[o.NodeID] = d
			continue
		}
		lead = append(lead, o.NodeID)
	}
	var out []Finding
	for _, n := range lead {
		s := skewed[n]
		f := Finding{
			Title: fmt.Sprintf("Parallel skew in %s: thread %d produced %s of %s (%d threads)", s.op.Label(), s.busiest,
				Percent(share(s.top, s.rows)), plural(s.rows, "row", "rows"), s.threads),
			Severity:  SeverityWarning,
			Operators: []OperatorRef{s.op.Ref()},
			Numbers: []Number{num("rows", float64(s.rows), "rows", s.source), num("busiestThread", float64(s.busiest), "count", s.source),
				num("busiestRows", float64(s.top), "rows", s.source), num("threads", float64(s.threads), "count", s.source),
				num("ratio", s.ratio, "ratio", s.source), num("skewShare", s.excess, "ratio", s.source)},
			Detail: fmt.Sprintf("The busiest thread had %.1f× the average thread's rows; the others finished early and waited.", s.ratio),
			Hint: "One thread got most of the rows, so the parallel operator ran about as long as that thread alone. Skew comes from " +
				"the data: few distinct values in a hash-partitioned column, or a scan whose ranges hold uneven rows. Check the " +
				"distribution of the partitioning column; fresher statistics or a different join order can change the partitioning.",
			Reference: refParallelQuery,
		}
		for _, o := range a.p.Operators {
			if root(owner, o.NodeID) == n && o.NodeID != n {
				f.Operators = append(f.Operators, o.Ref())
			}
		}
		out = append(out, f)
	}
	return out
}

// skewedBelow finds a skewed descendant of n with the same busiest thread,
// within n's branch (not crossing a Parallelism operator).
func (a *analysis) skewedBelow(n, busiest int, skewed map[int]*skew, children map[int][]int) (int, bool) {
	for _, c := range children[n] {
		co := a.p.Op(c)
		if co == nil || co.PhysicalOp == "Parallelism" {
			continue
		}
		if s := skewed[c]; s != nil && s.busiest == busiest {
			return c, true
		}
		if d, ok := a.skewedBelow(c, busiest, skewed, children); ok {
			return d, true
		}
	}
	return 0, false
}

// root follows owner links to the node that leads the finding.
func root(owner map[int]int, n int) int {
	for range len(owner) + 1 {
		o, ok := owner[n]
		if !ok {
			return n
		}
		n = o
	}
	return n
}
