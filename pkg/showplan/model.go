package showplan

// Plan is one parsed showplan document: every statement of every batch, in
// document order. A plan captured by query_post_execution_showplan usually
// holds one statement; a .sqlplan saved from SSMS can hold a whole batch.
type Plan struct {
	// Version and Build are the ShowPlanXML attributes (e.g. "1.564",
	// "16.0.4222.2"); empty when the document does not carry them.
	Version string
	Build   string
	// Statements in document order. A statement nested in another one (the
	// Then branch of a StmtCond, the body of a UDF or stored procedure) comes
	// after its parent and names it in ParentIndex.
	Statements []*Statement
}

// Statement is one statement of a batch with its own operator tree.
//
// A cursor statement (StmtCursor) or a Service Broker RECEIVE (StmtReceive)
// can carry several query plans, one per Operation, whose NodeIds restart at
// 0. Each such Operation becomes its own Statement (same Type, Text and hashes,
// CursorOperation set) so that node ids stay unique within a Statement.
type Statement struct {
	// Index is this statement's position in Plan.Statements.
	Index int
	// Element is the showplan element the statement came from: StmtSimple,
	// StmtCond, StmtCursor, StmtReceive, StmtUseDb, ...
	Element string
	// Type is the StatementType attribute: SELECT, INSERT, COND, DECLARE
	// CURSOR, ...
	Type string
	// Text is StatementText as written in the plan (may be truncated by SQL
	// Server).
	Text string
	// Batch counts the Batch elements of the document, from 0.
	Batch int
	// ParentIndex is the Index of the enclosing statement (for statements in
	// a StmtCond branch or a UDF/procedure body), or -1 at batch level.
	ParentIndex int
	// Function is the ProcName of the UDF or StoredProc element whose body
	// holds this statement; empty for batch-level statements.
	Function string
	// CursorOperation is the OperationType of the cursor/receive Operation
	// this statement's plan belongs to (PopulateQuery, FetchQuery,
	// RefreshQuery, ReceivePlanSelect, ReceivePlanUpdate); empty otherwise.
	CursorOperation string
	// IsStatsMaintenance is set when the statement text names StatMan or
	// _MS_UPDSTATS_TBL: an automatic statistics update SQL Server ran on the
	// query's behalf, whose plan also reaches query_post_execution_showplan
	// (Internals Viewer [new] marks these as internal plans, docs/design/tracing.md
	// §7.1).
	IsStatsMaintenance bool

	StatementID     int     // StatementId: position of the statement in its batch
	QueryHash       string  // QueryHash as written, e.g. "0xBA69BDE3A966385E"
	QueryPlanHash   string  // QueryPlanHash as written
	SubtreeCost     float64 // StatementSubTreeCost
	EstimateRows    float64 // StatementEstRows
	OptimizerLevel  string  // StatementOptmLevel: TRIVIAL or FULL
	EarlyAbort      string  // StatementOptmEarlyAbortReason, e.g. TimeOut
	CEModelVersion  string  // CardinalityEstimationModelVersion
	HasPlan         bool    // a QueryPlan element was present
	DOP             int     // QueryPlan DegreeOfParallelism; 0 when absent (serial)
	NonParallelWhy  string  // QueryPlan NonParallelPlanReason
	CachedPlanKB    int64   // QueryPlan CachedPlanSize
	CompileTimeMs   int64   // QueryPlan CompileTime
	CompileCPUMs    int64   // QueryPlan CompileCPU
	CompileMemoryKB int64   // QueryPlan CompileMemory

	// TimeStats is QueryTimeStats (actual plans from SQL Server 2016 SP1 on);
	// nil when absent.
	TimeStats *TimeStats
	// MemoryGrant is MemoryGrantInfo; nil when absent.
	MemoryGrant *MemoryGrant
	// ThreadStat is the parallel thread usage; nil when absent.
	ThreadStat *ThreadStat
	// WaitStats are the statement's top waits (actual plans, SQL Server 2016
	// SP1+).
	WaitStats []Wait
	// Parameters is the QueryPlan's ParameterList: each parameter's
	// compiled (sniffed) and runtime values as written, at most
	// MaxParameters of them.
	Parameters []Parameter
	// MissingIndexes are the optimizer's missing-index groups.
	MissingIndexes []MissingIndexGroup
	// Warnings are the QueryPlan-level warnings (PlanAffectingConvert,
	// MemoryGrantWarning, grant Wait, SpillOccurred, ...).
	Warnings []Warning

	// Root is the top operator of the statement's plan; nil for statements
	// without a plan (SET, PRINT, USE, cursor CLOSE, ...).
	Root *Operator
	// Operators holds every RelOp of the plan in document (pre-order) order,
	// including RelOps nested under scalar subqueries.
	Operators []*Operator
}

