package timeline

import (
	"fmt"
	"strconv"
)

// Rule says how an event was tied to an operator.
type Rule uint8

const (
	// RuleUnmatched: no honest match was found.
	RuleUnmatched Rule = iota
	// RuleNodeID: the event carries the operator's node id.
	RuleNodeID
	// RuleObject: exactly one operator touches the event's object.
	RuleObject
	// RuleObjectTiming: several operators touch the object; their execution
	// windows decided.
	RuleObjectTiming
	// RuleTiming: the event names no object; the operator whose window best
	// contains it (or the nearest) was taken.
	RuleTiming
	// RuleStatement: the event belongs to the statement, not to an operator
	// (memory grant usage, batch events).
	RuleStatement
)

var ruleNames = [...]string{"unmatched", "node_id", "object", "object_timing", "timing", "statement"}

func (r Rule) String() string { return ruleNames[r] }

// MarshalText writes the rule's name.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a rule's name.
func (r *Rule) UnmarshalText(b []byte) error {
	for i, n := range ruleNames {
		if n == string(b) {
			*r = Rule(i)
			return nil
		}
	}
	return fmt.Errorf("unknown match rule %q", b)
}

// Confidence grades a match.
type Confidence uint8

const (
	ConfidenceNone Confidence = iota
	// ConfidenceLow: timing alone.
	ConfidenceLow
	// ConfidenceWeak: the table matches but one side has no index name.
	ConfidenceWeak
	// ConfidenceStrong: table and index match.
	ConfidenceStrong
	// ConfidenceExact: the event named the node.
	ConfidenceExact
)

var confidenceNames = [...]string{"none", "low", "weak", "strong", "exact"}

func (c Confidence) String() string { return confidenceNames[c] }

// MarshalText writes the confidence's name.
func (c Confidence) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a confidence's name.
func (c *Confidence) UnmarshalText(b []byte) error {
	for i, n := range confidenceNames {
		if n == string(b) {
			*c = Confidence(i)
			return nil
		}
	}
	return fmt.Errorf("unknown match confidence %q", b)
}

// NodeID is a plan operator's NodeId, or Unmatched.
type NodeID int32

// Unmatched is the NodeID of an event tied to no operator.
const Unmatched NodeID = -1

// MarshalJSON writes null for Unmatched.
func (n NodeID) MarshalJSON() ([]byte, error) {
	if n < 0 {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(n), 10), nil
}

// UnmarshalJSON reads null as Unmatched.
func (n *NodeID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Unmatched
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil || v < 0 {
		return fmt.Errorf("node id %s is not null or a non-negative integer", b)
	}
	*n = NodeID(v)
	return nil
}

// Match is where an event belongs.
type Match struct {
	NodeID     NodeID     `json:"nodeId"`
	Rule       Rule       `json:"rule"`
	Confidence Confidence `json:"confidence"`
	// Ambiguous is set when more than one operator could have caused the
	// event and timing alone chose (or nothing could choose: NodeID is then
	// null). Candidates names the list of them, in plan order, in the
	// lanes' table (Lanes.CandidatesOf); the JSON carries the list inline
	// as "candidates". An ambiguous match has confidence low at best.
	Ambiguous  bool          `json:"ambiguous,omitempty"`
	Candidates CandidatesRef `json:"-"`
}

// ObjectRef names an entry's object: its place in Lanes.Objects counted
// from 1, 0 for none (Lanes.ObjectOf). CandidatesRef names a match's
// candidate list in Lanes.CandidateSets the same way. They are handles,
// not a pointer and a slice, so that the lanes' entries hold no pointer:
// a million-entry lane is then memory the garbage collector never scans
// (issue 26: scanning the read lane on every cycle was a third of a
// build's time). TestLaneEntriesHoldNoPointer keeps it so.
type (
	ObjectRef     uint32
	CandidatesRef uint32
)

// PhaseKind names an operator phase.
type PhaseKind string

