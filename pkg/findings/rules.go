package findings

import (
	"strconv"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Documentation the hints cite (learn.microsoft.com).
const (
	refIncludedColumns = "https://learn.microsoft.com/en-us/sql/relational-databases/indexes/create-indexes-with-included-columns"
	refIndexDesign     = "https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-index-design-guide"
	refJoins           = "https://learn.microsoft.com/en-us/sql/relational-databases/performance/joins"
	refSortWarnings    = "https://learn.microsoft.com/en-us/sql/relational-databases/event-classes/sort-warnings-event-class"
	refHashWarning     = "https://learn.microsoft.com/en-us/sql/relational-databases/event-classes/hash-warning-event-class"
	refExchangeSpill   = "https://learn.microsoft.com/en-us/sql/relational-databases/event-classes/exchange-spill-event-class"
	refGrantFeedback   = "https://learn.microsoft.com/en-us/sql/relational-databases/performance/intelligent-query-processing-memory-grant-feedback"
	refWorkloadGroup   = "https://learn.microsoft.com/en-us/sql/t-sql/statements/create-workload-group-transact-sql"
	refTableHints      = "https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-table"
	refComputedColumns = "https://learn.microsoft.com/en-us/sql/relational-databases/indexes/indexes-on-computed-columns"
	refMissingIndexes  = "https://learn.microsoft.com/en-us/sql/relational-databases/indexes/tune-nonclustered-missing-index-suggestions"
	refQueryHints      = "https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-query"
	refGrantIssues     = "https://learn.microsoft.com/en-us/troubleshoot/sql/database-engine/performance/troubleshoot-memory-grant-issues"
	refBlocking        = "https://learn.microsoft.com/en-us/troubleshoot/sql/database-engine/performance/understand-resolve-blocking"
	refReadingPages    = "https://learn.microsoft.com/en-us/sql/relational-databases/reading-pages"
	refParallelQuery   = "https://learn.microsoft.com/en-us/sql/relational-databases/query-processing-architecture-guide#parallel-query-processing"
	refWaitStats       = "https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql"
	refFillFactor      = "https://learn.microsoft.com/en-us/sql/relational-databases/indexes/specify-fill-factor-for-an-index"
	refLog             = "https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-transaction-log-architecture-and-management-guide"
	refEventSession    = "https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql"
	refExtendedEvents  = "https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/extended-events"
)

// rule is one rule: its id, what it looks for, the Config fields it reads
// and the function that applies it.
type rule struct {
	id         string
	summary    string
	thresholds []string
	run        func(*analysis) []Finding
}

// RuleInfo describes a rule for documentation and the CLI.
type RuleInfo struct {
	ID         string   `json:"id"`
	Summary    string   `json:"summary"`
	Thresholds []string `json:"thresholds"`
}

var rules []rule

func init() {
	rules = []rule{
		{"blocking", "lock waits (LCK_M_*) with the locked resource and, when known, the holder", []string{"minLockWaitUs", "criticalWaitShare"}, blocking},
		{"lock-escalation", "row or page locks escalated to a table (or partition) lock, with the object and the lock count", nil, lockEscalation},
		{"grant-wait", "waits for the memory grant (RESOURCE_SEMAPHORE)", []string{"minGrantWaitUs", "criticalWaitShare"}, grantWait},
		{"spill", "sorts and hashes that spilled to tempdb, with tempdb pages written and the grant's use", nil, spills},
		{"exchange-spill", "Parallelism operators that spilled their buffers to tempdb", nil, exchangeSpills},
		{"grant-too-small", "a grant below what was asked for, or a full grant and a spill", []string{"grantShortShare", "grantFullShare"}, grantTooSmall},
		{"grant-excess", "a memory grant far above what was used", []string{"grantExcessShare", "minGrantKB", "smallQueryCost"}, grantExcess},
		{"reads-concentrated", "one operator did most of the statement's reads", []string{"readShare", "minReads", "readsWarning", "warningTimeShare"}, readsConcentrated},
		{"residual-predicate", "an operator read many rows to return few", []string{"residualRatio", "minRowsRead"}, residualPredicate},
		{"parallel-skew", "one thread did most of a parallel operator's rows", []string{"skewShare", "minSkewRows"}, parallelSkew},
		{"parallelism-waits", "CXPACKET/CXSYNC share of the wait time (CXCONSUMER left out)", []string{"parallelWaitShare", "minParallelWaitUs"}, parallelismWaits},
		{"cold-cache", "pages read from disk, and what read-ahead did (or, disabled, did not do)", []string{"coldCacheShare", "minPhysicalReads"}, coldCache},
		{"page-splits", "page splits by index and split kind", []string{"minSplits", "splitsWarning"}, pageSplits},
		{"log-volume", "log records and bytes a traced modification wrote", []string{"minLogRecords", "logBytesWarning"}, logVolume},
		{"parameter-sensitivity", "the plan was compiled for other parameter values than it ran with (ParameterList)", nil, parameterSensitivity},
		{"row-goal", "a row goal (TOP, EXISTS, IN, FAST n) estimated far fewer rows than the operator produced (EstimateRowsWithoutRowGoal)", []string{"rowGoalFactor", "minRowGoalRows", "warningTimeShare"}, rowGoal},
		{"spool-rebinds", "spools that re-ran their input (ActualRebinds), and eager index spools built for many seeks", []string{"minSpoolRebinds", "warningTimeShare"}, spoolRebinds},
		{"udf-time", "scalar user-defined functions took a large share of the statement's time (QueryTimeStats UdfElapsedTime)", []string{"udfTimeShare", "minUdfMs"}, udfTime},
		{"plan-waits", "the plan's own WaitStats, when the trace did not capture waits", []string{"planWaitShare", "minPlanWaitMs"}, planWaits},
		{"implicit-conversion", "type conversions the plan warns affect a seek or an estimate (PlanAffectingConvert)", nil, implicitConversion},
		{"no-join-predicate", "a join with no predicate (NoJoinPredicate)", nil, noJoinPredicate},
		{"no-statistics", "columns the optimizer had no statistics on (ColumnsWithNoStatistics)", nil, noStatistics},
		{"compile-timeout", "the optimizer stopped at its time limit (StatementOptmEarlyAbortReason TimeOut)", nil, compileTimeout},
		{"non-parallel", "why a costly plan is serial (NonParallelPlanReason)", []string{"smallQueryCost"}, nonParallel},
		{"events-lost", "events the session dropped: counts elsewhere may be short", []string{"lostShareLow"}, eventsLost},
		{"events-truncated", "the read-back stopped at the event cap", nil, eventsTruncated},
		{"events-ambiguous", "events that could not be tied to one operator", []string{"minAmbiguous", "ambiguousShare"}, eventsAmbiguous},
	}
}

// Rules lists every rule in the order findings of equal severity are
// reported.
func Rules() []RuleInfo {
	out := make([]RuleInfo, len(rules))
	for i, r := range rules {
		out[i] = RuleInfo{ID: r.id, Summary: r.summary, Thresholds: append([]string{}, r.thresholds...)}
	}
	return out
}

// ref builds the EventRef of one lane entry.
func (a *analysis) ref(lane string, i int) EventRef {
	t, end, m := laneEntry(a.in.Trace, lane, i)
	r := EventRef{ID: lane + "/" + strconv.Itoa(i), Lane: lane, Index: i, T: t, End: end}
	if m.NodeID >= 0 {
		n := int(m.NodeID)
		r.NodeID = &n
	}
	return r
}

// nodesOf lists the operators the evidence is tied to, in first-seen
// order.
func (a *analysis) nodesOf(evidence []laneIndices) []int {
	var nodes []int
	seen := map[int]bool{}
	for _, p := range evidence {
		_, at := lane(a.in.Trace, p.lane)
		for _, i := range p.idx {
			if _, _, m := at(i); m.NodeID >= 0 && !seen[int(m.NodeID)] {
				seen[int(m.NodeID)] = true
				nodes = append(nodes, int(m.NodeID))
			}
		}
	}
	return nodes
}

type entryAt func(i int) (t, end int64, m timeline.Match)

// lane returns a lane's length and a reader of its entries' times and
// matches (point events have end = t). An unknown lane is empty.
func lane(tr *timeline.Trace, name string) (int, entryAt) {
	l := &tr.Lanes
	switch name {
	case LaneRead:
		return len(l.Read), func(i int) (int64, int64, timeline.Match) { e := &l.Read[i]; return e.T, e.T, e.Match }
	case LaneWrite:
		return len(l.Write), func(i int) (int64, int64, timeline.Match) { e := &l.Write[i]; return e.T, e.T, e.Match }
	case LaneLock:
		return len(l.Lock), func(i int) (int64, int64, timeline.Match) { e := &l.Lock[i]; return e.T, e.End, e.Match }
	case LaneWait:
		return len(l.Wait), func(i int) (int64, int64, timeline.Match) { e := &l.Wait[i]; return e.T, e.End, e.Match }
	case LaneMemory:
		return len(l.Memory), func(i int) (int64, int64, timeline.Match) { e := &l.Memory[i]; return e.T, e.T, e.Match }
	case LaneSplit:
		return len(l.Split), func(i int) (int64, int64, timeline.Match) { e := &l.Split[i]; return e.T, e.T, e.Match }
	case LaneLog:
		return len(l.Log), func(i int) (int64, int64, timeline.Match) { e := &l.Log[i]; return e.T, e.T, e.Match }
	case LaneIO:
		return len(l.IO), func(i int) (int64, int64, timeline.Match) { e := &l.IO[i]; return e.T, e.End, e.Match }
	case LaneEscalation:
		return len(l.Escalation), func(i int) (int64, int64, timeline.Match) { e := &l.Escalation[i]; return e.T, e.T, e.Match }
	}
	return 0, nil
}

// laneEntry returns one lane entry's times and match.
func laneEntry(tr *timeline.Trace, name string, i int) (t, end int64, m timeline.Match) {
	_, at := lane(tr, name)
	return at(i)
}

// opRefs names the operators of the given node ids (unknown ids are left
// out).
func (a *analysis) opRefs(ids ...int) []OperatorRef {
	var out []OperatorRef
	for _, id := range ids {
		if o := a.p.Op(id); o != nil {
			out = append(out, o.Ref())
		}
	}
	return out
}

func num(name string, v float64, unit, source string) Number {
	return Number{Name: name, Value: v, Unit: unit, Source: source}
}
