package findings

import (
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// tempdbID is tempdb's database_id, fixed at 2 in every SQL Server
// (https://learn.microsoft.com/en-us/sql/relational-databases/databases/tempdb-database).
const tempdbID = 2

// Profile is what a trace (and its plan, when there is one) says about each
// operator: the figures the rules read and pkg/compare compares.
type Profile struct {
	Trace *timeline.Trace     `json:"-"`
	Plan  *showplan.Statement `json:"-"`
	// HasCounters: the plan has runtime counters (an actual plan).
	HasCounters bool            `json:"hasCounters"`
	Operators   []OperatorStats `json:"operators"`
	// DurationUs is the timeline's extent (End − Start).
	DurationUs int64 `json:"durationUs"`
	// Statement-wide totals.
	PageReads     int    `json:"pageReads"`     // physical_page_read events
	LogicalReads  int64  `json:"logicalReads"`  // plan, summed over operators
	PhysicalReads int64  `json:"physicalReads"` // plan
	ReadAheads    int64  `json:"readAheads"`    // plan
	Grant         *Grant `json:"grant,omitempty"`

	index map[int]int
	// byNode[lane][node] lists the lane indices matched to the node;
	// node -1 holds the unmatched and statement entries.
	byNode map[string]map[int][]int
}

// Grant is the statement's memory grant.
type Grant struct {
	GrantedKB   int64 `json:"grantedKB"`
	UsedKB      int64 `json:"usedKB"`
	RequestedKB int64 `json:"requestedKB,omitempty"`
	DesiredKB   int64 `json:"desiredKB,omitempty"`
	// GrantWait is the plan's GrantWaitTime as written (the showplan
	// schema documents seconds).
	GrantWait int64 `json:"grantWait,omitempty"`
	// MaxQueryKB is the most one query may be granted (MaxQueryMemory:
	// the workload group's REQUEST_MAX_MEMORY_GRANT_PERCENT of the pool).
	MaxQueryKB int64 `json:"maxQueryKB,omitempty"`
	// Source is "plan" (MemoryGrantInfo) or "events"
	// (query_memory_grant_usage).
	Source string `json:"source"`
	// Events are the memory-lane indices of the grant usage events.
	Events []int `json:"-"`
}

// OperatorStats are one operator's figures. Times are µs from time zero.
type OperatorStats struct {
	NodeID     int    `json:"nodeId"`
	Parent     *int   `json:"parent"`
	Name       string `json:"name"`
	PhysicalOp string `json:"physicalOp"`
	LogicalOp  string `json:"logicalOp"`
	// Schema, Table and Index name the operator's object; Object joins them.
	Schema      string `json:"schema,omitempty"`
	Table       string `json:"table,omitempty"`
	Index       string `json:"index,omitempty"`
	Object      string `json:"object,omitempty"`
	NotExecuted bool   `json:"notExecuted,omitempty"`

	StartUs     int64 `json:"startUs"`
	FirstEmitUs int64 `json:"firstEmitUs"`
	EndUs       int64 `json:"endUs"`
	DurationUs  int64 `json:"durationUs"`
	// PhaseUs sums each phase kind's length over the operator's cycles.
	PhaseUs map[string]int64 `json:"phaseUs,omitempty"`

	// Lane entries tied to the operator.
	Reads          int `json:"reads"`
	Writes         int `json:"writes"`
	TempdbWrites   int `json:"tempdbWrites"`
	Locks          int `json:"locks"`
	Splits         int `json:"splits"`
	LogRecords     int `json:"logRecords"`
	Spills         int `json:"spills"`
	ExchangeSpills int `json:"exchangeSpills"`
	// WaitUs and WaitCount are by wait category (timeline.WaitCategory).
	WaitUs    map[string]int64 `json:"waitUs,omitempty"`
	WaitCount map[string]int   `json:"waitCount,omitempty"`

	// Counters are the plan's runtime counters summed over threads; nil
	// when the plan has none for this operator.
	Counters      *Counters `json:"counters,omitempty"`
	EstimatedRows float64   `json:"estimatedRows,omitempty"`
	// Threads are the per-thread bars of a parallel operator.
	Threads []timeline.ThreadBar `json:"-"`
}

// Counters are an operator's runtime counters (showplan
// RunTimeCountersPerThread, summed; ElapsedMs is the longest thread's).
type Counters struct {
	Rows        int64 `json:"rows"`
	RowsRead    int64 `json:"rowsRead"`
	HasRowsRead bool  `json:"hasRowsRead"`
	Executions  int64 `json:"executions"`
	// Threads counts the per-thread counter entries and MaxThreadExecutions
	// is the most executions any one of them had: showplan's
	// ActualExecutions is per thread, so a parallel scan on 6 threads
	// sums to 6 although each thread ran it once.
	Threads             int   `json:"threads,omitempty"`
	MaxThreadExecutions int64 `json:"maxThreadExecutions,omitempty"`
	LogicalReads        int64 `json:"logicalReads"`
	PhysicalReads       int64 `json:"physicalReads"`
	ReadAheads          int64 `json:"readAheads"`
	ElapsedMs           int64 `json:"elapsedMs"`
	CPUMs               int64 `json:"cpuMs"`
	HasTiming           bool  `json:"hasTiming"`
}

// Runs is how many times the operator ran in the sense a reader means:
// once when every thread ran it at most once (a parallel operator), else
// the executions summed over threads (a nested-loops inner side).
func (c *Counters) Runs() int64 {
	if c.Threads > 1 && c.MaxThreadExecutions <= 1 {
		return min(c.Executions, 1)
	}
	return c.Executions
}

// Ref names the operator for a finding.
func (o *OperatorStats) Ref() OperatorRef {
	return OperatorRef{NodeID: o.NodeID, Name: o.Name, Object: o.Object}
}

// Label is "Name (object)", or Name alone.
func (o *OperatorStats) Label() string { return o.Ref().String() }

// TotalWaitUs sums the operator's waits over categories.
func (o *OperatorStats) TotalWaitUs() int64 {
	var n int64
	for _, v := range o.WaitUs {
		n += v
	}
	return n
}

// NewProfile computes the per-operator figures of tr, with the runtime
// counters of plan when it is not nil.
func NewProfile(tr *timeline.Trace, plan *showplan.Statement) *Profile {
	p := &Profile{Trace: tr, Plan: plan, index: map[int]int{}, byNode: map[string]map[int][]int{}, DurationUs: tr.End - tr.Start}
	for _, op := range tr.Operators {
		p.index[op.ID] = len(p.Operators)
		p.Operators = append(p.Operators, p.operator(op))
	}
	p.fillLanes()
	p.fillGrant()
	return p
}

// Op returns the stats of node id, or nil.
func (p *Profile) Op(id int) *OperatorStats {
	i, ok := p.index[id]
	if !ok {
		return nil
	}
	return &p.Operators[i]
}

// Entries returns the lane indices matched to node (-1: unmatched or the
// statement's).
func (p *Profile) Entries(lane string, node int) []int { return p.byNode[lane][node] }

func (p *Profile) operator(op timeline.Operator) OperatorStats {
	s := OperatorStats{
		NodeID: op.ID, Parent: op.Parent, PhysicalOp: op.PhysicalOp, LogicalOp: op.LogicalOp, Object: op.Object,
		NotExecuted: op.NotExecuted, StartUs: op.Start, FirstEmitUs: op.FirstEmit, EndUs: op.End, DurationUs: op.End - op.Start,
		Threads: op.Threads,
	}
	s.Schema, s.Table, s.Index = splitObject(op.Object)
	display := op.DisplayName()
	if p.Plan != nil {
		if po := p.Plan.OperatorByID(op.ID); po != nil {
			display = po.DisplayName
			s.EstimatedRows = po.EstimateRows
			if o := po.Object; o != nil {
				s.Schema, s.Table, s.Index = o.Schema, o.Table, o.Index
			}
			if t := po.Actual; t != nil {
				p.HasCounters = true
				s.Counters = &Counters{Rows: t.Rows, RowsRead: t.RowsRead, Executions: t.Executions, LogicalReads: t.LogicalReads,
					PhysicalReads: t.PhysicalReads, ReadAheads: t.ReadAheads, ElapsedMs: t.ElapsedMs, CPUMs: t.CPUMs, HasTiming: t.HasTiming}
				for _, th := range po.Threads {
					s.Counters.HasRowsRead = s.Counters.HasRowsRead || th.HasRowsRead
					s.Counters.Threads++
					s.Counters.MaxThreadExecutions = max(s.Counters.MaxThreadExecutions, th.Executions)
				}
				p.LogicalReads += t.LogicalReads
				p.PhysicalReads += t.PhysicalReads
				p.ReadAheads += t.ReadAheads
			}
		}
	}
	s.Name = operatorName(display, op.PhysicalOp, op.LogicalOp)
	for _, ph := range op.Phases {
		if s.PhaseUs == nil {
			s.PhaseUs = map[string]int64{}
		}
		s.PhaseUs[string(ph.Kind)] += ph.End - ph.Start
	}
	return s
}

// operatorName is what SSMS shows: the display name, with the logical
// operator for the physical operators that stand for several (Hash Match
// (Aggregate), Parallelism (Gather Streams), Nested Loops (Left Semi Join)).
func operatorName(display, physical, logical string) string {
	if display == "" {
		display = physical
	}
	switch physical {
	case "Hash Match", "Nested Loops", "Merge Join", "Parallelism", "Adaptive Join":
		if logical != "" && logical != physical {
			return display + " (" + logical + ")"
		}
	}
	return display
}

// splitObject splits the timeline's "schema.table.index" (or
// "schema.table") object name.
func splitObject(s string) (schema, table, index string) {
	if s == "" {
		return "", "", ""
	}
	parts := strings.SplitN(s, ".", 3)
	switch len(parts) {
	case 1:
		return "", parts[0], ""
	case 2:
		return parts[0], parts[1], ""
	}
	return parts[0], parts[1], parts[2]
}

func nodeOf(m timeline.Match) int {
	if m.NodeID < 0 {
		return -1
	}
	return int(m.NodeID)
}

func (p *Profile) add(lane string, node, i int) {
	m := p.byNode[lane]
	if m == nil {
		m = map[int][]int{}
		p.byNode[lane] = m
	}
	m[node] = append(m[node], i)
}

// fillLanes counts each lane's entries per operator.
func (p *Profile) fillLanes() {
	l := &p.Trace.Lanes
	p.PageReads = len(l.Read)
	each := func(lane string, n int, match func(int) timeline.Match, f func(*OperatorStats, int)) {
		for i := range n {
			node := nodeOf(match(i))
			p.add(lane, node, i)
			if o := p.Op(node); o != nil {
				f(o, i)
			}
		}
	}
	each(LaneRead, len(l.Read), func(i int) timeline.Match { return l.Read[i].Match }, func(o *OperatorStats, _ int) { o.Reads++ })
	each(LaneWrite, len(l.Write), func(i int) timeline.Match { return l.Write[i].Match }, func(o *OperatorStats, i int) {
		o.Writes++
		if l.Write[i].DatabaseID == tempdbID {
			o.TempdbWrites++
		}
	})
	each(LaneLock, len(l.Lock), func(i int) timeline.Match { return l.Lock[i].Match }, func(o *OperatorStats, _ int) { o.Locks++ })
	each(LaneWait, len(l.Wait), func(i int) timeline.Match { return l.Wait[i].Match }, func(o *OperatorStats, i int) {
		w := l.Wait[i]
		if o.WaitUs == nil {
			o.WaitUs, o.WaitCount = map[string]int64{}, map[string]int{}
		}
		o.WaitUs[waitCategory(w)] += WaitUs(w)
		o.WaitCount[waitCategory(w)]++
	})
	each(LaneMemory, len(l.Memory), func(i int) timeline.Match { return l.Memory[i].Match }, func(o *OperatorStats, i int) {
		switch {
		case l.Memory[i].Kind == "exchange_spill":
			o.ExchangeSpills++
		case l.Memory[i].Spill:
			o.Spills++
		}
	})
	each(LaneSplit, len(l.Split), func(i int) timeline.Match { return l.Split[i].Match }, func(o *OperatorStats, _ int) { o.Splits++ })
	each(LaneLog, len(l.Log), func(i int) timeline.Match { return l.Log[i].Match }, func(o *OperatorStats, i int) {
		if l.Log[i].Kind == "record" {
			o.LogRecords++
		}
	})
	each(LaneIO, len(l.IO), func(i int) timeline.Match { return l.IO[i].Match }, func(*OperatorStats, int) {})
}

func waitCategory(w timeline.WaitInterval) string {
	if w.Category != "" {
		return w.Category
	}
	return timeline.WaitCategory(w.WaitType)
}

// WaitUs is a wait's length: its measured duration, else its interval.
func WaitUs(w timeline.WaitInterval) int64 {
	if w.DurationUs > 0 {
		return int64(w.DurationUs)
	}
	return max(w.End-w.T, 0)
}

// fillGrant takes the grant from the plan's MemoryGrantInfo, else from the
// query_memory_grant_usage events.
func (p *Profile) fillGrant() {
	var g Grant
	for i, m := range p.Trace.Lanes.Memory {
		if m.Kind != "query_memory_grant_usage" {
			continue
		}
		g.Events = append(g.Events, i)
		g.GrantedKB = max(g.GrantedKB, int64(m.GrantedMemoryKB))
		g.UsedKB = max(g.UsedKB, int64(m.UsedMemoryKB))
		g.Source = "events"
	}
	if p.Plan != nil && p.Plan.MemoryGrant != nil && p.Plan.MemoryGrant.GrantedKB+p.Plan.MemoryGrant.RequestedKB > 0 {
		mg := p.Plan.MemoryGrant
		g.GrantedKB, g.UsedKB, g.RequestedKB, g.DesiredKB, g.GrantWait = mg.GrantedKB, mg.MaxUsedKB, mg.RequestedKB, mg.DesiredKB, mg.GrantWaitTime
		g.MaxQueryKB = mg.MaxQueryKB
		g.Source = "plan"
	}
	if g.Source != "" {
		p.Grant = &g
	}
}