const (
	// PhaseConsume: a blocking operator reads its input before its first row.
	PhaseConsume PhaseKind = "consume"
	// PhaseBuild: a hybrid operator (hash join) reads its blocking input.
	PhaseBuild PhaseKind = "build"
	// PhaseProbe: a hybrid operator streams its other inputs against the build.
	PhaseProbe PhaseKind = "probe"
	// PhaseEmit: rows leave the operator.
	PhaseEmit PhaseKind = "emit"
	// PhaseReexecuted: the operator ran Executions times inside the phase
	// (the inner side of a nested loops), and the events do not show the
	// single executions; each was its own consume→emit cycle.
	PhaseReexecuted PhaseKind = "reexecuted"
)

// Phase is one phase of an operator, in µs from time zero.
type Phase struct {
	Kind  PhaseKind `json:"kind"`
	Start int64     `json:"start"`
	End   int64     `json:"end"`
	// Execution numbers the execution (from 1) this phase belongs to, when
	// the events show an operator's executions one by one; 0 otherwise.
	Execution int `json:"execution,omitempty"`
	// Executions is how many executions the phase stands for, when more
	// than one: a reexecuted phase, or an emit phase of a spool or sort
	// that replayed its result (rewinds) without reading its input again.
	Executions int64 `json:"executions,omitempty"`
	// Source says what the boundary between this phase and its neighbour
	// (a build's or consume phase's end, an emit or probe phase's start)
	// rests on: "events" (the inputs' or the operator's own matched
	// events: the build input's last, the probe input's first, a spill
	// warning), "thread_profile" (a query_thread_profile window's bound or
	// active time), "plan" (ActualElapsedms), "derived" (its inputs'
	// times), "parent" (placed by its parent's phases) or "estimate"
	// (nothing says: halfway, or one of n equal cycles).
	Source string `json:"source,omitempty"`
}

// Cycle is one execution of a re-executed operator that the events show
// (repeated query_thread_profile windows of one thread).
type Cycle struct {
	Execution int   `json:"execution"`
	Thread    int   `json:"thread"`
	Start     int64 `json:"start"`
	FirstEmit int64 `json:"firstEmit"`
	End       int64 `json:"end"`
}

// ThreadBar is one thread's share of a parallel operator: when it ran and
// how many rows it produced, so skew between threads is visible. Thread 0
// of a parallel branch is the coordinator (no rows).
type ThreadBar struct {
	Thread     int   `json:"thread"`
	Start      int64 `json:"start"`
	End        int64 `json:"end"`
	Rows       int64 `json:"rows"`
	Executions int64 `json:"executions,omitempty"`
	// Source is "thread_profile" (its own query_thread_profile window) or
	// "plan" (anchored at the operator's start, lasting the thread's
	// ActualElapsedms, or the operator's span without one).
	Source string `json:"source"`
}

// ExchangeSide is one side of a Parallelism operator.
type ExchangeSide struct {
	// Threads are the worker thread ids on this side (from the runtime
	// counters; the coordinator, thread 0, is left out of a side that has
	// others).
	Threads []int `json:"threads"`
	Start   int64 `json:"start"`
	End     int64 `json:"end"`
	// Rows is what this side moved: rows the producers pushed in, rows the
	// consumers pulled out.
	Rows int64 `json:"rows"`
	// Source is "thread_profile" when the exchange's own windows for these
	// threads gave the times, else "derived" (the producing child's span for
	// producers, the exchange's span for consumers). Thread ids restart in
	// every branch, so when both sides share ids (Repartition Streams) the
	// windows cannot be told apart and both sides are derived.
	Source string `json:"source"`
}

// Exchange shows both sides of a Parallelism operator: producer threads
// (the branch below) push packets, consumer threads (the branch above)
// pull them.
type Exchange struct {
	Producer ExchangeSide `json:"producer"`
	Consumer ExchangeSide `json:"consumer"`
}