// MaxParameters bounds ParameterList: SQL Server allows 2,100 parameters
// per procedure (https://learn.microsoft.com/en-us/sql/sql-server/maximum-capacity-specifications-for-sql-server).
const MaxParameters = 2100

// Parameter is one ParameterList/ColumnReference. Compiled and Runtime
// keep the plan's quoting ('2017-06-02 00:00:00.000', (42)); either is
// empty when the plan does not give it (an estimated plan has no runtime
// value).
type Parameter struct {
	Name     string `json:"name"`
	DataType string `json:"dataType,omitempty"`
	Compiled string `json:"compiled,omitempty"`
	Runtime  string `json:"runtime,omitempty"`
}

// TimeStats is the statement's QueryTimeStats, all in milliseconds.
type TimeStats struct {
	CPUMs          int64 `json:"cpuMs"`
	ElapsedMs      int64 `json:"elapsedMs"`
	UdfCPUMs       int64 `json:"udfCpuMs,omitempty"`
	UdfElapsedMs   int64 `json:"udfElapsedMs,omitempty"`
	HasUdfCounters bool  `json:"hasUdfCounters,omitempty"`
}

// MemoryGrant is MemoryGrantInfo; sizes in KB, GrantWaitTime in the unit the
// plan uses (the XSD documents it as seconds [D]).
type MemoryGrant struct {
	SerialRequiredKB int64 `json:"serialRequiredKB,omitempty"`
	SerialDesiredKB  int64 `json:"serialDesiredKB,omitempty"`
	RequiredKB       int64 `json:"requiredKB,omitempty"`
	DesiredKB        int64 `json:"desiredKB,omitempty"`
	RequestedKB      int64 `json:"requestedKB,omitempty"`
	GrantedKB        int64 `json:"grantedKB,omitempty"`
	MaxUsedKB        int64 `json:"maxUsedKB,omitempty"`
	MaxQueryKB       int64 `json:"maxQueryKB,omitempty"`
	LastRequestedKB  int64 `json:"lastRequestedKB,omitempty"`
	GrantWaitTime    int64 `json:"grantWaitTime,omitempty"`
	// FeedbackAdjusted is IsMemoryGrantFeedbackAdjusted, e.g. "No: First Execution".
	FeedbackAdjusted string `json:"feedbackAdjusted,omitempty"`
}

// ThreadStat is the ThreadStat element of a parallel plan.
type ThreadStat struct {
	Branches        int `json:"branches,omitempty"`
	UsedThreads     int `json:"usedThreads,omitempty"`
	ReservedThreads int `json:"reservedThreads,omitempty"` // summed over ThreadReservation elements
}

// Wait is one WaitStats/Wait entry.
type Wait struct {
	Type   string `json:"type"`
	TimeMs int64  `json:"timeMs"`
	Count  int64  `json:"count"`
}

// MissingIndexGroup is one MissingIndexGroup with its Impact (percent).
type MissingIndexGroup struct {
	Impact  float64        `json:"impact"`
	Indexes []MissingIndex `json:"indexes,omitempty"`
}

// MissingIndex is one suggested index; names keep the plan's brackets
// trimmed.
type MissingIndex struct {
	Database   string   `json:"database,omitempty"`
	Schema     string   `json:"schema,omitempty"`
	Table      string   `json:"table"`
	Equality   []string `json:"equality,omitempty"`
	Inequality []string `json:"inequality,omitempty"`
	Include    []string `json:"include,omitempty"`
}