// Operator is one plan operator on the timeline. Times are µs from time zero.
type Operator struct {
	ID         int    `json:"id"`
	Parent     *int   `json:"parent"`
	PhysicalOp string `json:"physicalOp"`
	LogicalOp  string `json:"logicalOp"`
	// Name is what SSMS and Plan Explorer call the operator: "Key Lookup"
	// for a Clustered Index Seek whose IndexScan has Lookup="1", "RID
	// Lookup", "Columnstore Index Scan"; PhysicalOp otherwise
	// (showplan.Operator.DisplayName). Absent from traces written before
	// it existed: DisplayName falls back to PhysicalOp.
	Name      string  `json:"name,omitempty"`
	Behavior  string  `json:"behavior"`
	Object    string  `json:"object,omitempty"`
	Start     int64   `json:"start"`
	FirstEmit int64   `json:"firstEmit"`
	End       int64   `json:"end"`
	Phases    []Phase `json:"phases"`
	// TimeSource says where Start and End came from: "events" (its matched
	// events), "derived" (its inputs' events, with its active time),
	// "thread_profile" (only its query_thread_profile windows, taken where
	// they were recorded as operators closed), "parent" (nothing of its own
	// that places it: inside what its parent's phases allow, e.g. a probe
	// input after its hash join's build, for its active time) or
	// "not_executed". A window bounds an operator — it was opened by the
	// window's start and worked no later than its end — and never says by
	// itself that it worked until the window's end.
	TimeSource string `json:"timeSource"`
	// Window is the query_thread_profile execution window, when there is one.
	Window *Window `json:"window,omitempty"`
	// NotExecuted: the operator never ran (ActualExecutions 0, the input an
	// adaptive join did not choose, or below such an operator).
	// NotExecutedReason says which. It has no phases, Start, FirstEmit and
	// End are its parent's start, and the plan lane leaves it out.
	NotExecuted       bool   `json:"notExecuted,omitempty"`
	NotExecutedReason string `json:"notExecutedReason,omitempty"`
	// Executions is the most executions one thread made (ActualExecutions);
	// more than 1 on the inner side of a nested loops. Rebinds and Rewinds
	// are that thread's counters where the plan has them (spools, sorts,
	// table-valued functions): a rebind reads the input again, a rewind
	// replays the stored result.
	Executions int64 `json:"executions,omitempty"`
	Rebinds    int64 `json:"rebinds,omitempty"`
	Rewinds    int64 `json:"rewinds,omitempty"`
	// Cycles are the executions the events show one by one; Phases then
	// holds each cycle's phases, numbered by Execution.
	Cycles []Cycle `json:"cycles,omitempty"`
	// Threads are per-thread bars of a parallel operator.
	Threads []ThreadBar `json:"threads,omitempty"`
	// Exchange is set for Parallelism operators.
	Exchange *Exchange `json:"exchange,omitempty"`
}

// DisplayName is the operator's name as SSMS shows it (Name), or
// PhysicalOp for a trace written before Name existed.
func (o *Operator) DisplayName() string {
	if o.Name != "" {
		return o.Name
	}
	return o.PhysicalOp
}

// Window is an execution window [Start, End] in µs.
type Window struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// PageEvent is a physical_page_read or physical_page_write.
type PageEvent struct {
	T int64 `json:"t"`
	Match
	DatabaseID uint64    `json:"databaseId,omitempty"`
	FileID     uint64    `json:"file"`
	PageID     uint64    `json:"page"`
	Object     ObjectRef `json:"-"`
	// Stack is the event's call stack (Trace.Stacks), 0 for none.
	Stack uint32 `json:"stack,omitempty"`
}

// LockInterval is a lock from acquisition to release.
type LockInterval struct {
	T   int64 `json:"t"`
	End int64 `json:"end"`
	Match
	Mode         string `json:"mode"`
	ResourceType string `json:"resourceType"`
	// Resource identifies the resource: "db:hobt:r0:r1:r2" as the event gave it.
	Resource      string    `json:"resource"`
	TransactionID int64     `json:"transactionId"`
	Object        ObjectRef `json:"-"`
	// Open: no release was captured; End is the statement end. HeldToEnd
	// says the same (the name schema 1 used; kept for its readers).
	Open      bool `json:"open,omitempty"`
	HeldToEnd bool `json:"heldToEnd,omitempty"`
	// Row is the resolved row for a key lock, when the tracer supplied one.
	Row string `json:"row,omitempty"`
	// Released is false for a release-only event whose acquisition was not
	// captured (the interval is then taken from its measured duration).
	AcquireSeen bool `json:"acquireSeen"`
	// Stack is the acquiring event's call stack (the releasing one's when
	// only the release was captured), 0 for none.
	Stack uint32 `json:"stack,omitempty"`
}

// WaitInterval is a wait from begin to end.
type WaitInterval struct {
	T   int64 `json:"t"`
	End int64 `json:"end"`
	Match
	WaitType string `json:"waitType"`
	Category string `json:"category"`
	// DurationUs is how long the wait lasted, in µs: from its begin to its
	// end on the trace's clock when both were captured (DurationSource
	// "events"; never less than the event's own duration), else the
	// event's duration field (DurationSource "duration_ms": whole ms
	// ×1000). An open wait has 0.
	DurationUs     uint64 `json:"durationUs"`
	DurationSource string `json:"durationSource,omitempty"`
	// DurationMs and SignalDurationMs are wait_info's duration and
	// signal_duration fields as the event gave them: whole milliseconds
	// (https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-object-columns-transact-sql
	// lists the columns; SQL Server reports them in ms).
	DurationMs       uint64 `json:"durationMs"`
	SignalDurationMs uint64 `json:"signalDurationMs"`
	// UnderOneMs: the event's duration field read 0 ms, so the wait was
	// shorter than 1 ms. With its begin and end captured DurationUs still
	// measures it; seen only by its end, its length is unknown (0).
	UnderOneMs bool `json:"underOneMs,omitempty"`
	// Open: the wait began but its end was not captured; End is the
	// statement end.
	Open bool `json:"open,omitempty"`
	// Stack is the call stack of the wait's begin (of its end or
	// wait_completed when no begin was captured), 0 for none.
	Stack uint32 `json:"stack,omitempty"`
}

// MemoryEvent is a memory grant usage report or a spill.
type MemoryEvent struct {
	T int64 `json:"t"`
	Match
	// Kind is the event name: query_memory_grant_usage, hash_warning,
	// sort_warning, hash_spill_details or exchange_spill.
	Kind            string `json:"kind"`
	Detail          string `json:"detail,omitempty"`
	GrantedMemoryKB uint64 `json:"grantedKB,omitempty"`
	UsedMemoryKB    uint64 `json:"usedKB,omitempty"`
	Spill           bool   `json:"spill"`
	Stack           uint32 `json:"stack,omitempty"`
}

// SplitEvent is a page_split.
type SplitEvent struct {
	T int64 `json:"t"`
	Match
	FileID    uint64    `json:"file"`
	PageID    uint64    `json:"page"`
	NewFileID uint64    `json:"newFile"`
	NewPageID uint64    `json:"newPage"`
	Operation string    `json:"operation"`
	Object    ObjectRef `json:"-"`
	Stack     uint32    `json:"stack,omitempty"`
}

// EscalationEvent is a lock_escalation: SQL Server traded a statement's
// row or page locks on one object (EscalatedLockCount of them; HoBTLocks
// on the HoBT) for one lock of Mode on ResourceType (OBJECT, or HOBT when
// the table escalates by partition). Cause is the escalation_cause text
// (lock threshold or memory). It is the statement's, tied to no operator.
type EscalationEvent struct {
	T int64 `json:"t"`
	Match
	Mode          string    `json:"mode"`
	ResourceType  string    `json:"resourceType"`
	Cause         string    `json:"cause,omitempty"`
	EscalatedLock uint64    `json:"escalatedLockCount"`
	HoBTLocks     uint64    `json:"hobtLockCount,omitempty"`
	Object        ObjectRef `json:"-"`
	Stack         uint32    `json:"stack,omitempty"`
}