// Operator is one RelOp.
type Operator struct {
	// NodeID is the RelOp NodeId; it matches query_thread_profile's node_id.
	NodeID int
	// Parent is the enclosing RelOp (nil at the root). For a RelOp under a
	// scalar subquery, the parent is the operator whose expression holds the
	// subquery.
	Parent *Operator
	// Children are the RelOps whose nearest enclosing RelOp is this one, in
	// showplan (document) order.
	Children []*Operator
	// Depth is 0 at the root.
	Depth int
	// InExpression is set for a RelOp nested in its parent's scalar
	// expression (a Subquery under a ScalarOperator) rather than being one of
	// the parent's row inputs. Semantics considers only the row inputs.
	InExpression bool

	PhysicalOp string
	LogicalOp  string
	// Element is the operator-specific child of RelOp (Hash, IndexScan,
	// NestedLoops, Sort, ...).
	Element string
	// IsKeyLookup is set for a Clustered Index Seek whose IndexScan has
	// Lookup="1" (shown by SSMS as "Key Lookup"), or a PhysicalOp "Key
	// Lookup"; never for a RID Lookup (its IndexScan has Lookup="1" too).
	IsKeyLookup bool
	// DisplayName is what a person expects to read, as SSMS names it: "Key
	// Lookup" for key lookups, "RID Lookup" for heap lookups,
	// "Columnstore Index Scan" for an index scan on ColumnStore storage,
	// PhysicalOp otherwise. Every surface (terminal, plan tree, frames,
	// findings, compare) shows it.
	DisplayName string

	EstimateRows float64
	// EstimateRowsWithoutRowGoal is the estimate before a row goal (TOP,
	// EXISTS, IN, FAST n) scaled it down; 0 when the plan records none,
	// which means no row goal applied to this operator.
	EstimateRowsWithoutRowGoal float64
	EstimatedRowsRead          float64
	EstimateCPU                float64
	EstimateIO                 float64
	AvgRowSize                 float64
	// SubtreeCost is EstimatedTotalSubtreeCost.
	SubtreeCost float64
	// OwnCost is SubtreeCost minus the children's SubtreeCost, floored at 0.
	OwnCost  float64
	Parallel bool
	// EstimatedExecutionMode is the RelOp attribute (Row or Batch; empty
	// before SQL Server 2012).
	EstimatedExecutionMode string
	// ExecutionMode is the actual mode from the runtime counters when present,
	// else EstimatedExecutionMode, else "Row".
	ExecutionMode string
	// IsAdaptive is the RelOp IsAdaptive attribute (adaptive joins).
	IsAdaptive bool
	// AdaptiveThresholdRows is the adaptive join's switch point.
	AdaptiveThresholdRows float64
	// EstimatedJoinType (RelOp attribute) and ActualJoinType (from the
	// runtime counters) of an adaptive join: Hash Match or Nested Loops.
	EstimatedJoinType string
	ActualJoinType    string

	// Object is the operator's own first Object (nil if it has none); Objects
	// holds all of them (a wide insert or delete maintains several indexes).
	// Objects of child operators are never included.
	Object  *ObjectRef
	Objects []ObjectRef

	// Ordered and ScanDirection come from IndexScan or TableScan.
	Ordered       bool
	ScanDirection string
	// PrimarySpoolNodeID is the NodeId of the spool that fills the worktable
	// this spool replays (Spool PrimaryNodeId); -1 when absent.
	PrimarySpoolNodeID int
	// ForcedIndex is the IndexScan ForcedIndex attribute: the index was
	// named by a table hint (WITH (INDEX(...))).
	ForcedIndex bool
	// HasGroupBy is set when the operator element names GROUP BY columns
	// (StreamAggregate/GroupBy); a hash aggregate's keys are HashKeysBuild.
	HasGroupBy bool
	// PartitioningType of a Parallelism operator (Hash, RoundRobin,
	// Broadcast, ...).
	PartitioningType string

	// HashKeysBuild and HashKeysProbe are the hash join keys as column text.
	HashKeysBuild []string
	HashKeysProbe []string
	// SeekPredicates holds one text per SeekPredicate(New), e.g.
	// "[u].[Reputation] = (942)".
	SeekPredicates []string
	// Predicate is the residual predicate (Predicate element) as text.
	Predicate string
	// ProbeResidual is a hash join's ProbeResidual or a merge join's Residual.
	ProbeResidual string

	Warnings []Warning
	// Threads are the RunTimeCountersPerThread entries in plan order; empty
	// for an estimated plan.
	Threads []ThreadCounters
	// Actual sums Threads (see Totals); nil when the operator has no
	// RunTimeInformation: every operator of an estimated plan, and in actual
	// plans operators SQL Server does not instrument (often Compute Scalar).
	Actual *Totals

	// Semantics says whether the operator streams or blocks; see
	// semantics.go.
	Semantics Semantics
}