// LogEvent is a transaction_log record or a log_flush_complete.
type LogEvent struct {
	T int64 `json:"t"`
	Match
	Kind          string    `json:"kind"` // record or flush
	Operation     string    `json:"operation,omitempty"`
	Context       string    `json:"context,omitempty"`
	TransactionID int64     `json:"transactionId,omitempty"`
	Size          uint64    `json:"size,omitempty"`
	Object        ObjectRef `json:"-"`
	Stack         uint32    `json:"stack,omitempty"`
}

// IOInterval is a file read (issued to completed) or write.
type IOInterval struct {
	T   int64 `json:"t"`
	End int64 `json:"end"`
	Match
	Write      bool   `json:"write"`
	DatabaseID uint64 `json:"databaseId"`
	FileID     uint64 `json:"file"`
	Offset     uint64 `json:"offset"`
	Size       uint64 `json:"size"`
	DurationUs uint64 `json:"durationUs"`
	// Completed is false for an issued read whose completion was not
	// captured; Open says the same (End is then T).
	Completed bool `json:"completed"`
	Open      bool `json:"open,omitempty"`
}

// PlanEntry is an operator's bar on the plan lane; the operator itself (with
// its phases) is in Trace.Operators.
type PlanEntry struct {
	T         int64  `json:"t"`
	End       int64  `json:"end"`
	FirstEmit int64  `json:"firstEmit"`
	NodeID    NodeID `json:"nodeId"`
}

// Lanes hold every view's entries, each sorted by time.
type Lanes struct {
	Plan   []PlanEntry    `json:"plan"`
	Read   []PageEvent    `json:"read"`
	Write  []PageEvent    `json:"write"`
	Lock   []LockInterval `json:"lock"`
	Wait   []WaitInterval `json:"wait"`
	Memory []MemoryEvent  `json:"memory"`
	Split  []SplitEvent   `json:"split"`
	Log    []LogEvent     `json:"log"`
	IO     []IOInterval   `json:"io"`
	// Escalation holds the lock_escalation events: rare (one per object
	// a statement escalates on), so the lane is left out when empty and
	// traces written before it existed load unchanged.
	Escalation []EscalationEvent `json:"escalation,omitempty"`
	// Objects holds each object the entries name once (their ObjectRef
	// handles index it) and CandidateSets each distinct candidate list of
	// an ambiguous match once (CandidatesRef). The JSON has no tables: it
	// writes and reads every entry's "object" and "candidates" inline, as
	// it always did (tracejson.go).
	Objects       []ObjectName `json:"-"`
	CandidateSets [][]NodeID   `json:"-"`
}

// ObjectOf is the object r names, nil for none (or a handle out of the
// table). The name is the table's: change it and every entry naming it
// changes.
func (l *Lanes) ObjectOf(r ObjectRef) *ObjectName {
	if r == 0 || int(r) > len(l.Objects) {
		return nil
	}
	return &l.Objects[r-1]
}

// CandidatesOf is the candidate list of an ambiguous match, nil for none.
// It is shared by every match with the same list: do not modify it.
func (l *Lanes) CandidatesOf(m *Match) []NodeID {
	if m.Candidates == 0 || int(m.Candidates) > len(l.CandidateSets) {
		return nil
	}
	return l.CandidateSets[m.Candidates-1]
}

// ObjectOf is Lanes.ObjectOf on the trace's lanes.
func (t *Trace) ObjectOf(r ObjectRef) *ObjectName { return t.Lanes.ObjectOf(r) }

// CandidatesOf is Lanes.CandidatesOf on the trace's lanes.
func (t *Trace) CandidatesOf(m *Match) []NodeID { return t.Lanes.CandidatesOf(m) }

// EachMatch calls f with the match of every entry of the event lanes (not
// Plan), lane by lane in the order of the fields.
func (l *Lanes) EachMatch(f func(*Match)) {
	l.eachTimed(func(_ int64, m *Match) { f(m) })
}

// Schema is the version of the Trace JSON this package writes. Schemas 1
// (before the field existed) and 2 still load; see Trace.UnmarshalJSON.
const Schema = 3

// StackFrame is one call-stack frame as pkg/callstack parsed it, with its
// resolution when the tracer resolved it.
type StackFrame struct {
	// Module is the short module name (sqlmin); empty for a bare address
	// no module base placed.
	Module string `json:"module,omitempty"`
	// RVA is the offset in the module (HasRVA); Address the virtual
	// address when the frame came as one.
	RVA     uint32 `json:"rva,omitempty"`
	HasRVA  bool   `json:"hasRva,omitempty"`
	Address uint64 `json:"address,omitempty"`
	// PDB, GUID (registry form) and Age identify the module's build.
	PDB  string `json:"pdb,omitempty"`
	GUID string `json:"guid,omitempty"`
	Age  uint32 `json:"age,omitempty"`
	// Symbol is the name-only function (Class::Method) and Offset the
	// displacement in it: set for frames that arrived symbolised, or once
	// the tracer resolved them. Unresolved says why a frame has none.
	Symbol     string `json:"symbol,omitempty"`
	Offset     uint64 `json:"offset,omitempty"`
	Unresolved string `json:"unresolved,omitempty"`
}

// Stack is one distinct call stack of the trace, innermost frame first.
// Lane entries refer to it by ID (1-based: 0 means no stack).
type Stack struct {
	ID     uint32       `json:"id"`
	Frames []StackFrame `json:"frames"`
	// Events counts the events that carried it.
	Events int `json:"events"`
}

// Trace is the rebuilt timeline.
type Trace struct {
	// Schema is the JSON's version (Schema).
	Schema int `json:"schema"`
	// ZeroTime is the raw timestamp at time zero (RFC 3339).
	ZeroTime  string     `json:"zeroTime"`
	Start     int64      `json:"start"`
	End       int64      `json:"end"`
	Statement string     `json:"statement,omitempty"`
	Operators []Operator `json:"operators"`
	Lanes     Lanes      `json:"lanes"`
	Summary   Summary    `json:"summary"`
	// Stacks is the trace's stack table: each distinct call stack once
	// (schema 3); absent when no event carried one.
	Stacks []Stack `json:"stacks,omitempty"`
	// Pages holds page-header facts of pages the trace touched, when the
	// tracer read them (schema 3).
	Pages []PageHeader `json:"pages,omitempty"`
}

// PageHeader is what a page's header says (sys.dm_db_page_info, or the
// allocation DMV on older servers): its type, B-tree level and neighbours.
type PageHeader struct {
	DatabaseID uint64 `json:"databaseId"`
	FileID     uint64 `json:"file"`
	PageID     uint64 `json:"page"`
	// Type is page_type_desc (DATA_PAGE, INDEX_PAGE, IAM_PAGE, …).
	Type string `json:"type"`
	// Level is the B-tree level: 0 for the leaf, the highest at the root.
	Level int `json:"level"`
	// PrevFile:PrevPage and NextFile:NextPage are the page's neighbours at
	// its level; 0:0 when it has none.
	PrevFile uint64 `json:"prevFile,omitempty"`
	PrevPage uint64 `json:"prevPage,omitempty"`
	NextFile uint64 `json:"nextFile,omitempty"`
	NextPage uint64 `json:"nextPage,omitempty"`
	// ObjectID and IndexID name the owner as the header does.
	ObjectID int64 `json:"objectId,omitempty"`
	IndexID  int64 `json:"indexId,omitempty"`
}