// ObjectRef is an Object element with the square brackets trimmed.
type ObjectRef struct {
	Server    string `json:"server,omitempty"`
	Database  string `json:"database,omitempty"`
	Schema    string `json:"schema,omitempty"`
	Table     string `json:"table,omitempty"`
	Index     string `json:"index,omitempty"`
	Alias     string `json:"alias,omitempty"`
	IndexKind string `json:"indexKind,omitempty"` // Heap, Clustered, NonClustered, ViewClustered, ...
	Storage   string `json:"storage,omitempty"`   // RowStore, ColumnStore, MemoryOptimized
	Filtered  bool   `json:"filtered,omitempty"`
}

// Warning is one operator or statement warning.
type Warning struct {
	// Kind is the warning element or attribute name: SpillToTempDb,
	// SortSpillDetails, HashSpillDetails, ExchangeSpillDetails, NoJoinPredicate,
	// PlanAffectingConvert, ColumnsWithNoStatistics, MemoryGrantWarning, Wait,
	// UnmatchedIndexes, ... plus ImplicitConversion, which this package derives
	// from a CONVERT_IMPLICIT in the operator's own seek or residual predicate.
	Kind string
	// Text is a one-line description for people.
	Text string
	// Attributes holds the warning element's attributes as written.
	Attributes map[string]string
	// Columns lists the columns of ColumnsWithNoStatistics /
	// ColumnsWithStaleStatistics.
	Columns []string
}

// ThreadCounters is one RunTimeCountersPerThread element. Row-mode
// ElapsedMs/CPUMs are cumulative over the operator's subtree; batch-mode
// operators report their own time [V, docs/design/tracing.md §7.2].
type ThreadCounters struct {
	Thread        int
	ExecutionMode string
	// ActualJoinType is what an adaptive join chose at run time.
	ActualJoinType string
	Rows           int64
	RowsRead       int64
	HasRowsRead    bool
	Executions     int64
	EndOfScans     int64
	Rebinds        int64
	Rewinds        int64
	Batches        int64
	// HasTiming is set when ActualElapsedms/ActualCPUms were present (not
	// under older builds; CPU may be 0 under lightweight profiling).
	HasTiming             bool
	ElapsedMs             int64
	CPUMs                 int64
	Scans                 int64
	LogicalReads          int64
	PhysicalReads         int64
	PageServerReads       int64
	ReadAheads            int64
	LobLogicalReads       int64
	LobPhysicalReads      int64
	LobReadAheads         int64
	SegmentReads          int64
	SegmentSkips          int64
	LocallyAggregatedRows int64
	InputMemoryGrantKB    int64
	OutputMemoryGrantKB   int64
	UsedMemoryGrantKB     int64
}

// Totals aggregates an operator's ThreadCounters. Counters are summed over
// threads, except ElapsedMs, which is the longest thread's (threads run
// concurrently, so their sum is not a duration).
type Totals struct {
	Threads           int
	Rows              int64
	RowsRead          int64
	Executions        int64
	EndOfScans        int64
	Rebinds           int64
	Rewinds           int64
	Batches           int64
	HasTiming         bool
	ElapsedMs         int64
	CPUMs             int64
	Scans             int64
	LogicalReads      int64
	PhysicalReads     int64
	ReadAheads        int64
	LobLogicalReads   int64
	LobPhysicalReads  int64
	LobReadAheads     int64
	SegmentReads      int64
	SegmentSkips      int64
	UsedMemoryGrantKB int64
}

// OperatorByID returns the statement's operator with the given NodeId, or nil.
func (s *Statement) OperatorByID(id int) *Operator {
	for _, op := range s.Operators {
		if op.NodeID == id {
			return op
		}
	}
	return nil
}