// OperatorSummary counts what happened in one operator.
type OperatorSummary struct {
	ID     int            `json:"id"`
	Reads  int            `json:"reads"`
	Writes int            `json:"writes"`
	Locks  int            `json:"locks"`
	Waits  map[string]int `json:"waits,omitempty"`
	Spills int            `json:"spills"`
	Splits int            `json:"splits"`
	Logs   int            `json:"logRecords"`
}

// Summary holds the counts of a trace.
type Summary struct {
	// Events counts the events the trace holds (duplicates dropped).
	Events int `json:"events"`
	// Lanes counts entries per lane.
	Lanes map[string]int `json:"lanes"`
	// Unmatched counts entries per lane that no operator took.
	Unmatched map[string]int `json:"unmatched"`
	// Lost counts event_sequence gaps: events the session dropped.
	Lost uint64 `json:"lost"`
	// Gaps says where they were: each run of missing sequence numbers with
	// the times of the events around it (at most MaxGaps; GapsTruncated
	// says when there were more).
	Gaps          []Gap `json:"gaps,omitempty"`
	GapsTruncated bool  `json:"gapsTruncated,omitempty"`
	// Duplicates counts events dropped because an earlier one had the same
	// event_sequence and the same content (the same event fed twice).
	// SequenceClashes counts events kept although their event_sequence was
	// already taken by a different event.
	Duplicates      int `json:"duplicates,omitempty"`
	SequenceClashes int `json:"sequenceClashes,omitempty"`
	// WithoutSequence counts events with no event_sequence. When some events
	// have one and others not, the order is capture order and a note says so.
	WithoutSequence int `json:"withoutSequence,omitempty"`
	// Ordering is "event_sequence" or "capture".
	Ordering string `json:"ordering"`
	// Spread tells whether coincident millisecond timestamps were spread;
	// SpreadBuckets counts the milliseconds spread. A millisecond holding an
	// event with a sub-millisecond timestamp is not spread.
	Spread        bool `json:"spread"`
	SpreadBuckets int  `json:"spreadBuckets,omitempty"`
	// Ambiguous counts entries per lane whose match is ambiguous.
	Ambiguous map[string]int `json:"ambiguous,omitempty"`
	// TimingLimitUs is the distance limit of timing matches: an event with
	// no object farther than this from every operator window belongs to
	// the statement.
	TimingLimitUs int64 `json:"timingLimitUs"`
	// ElapsedUs is the batch's elapsed time, the one every view shows:
	// from sql_batch_starting (time zero) to sql_batch_completed on the
	// trace's clock (ElapsedSource "batch_events"); with one of them
	// missing, sql_batch_completed's own duration ("batch_duration"),
	// else the trace's extent End − Start ("extent").
	ElapsedUs     int64  `json:"elapsedUs"`
	ElapsedSource string `json:"elapsedSource,omitempty"`
	// BatchRowCount is sql_batch_completed's row_count: the rows the
	// batch's statements returned or affected (an UPDATE's changed rows
	// count here, not in the result sets the client drained).
	BatchRowCount int64 `json:"batchRowCount,omitempty"`
	// LeadInUs is the time from the batch's start (time zero) to the
	// first operator's start: compiling, waiting for a memory grant,
	// before the plan ran. OperatorUs is the plan's own time, from the
	// first operator's start to the last one's end.
	LeadInUs   int64 `json:"leadInUs"`
	OperatorUs int64 `json:"operatorUs"`
	// Other counts events that feed no lane, by name.
	Other     map[string]int    `json:"other,omitempty"`
	Operators []OperatorSummary `json:"operators"`
	// Notes explain anything the reader should know (no plan, no batch start…).
	Notes []string `json:"notes,omitempty"`
}

// Gap is a run of missing event_sequence numbers: Missing events between
// sequence After and Before, lost somewhere between times Start and End
// (the events on either side).
type Gap struct {
	After   uint64 `json:"after"`
	Before  uint64 `json:"before"`
	Missing uint64 `json:"missing"`
	Start   int64  `json:"start"`
	End     int64  `json:"end"`
}

// MaxGaps bounds Summary.Gaps.
const MaxGaps = 1000
