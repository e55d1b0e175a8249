package xe

import "math"

// Typed views of the events the tracer and the exporter use.
//
// Each AsXxx function reads one generic Event into a struct; ok is false
// when the event has another name. Fields the event does not carry stay
// zero (use Event.Data to tell absent from zero). Strings in the result
// share memory with the Event, so they follow its lifetime: with a decoder
// in ReuseEvents mode, Clone the event first to keep them.
//
// Units. Every duration is normalised to microseconds in a field named
// …Us. The comment on each says the unit SQL Server prints and how sure we
// are of it, with the markers of docs/design/event-fields.md: [R] seen in real
// captures, [D] Microsoft documentation, [S] third-party scripts, [U]
// unverified — check sys.dm_xe_object_columns on a real server
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-object-columns-transact-sql).
// Columns whose very name is [U] are not modelled (read them generically),
// except transaction_log's log_record_size, which the log matcher needs; it
// is an Optional marked [U].

// Optional is a value that may be absent from an event (actions depend on
// the session definition).
type Optional[T any] struct {
	Value T
	Valid bool
}

// Actions are the actions QueryReplay's sessions attach to events.
type Actions struct {
	SessionID    Optional[uint64] // sqlserver.session_id
	RequestID    Optional[uint64] // sqlserver.request_id
	DatabaseID   Optional[uint64] // sqlserver.database_id
	DatabaseName Optional[string] // sqlserver.database_name
	// PlanHandle is printed as hex without "0x" [R]; Value.Bytes decodes it.
	PlanHandle          Optional[string]
	TransactionID       Optional[int64]  // sqlserver.transaction_id
	SQLText             Optional[string] // sqlserver.sql_text
	QueryHash           Optional[uint64] // sqlserver.query_hash (uint64 in XE, binary(8) in DMVs)
	QueryHashSigned     Optional[int64]  // sqlserver.query_hash_signed
	QueryPlanHash       Optional[uint64] // sqlserver.query_plan_hash
	QueryPlanHashSigned Optional[int64]  // sqlserver.query_plan_hash_signed
	// EventSequence is package0.event_sequence: contiguous per session, the
	// order to sort events by.
	EventSequence Optional[uint64]
	TaskAddress   Optional[uint64] // sqlos.task_address
	WorkerAddress Optional[uint64] // sqlos.worker_address
	// Callstack is package0.callstack verbatim (module+offset lines or raw
	// addresses); parsing it belongs to pkg/callstack.
	Callstack Optional[string]
	// CallstackRVA is package0.callstack_rva (SQL Server 2022+) verbatim: text
	// holding <frame …/> elements.
	CallstackRVA Optional[string]
}

// Common is what every typed event carries.
type Common struct {
	Name      string
	Package   string
	Timestamp Timestamp
	Actions   Actions
}

func commonOf(ev *Event) Common {
	c := Common{Name: ev.Name, Package: ev.Package, Timestamp: ev.Timestamp}
	a := &c.Actions
	for i := range ev.Actions {
		v := &ev.Actions[i].Value
		switch ev.Actions[i].Name {
		case "session_id":
			a.SessionID = optUint(v)
		case "request_id":
			a.RequestID = optUint(v)
		case "database_id":
			a.DatabaseID = optUint(v)
		case "database_name":
			a.DatabaseName = Optional[string]{v.Raw, true}
		case "plan_handle":
			a.PlanHandle = Optional[string]{v.Raw, true}
		case "transaction_id":
			a.TransactionID = optInt(v)
		case "sql_text":
			a.SQLText = Optional[string]{v.Raw, true}
		case "query_hash":
			a.QueryHash = optUint(v)
		case "query_hash_signed":
			a.QueryHashSigned = optInt(v)
		case "query_plan_hash":
			a.QueryPlanHash = optUint(v)
		case "query_plan_hash_signed":
			a.QueryPlanHashSigned = optInt(v)
		case "event_sequence":
			a.EventSequence = optUint(v)
		case "task_address":
			a.TaskAddress = optUint(v)
		case "worker_address":
			a.WorkerAddress = optUint(v)
		case "callstack":
			a.Callstack = Optional[string]{v.Raw, true}
		case "callstack_rva":
			a.CallstackRVA = Optional[string]{v.Raw, true}
		}
	}
	return c
}

func optUint(v *Value) Optional[uint64] {
	u, ok := v.Uint()
	return Optional[uint64]{u, ok}
}

func optInt(v *Value) Optional[int64] {
	i, ok := v.Int()
	return Optional[int64]{i, ok}
}

func u64(v *Value) uint64 { u, _ := v.Uint(); return u }
func i64(v *Value) int64  { i, _ := v.Int(); return i }
func boolOf(v *Value) bool {
	b, _ := v.Bool()
	return b
}

// msToUs converts a millisecond count to microseconds, saturating.
func msToUs(ms uint64) uint64 {
	if ms > math.MaxUint64/1000 {
		return math.MaxUint64
	}
	return ms * 1000
}

func mapOfField(ev *Event, i int, maps MapResolver) MapValue {
	mv, _ := ev.MapField(ev.Fields[i].Name, maps)
	return mv
}

// BatchStarting is sqlserver.sql_batch_starting.
type BatchStarting struct {
	Common
	BatchText string // customizable collect_batch_text [R]
}

// AsBatchStarting reads a sql_batch_starting event.
func AsBatchStarting(ev *Event) (BatchStarting, bool) {
	if ev.Name != "sql_batch_starting" {
		return BatchStarting{}, false
	}
	out := BatchStarting{Common: commonOf(ev)}
	if v, ok := ev.Data("batch_text"); ok {
		out.BatchText = v.Raw
	}
	return out, true
}

// Completion is the resource use reported by the *_completed events.
type Completion struct {
	// DurationUs: duration, printed in µs [R] (sql_batch_completed,
	// sql_statement_completed X3). rpc_completed prints it in the same unit
	// by every account, but that is [U] for the rpc event.
	DurationUs uint64
	// CPUTimeUs: cpu_time, printed in µs [R]: X3 has cpu_time 2,047,000 with
	// duration 2,768,452, which only µs fits; the metadata text saying
	// "milliseconds" is wrong. Same [U] caveat for rpc_completed.
	CPUTimeUs     uint64
	PhysicalReads uint64 // pages [R]
	LogicalReads  uint64 // pages [R]
	Writes        uint64 // pages [R]
	RowCount      uint64 // rows [R]
}

func (c *Completion) set(name string, v *Value) bool {
	switch name {
	case "duration":
		c.DurationUs = u64(v)
	case "cpu_time":
		c.CPUTimeUs = u64(v)
	case "physical_reads":
		c.PhysicalReads = u64(v)
	case "logical_reads":
		c.LogicalReads = u64(v)
	case "writes":
		c.Writes = u64(v)
	case "row_count":
		c.RowCount = u64(v)
	default:
		return false
	}
	return true
}

// BatchCompleted is sqlserver.sql_batch_completed.
type BatchCompleted struct {
	Common
	Completion
	Result    MapValue // map, 0 = OK [R]
	BatchText string   // [R]
}

// AsBatchCompleted reads a sql_batch_completed event.
func AsBatchCompleted(ev *Event, maps MapResolver) (BatchCompleted, bool) {
	if ev.Name != "sql_batch_completed" {
		return BatchCompleted{}, false
	}
	out := BatchCompleted{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		if out.Completion.set(f.Name, &f.Value) {
			continue
		}
		switch f.Name {
		case "result":
			out.Result = mapOfField(ev, i, maps)
		case "batch_text":
			out.BatchText = f.Value.Raw
		}
	}
	return out, true
}

// RPC is sqlserver.rpc_starting (Completed false) or rpc_completed.
type RPC struct {
	Common
	Completed bool
	// Completion is filled for rpc_completed only (columns [R], units: see
	// Completion).
	Completion
	Result     MapValue // rpc_completed [R]
	ObjectName string   // [R] (rpc_completed); rpc_starting [U]
	Statement  string   // [R] (rpc_completed); rpc_starting [U]
}

// AsRPC reads an rpc_starting or rpc_completed event.
func AsRPC(ev *Event, maps MapResolver) (RPC, bool) {
	if ev.Name != "rpc_starting" && ev.Name != "rpc_completed" {
		return RPC{}, false
	}
	out := RPC{Common: commonOf(ev), Completed: ev.Name == "rpc_completed"}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		if out.Completion.set(f.Name, &f.Value) {
			continue
		}
		switch f.Name {
		case "result":
			out.Result = mapOfField(ev, i, maps)
		case "object_name":
			out.ObjectName = f.Value.Raw
		case "statement":
			out.Statement = f.Value.Raw
		}
	}
	return out, true
}

// StatementCompleted is sqlserver.sql_statement_completed (also read from
// sp_statement_completed, which has the same resource columns [R]).
type StatementCompleted struct {
	Common
	Completion
	LastRowCount uint64 // [R]
	LineNumber   uint64 // [R]
	Offset       uint64 // byte offset of the statement in the batch [R]
	OffsetEnd    uint64 // [R]
	Statement    string // [R]
	// ParameterizedPlanHandle as printed (hex, often empty) [R].
	ParameterizedPlanHandle string
	Spills                  Optional[uint64] // pages; 2016 SP2 / 2017 CU3+ [S]
	ObjectName              string           // sp_statement_completed only [R]
}

// AsStatementCompleted reads a sql_statement_completed or
// sp_statement_completed event.
func AsStatementCompleted(ev *Event) (StatementCompleted, bool) {
	if ev.Name != "sql_statement_completed" && ev.Name != "sp_statement_completed" {
		return StatementCompleted{}, false
	}
	out := StatementCompleted{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		if out.Completion.set(f.Name, &f.Value) {
			continue
		}
		switch f.Name {
		case "last_row_count":
			out.LastRowCount = u64(&f.Value)
		case "line_number":
			out.LineNumber = u64(&f.Value)
		case "offset":
			out.Offset = u64(&f.Value)
		case "offset_end":
			out.OffsetEnd = u64(&f.Value)
		case "statement":
			out.Statement = f.Value.Raw
		case "parameterized_plan_handle":
			out.ParameterizedPlanHandle = f.Value.Raw
		case "spills":
			out.Spills = optUint(&f.Value)
		case "object_name":
			out.ObjectName = f.Value.Raw
		}
	}
	return out, true
}

// PageIO is sqlserver.physical_page_read or physical_page_write. The event
// has no database column; use Actions.DatabaseID [S].
type PageIO struct {
	Common
	Write  bool
	FileID uint64 // uint16 [S]
	PageID uint64 // uint32 [S]
}

// AsPageIO reads a physical_page_read or physical_page_write event.
func AsPageIO(ev *Event) (PageIO, bool) {
	var out PageIO
	switch ev.Name {
	case "physical_page_read":
	case "physical_page_write":
		out.Write = true
	default:
		return PageIO{}, false
	}
	out.Common = commonOf(ev)
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "file_id":
			out.FileID = u64(&f.Value)
		case "page_id":
			out.PageID = u64(&f.Value)
		}
	}
	return out, true
}

// Lock is sqlserver.lock_acquired or lock_released (same columns [D]).
type Lock struct {
	Common
	Released             bool
	ResourceType         MapValue // lock_resource_type [D]
	Mode                 MapValue // lock_mode [R]
	OwnerType            MapValue // lock_owner_type [D]
	TransactionID        int64    // [R]
	DatabaseID           uint64   // [R]
	LockspaceWorkspaceID uint64   // [D]
	LockspaceSubID       uint64   // [D]
	LockspaceNestID      uint64   // [D]
	// Resource0..2 identify the resource; their meaning depends on the type
	// (OBJECT: resource_0 = object id, resource_2 = lock partition) [R][D].
	Resource0, Resource1, Resource2 uint64
	ObjectID                        int64  // 0 unless the resource is an OBJECT [D]
	AssociatedObjectID              uint64 // HoBT id for page/key/RID locks [D]
	// DurationUs: duration, printed in µs [D] ("The time (in microseconds)
	// between when the lock was requested and when it was canceled").
	DurationUs          uint64
	ResourceDescription string // customizable collect_resource_description [D]
	DatabaseName        string // customizable collect_database_name; empty unless collected [R]
}

// AsLock reads a lock_acquired or lock_released event.
func AsLock(ev *Event, maps MapResolver) (Lock, bool) {
	var out Lock
	switch ev.Name {
	case "lock_acquired":
	case "lock_released":
		out.Released = true
	default:
		return Lock{}, false
	}
	out.Common = commonOf(ev)
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "resource_type":
			out.ResourceType = mapOfField(ev, i, maps)
		case "mode":
			out.Mode = mapOfField(ev, i, maps)
		case "owner_type":
			out.OwnerType = mapOfField(ev, i, maps)
		case "transaction_id":
			out.TransactionID = i64(v)
		case "database_id":
			out.DatabaseID = u64(v)
		case "lockspace_workspace_id":
			out.LockspaceWorkspaceID = u64(v)
		case "lockspace_sub_id":
			out.LockspaceSubID = u64(v)
		case "lockspace_nest_id":
			out.LockspaceNestID = u64(v)
		case "resource_0":
			out.Resource0 = u64(v)
		case "resource_1":
			out.Resource1 = u64(v)
		case "resource_2":
			out.Resource2 = u64(v)
		case "object_id":
			out.ObjectID = i64(v)
		case "associated_object_id":
			out.AssociatedObjectID = u64(v)
		case "duration":
			out.DurationUs = u64(v)
		case "resource_description":
			out.ResourceDescription = v.Raw
		case "database_name":
			out.DatabaseName = v.Raw
		}
	}
	return out, true
}

// LockEscalation is sqlserver.lock_escalation.
type LockEscalation struct {
	Common
	EscalationCause                 MapValue // lock vs memory threshold [D]; text spelling [U]
	EscalatedLockCount              uint64   // [D][S]
	HobtLockCount                   uint64   // [S]
	HobtID                          uint64   // [S]
	ResourceType                    MapValue // [S]
	Mode                            MapValue // [S]
	OwnerType                       MapValue // [S]
	ObjectID                        int64    // [S]
	TransactionID                   int64    // [S]
	Resource0, Resource1, Resource2 uint64   // [S]
	DatabaseID                      uint64   // [S]
	DatabaseName                    string   // customizable collect_database_name [S]
	Statement                       string   // customizable collect_statement [S]
}

// AsLockEscalation reads a lock_escalation event.
func AsLockEscalation(ev *Event, maps MapResolver) (LockEscalation, bool) {
	if ev.Name != "lock_escalation" {
		return LockEscalation{}, false
	}
	out := LockEscalation{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "escalation_cause":
			out.EscalationCause = mapOfField(ev, i, maps)
		case "escalated_lock_count":
			out.EscalatedLockCount = u64(v)
		case "hobt_lock_count":
			out.HobtLockCount = u64(v)
		case "hobt_id":
			out.HobtID = u64(v)
		case "resource_type":
			out.ResourceType = mapOfField(ev, i, maps)
		case "mode":
			out.Mode = mapOfField(ev, i, maps)
		case "owner_type":
			out.OwnerType = mapOfField(ev, i, maps)
		case "object_id":
			out.ObjectID = i64(v)
		case "transaction_id":
			out.TransactionID = i64(v)
		case "resource_0":
			out.Resource0 = u64(v)
		case "resource_1":
			out.Resource1 = u64(v)
		case "resource_2":
			out.Resource2 = u64(v)
		case "database_id":
			out.DatabaseID = u64(v)
		case "database_name":
			out.DatabaseName = v.Raw
		case "statement":
			out.Statement = v.Raw
		}
	}
	return out, true
}

// Wait is sqlos.wait_info (Completed false) or sqlos.wait_completed.
type Wait struct {
	Common
	Completed bool
	WaitType  MapValue // wait_types [R]; keys drift between builds
	// Opcode is wait_info's Begin/End (map event_opcode [R]); a wait's
	// duration is on the End event. Zero for wait_completed.
	Opcode MapValue
	// WaitResult is wait_completed's Win32-style result (0 or 258 seen) [R].
	WaitResult uint64
	// DurationUs: duration, printed in **milliseconds** [R] (X1 metadata
	// "Wait duration in milliseconds"; X2) and multiplied by 1000 here, so
	// its resolution is 1 ms.
	DurationUs uint64
	// SignalDurationUs: signal_duration, printed in ms [R], ×1000.
	SignalDurationUs uint64
	// WaitResource is wait_info's ptr (the latch/BUF address for page
	// latches) [R]; WaitResourceText is the value as printed, which for
	// wait_completed is a description (customizable collect_wait_resource)
	// [R].
	WaitResource     uint64
	WaitResourceText string
}

// AsWait reads a wait_info or wait_completed event.
func AsWait(ev *Event, maps MapResolver) (Wait, bool) {
	var out Wait
	switch ev.Name {
	case "wait_info":
	case "wait_completed":
		out.Completed = true
	default:
		return Wait{}, false
	}
	out.Common = commonOf(ev)
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "wait_type":
			out.WaitType = mapOfField(ev, i, maps)
		case "opcode":
			out.Opcode = mapOfField(ev, i, maps)
		case "wait_result":
			out.WaitResult = u64(v)
		case "duration":
			out.DurationUs = msToUs(u64(v))
		case "signal_duration":
			out.SignalDurationUs = msToUs(u64(v))
		case "wait_resource":
			out.WaitResource = u64(v)
			out.WaitResourceText = v.Raw
		}
	}
	return out, true
}

// ThreadProfile is sqlserver.query_thread_profile: one per plan operator
// per thread at the end of the query (lightweight profiling). Only three
// column names are confirmed; the other counters (rows, I/O…) are [U] and
// must be read generically.
type ThreadProfile struct {
	Common
	NodeID   uint64 // = showplan RelOp/@NodeId [S]
	ThreadID uint64 // [S]
	// TotalTimeUs: total_time_us, µs by its name [S]; users report it is
	// often 0 (lightweight profiling v1 collects no CPU/elapsed time [D]).
	TotalTimeUs uint64
}

// AsThreadProfile reads a query_thread_profile event.
func AsThreadProfile(ev *Event) (ThreadProfile, bool) {
	if ev.Name != "query_thread_profile" {
		return ThreadProfile{}, false
	}
	out := ThreadProfile{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "node_id":
			out.NodeID = u64(&f.Value)
		case "thread_id":
			out.ThreadID = u64(&f.Value)
		case "total_time_us":
			out.TotalTimeUs = u64(&f.Value)
		}
	}
	return out, true
}

// Showplan is sqlserver.query_post_execution_showplan.
type Showplan struct {
	Common
	// ShowplanXML is the plan verbatim (the child element of <value> in
	// event XML [S]), for pkg/showplan.
	ShowplanXML         string
	DurationUs          uint64   // duration, µs [S] (shredders divide by 1,000,000 for seconds)
	CPUTimeUs           uint64   // cpu_time, µs [S]
	EstimatedRows       int64    // [S]
	EstimatedCost       int64    // [S]
	DOP                 uint64   // [S]
	SerialIdealMemoryKB uint64   // KB [S]
	RequestedMemoryKB   uint64   // KB [S]
	IdealMemoryKB       uint64   // KB [S]
	GrantedMemoryKB     uint64   // KB [S]
	UsedMemoryKB        uint64   // KB [S]
	ObjectName          string   // [S]
	ObjectType          MapValue // [S]
	ObjectID            int64    // [S]
	NestLevel           uint64   // [S]
	DatabaseName        string   // [S]
}

// AsShowplan reads a query_post_execution_showplan event.
func AsShowplan(ev *Event, maps MapResolver) (Showplan, bool) {
	if ev.Name != "query_post_execution_showplan" {
		return Showplan{}, false
	}
	out := Showplan{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "showplan_xml":
			out.ShowplanXML = v.Raw
		case "duration":
			out.DurationUs = u64(v)
		case "cpu_time":
			out.CPUTimeUs = u64(v)
		case "estimated_rows":
			out.EstimatedRows = i64(v)
		case "estimated_cost":
			out.EstimatedCost = i64(v)
		case "dop":
			out.DOP = u64(v)
		case "serial_ideal_memory_kb":
			out.SerialIdealMemoryKB = u64(v)
		case "requested_memory_kb":
			out.RequestedMemoryKB = u64(v)
		case "ideal_memory_kb":
			out.IdealMemoryKB = u64(v)
		case "granted_memory_kb":
			out.GrantedMemoryKB = u64(v)
		case "used_memory_kb":
			out.UsedMemoryKB = u64(v)
		case "object_name":
			out.ObjectName = v.Raw
		case "object_type":
			out.ObjectType = mapOfField(ev, i, maps)
		case "object_id":
			out.ObjectID = i64(v)
		case "nest_level":
			out.NestLevel = u64(v)
		case "database_name":
			out.DatabaseName = v.Raw
		}
	}
	return out, true
}

// PageSplit is sqlserver.page_split (SQL Server 2012+ columns, [R] X5).
type PageSplit struct {
	Common
	FileID         uint64   // page that split [R]
	PageID         uint64   // [R]
	DatabaseID     uint64   // [R]
	RowsetID       uint64   // HoBT id [R]
	SplitOperation MapValue // SPLIT_FOR_INSERT, SPLIT_FOR_UPDATE, … [R]; map name [U]
	NewPageFileID  uint64   // [R]
	NewPagePageID  uint64   // [R]
}

// AsPageSplit reads a page_split event.
func AsPageSplit(ev *Event, maps MapResolver) (PageSplit, bool) {
	if ev.Name != "page_split" {
		return PageSplit{}, false
	}
	out := PageSplit{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "file_id":
			out.FileID = u64(v)
		case "page_id":
			out.PageID = u64(v)
		case "database_id":
			out.DatabaseID = u64(v)
		case "rowset_id":
			out.RowsetID = u64(v)
		case "splitOperation":
			out.SplitOperation = mapOfField(ev, i, maps)
		case "new_page_file_id":
			out.NewPageFileID = u64(v)
		case "new_page_page_id":
			out.NewPagePageID = u64(v)
		}
	}
	return out, true
}

// MemoryGrantUsage is sqlserver.query_memory_grant_usage (KB3107173, SQL
// 2014 SP2 / 2016). No duration column is known for it.
type MemoryGrantUsage struct {
	Common
	GrantedMemoryKB uint64 // KB [S]
	UsedMemoryKB    uint64 // KB [S]
	IdealMemoryKB   uint64 // KB [S]
	GrantedPercent  int64  // % of requested [S]
	UsagePercent    int64  // % of granted [S]
	DOP             uint64 // [S]
}

// AsMemoryGrantUsage reads a query_memory_grant_usage event.
func AsMemoryGrantUsage(ev *Event) (MemoryGrantUsage, bool) {
	if ev.Name != "query_memory_grant_usage" {
		return MemoryGrantUsage{}, false
	}
	out := MemoryGrantUsage{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "granted_memory_kb":
			out.GrantedMemoryKB = u64(v)
		case "used_memory_kb":
			out.UsedMemoryKB = u64(v)
		case "ideal_memory_kb":
			out.IdealMemoryKB = u64(v)
		case "granted_percent":
			out.GrantedPercent = i64(v)
		case "usage_percent":
			out.UsagePercent = i64(v)
		case "dop":
			out.DOP = u64(v)
		}
	}
	return out, true
}

// Spill is one of the tempdb-spill events: sqlserver.hash_warning,
// sort_warning, hash_spill_details or exchange_spill. Which columns exist
// depends on the event and the build (KB3107172 added memory and I/O
// columns to hash_warning/sort_warning in 2014 SP2 / 2016); absent ones stay
// zero. None of these events has a known duration column.
type Spill struct {
	Common
	// WarningType is hash_warning_type (Recursion/Bailout [S]),
	// sort_warning_type (single/multiple pass [S]) or exchange_spill's
	// opcode (Begin/End [S]); text spellings [U].
	WarningType MapValue
	// QueryOperationNodeID is the plan node (showplan RelOp/@NodeId) [S].
	QueryOperationNodeID uint64
	RecursionLevel       uint64 // hash_warning [S]
	GrantedMemoryKB      uint64 // KB [S]
	UsedMemoryKB         uint64 // KB [S]; hash_warning [U]
	// Worktable/workfile I/O in pages [S]: hash_warning has both writes,
	// sort_warning worktable reads. Other counters are [U]: read them
	// generically.
	WorktablePhysicalReads  uint64
	WorktablePhysicalWrites uint64
	WorkfilePhysicalWrites  uint64
}

// AsSpill reads a hash_warning, sort_warning, hash_spill_details or
// exchange_spill event.
func AsSpill(ev *Event, maps MapResolver) (Spill, bool) {
	switch ev.Name {
	case "hash_warning", "sort_warning", "hash_spill_details", "exchange_spill":
	default:
		return Spill{}, false
	}
	out := Spill{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "hash_warning_type", "sort_warning_type", "opcode":
			out.WarningType = mapOfField(ev, i, maps)
		case "query_operation_node_id":
			out.QueryOperationNodeID = u64(v)
		case "recursion_level":
			out.RecursionLevel = u64(v)
		case "granted_memory_kb":
			out.GrantedMemoryKB = u64(v)
		case "used_memory_kb":
			out.UsedMemoryKB = u64(v)
		case "worktable_physical_reads":
			out.WorktablePhysicalReads = u64(v)
		case "worktable_physical_writes":
			out.WorktablePhysicalWrites = u64(v)
		case "workfile_physical_writes":
			out.WorkfilePhysicalWrites = u64(v)
		}
	}
	return out, true
}

// LogFlush is sqlserver.log_flush_complete.
type LogFlush struct {
	Common
	DatabaseID uint64 // [S]
	LogBlockID uint64 // joins log_flush_start.log_block_id [S]
	// DurationUs: duration, read as milliseconds and multiplied by 1000.
	// The unit is [U]: the one script that uses the column does not say.
	DurationUs uint64
	WriteSize  uint64 // bytes [S]
}

// AsLogFlush reads a log_flush_complete event.
func AsLogFlush(ev *Event) (LogFlush, bool) {
	if ev.Name != "log_flush_complete" {
		return LogFlush{}, false
	}
	out := LogFlush{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "database_id":
			out.DatabaseID = u64(v)
		case "log_block_id":
			out.LogBlockID = u64(v)
		case "duration":
			out.DurationUs = msToUs(u64(v))
		case "write_size":
			out.WriteSize = u64(v)
		}
	}
	return out, true
}

// FileIO is sqlserver.file_read, file_read_completed or
// file_write_completed.
type FileIO struct {
	Common
	Write       bool     // file_write_completed
	Completed   bool     // *_completed (has a duration)
	DatabaseID  uint64   // [S]
	FileID      uint64   // [S]
	PageID      uint64   // first page of the I/O [S]
	FileGroupID uint64   // [S]
	Offset      uint64   // bytes [S]
	Size        uint64   // bytes [S]
	Mode        MapValue // contiguous vs scatter/gather [S]
	// DurationUs: duration of *_completed, printed in ms [S] (a script's
	// "duration > 15000" filter is named "15SecondIOError"), ×1000.
	DurationUs uint64
	Path       string // customizable collect_path [S]
}

// AsFileIO reads a file_read, file_read_completed or file_write_completed
// event.
func AsFileIO(ev *Event, maps MapResolver) (FileIO, bool) {
	var out FileIO
	switch ev.Name {
	case "file_read":
	case "file_read_completed":
		out.Completed = true
	case "file_write_completed":
		out.Completed, out.Write = true, true
	default:
		return FileIO{}, false
	}
	out.Common = commonOf(ev)
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "database_id":
			out.DatabaseID = u64(v)
		case "file_id":
			out.FileID = u64(v)
		case "page_id":
			out.PageID = u64(v)
		case "file_group_id":
			out.FileGroupID = u64(v)
		case "offset":
			out.Offset = u64(v)
		case "size":
			out.Size = u64(v)
		case "mode":
			out.Mode = mapOfField(ev, i, maps)
		case "duration":
			out.DurationUs = msToUs(u64(v))
		case "path":
			out.Path = v.Raw
		}
	}
	return out, true
}

// TransactionLog is sqlserver.transaction_log: one event per log record.
type TransactionLog struct {
	Common
	Operation     MapValue // map log_op (LOP_*) [S]
	Context       MapValue // log context (LCX_*) [S]; map name [U]
	AllocUnitID   uint64   // joins sys.allocation_units [S]
	DatabaseID    uint64   // [S]
	TransactionID int64    // [S]
	// LogRecordSize in bytes: [U], the column is not confirmed.
	LogRecordSize Optional[uint64]
}

// AsTransactionLog reads a transaction_log event.
func AsTransactionLog(ev *Event, maps MapResolver) (TransactionLog, bool) {
	if ev.Name != "transaction_log" {
		return TransactionLog{}, false
	}
	out := TransactionLog{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "operation":
			out.Operation = mapOfField(ev, i, maps)
		case "context":
			out.Context = mapOfField(ev, i, maps)
		case "alloc_unit_id":
			out.AllocUnitID = u64(v)
		case "database_id":
			out.DatabaseID = u64(v)
		case "transaction_id":
			out.TransactionID = i64(v)
		case "log_record_size":
			out.LogRecordSize = optUint(v)
		}
	}
	return out, true
}

// SQLTransaction is sqlserver.sql_transaction.
type SQLTransaction struct {
	Common
	TransactionID    int64    // [S]
	TransactionState MapValue // Begin/Commit/Rollback [S]
	TransactionType  MapValue // [S]
	// DurationUs: duration, µs [S] (one tool labels it microseconds).
	DurationUs uint64
}

// AsSQLTransaction reads a sql_transaction event.
func AsSQLTransaction(ev *Event, maps MapResolver) (SQLTransaction, bool) {
	if ev.Name != "sql_transaction" {
		return SQLTransaction{}, false
	}
	out := SQLTransaction{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "transaction_id":
			out.TransactionID = i64(v)
		case "transaction_state":
			out.TransactionState = mapOfField(ev, i, maps)
		case "transaction_type":
			out.TransactionType = mapOfField(ev, i, maps)
		case "duration":
			out.DurationUs = u64(v)
		}
	}
	return out, true
}

// ErrorReported is sqlserver.error_reported (all columns [R]).
type ErrorReported struct {
	Common
	ErrorNumber   int64
	Severity      int64
	State         int64
	UserDefined   bool
	Category      MapValue // error_category [R]
	Destination   MapValue // error_destination, a flag map: Key is a bit set, Text a comma list [R]
	IsIntercepted bool
	Message       string
}

// AsErrorReported reads an error_reported event.
func AsErrorReported(ev *Event, maps MapResolver) (ErrorReported, bool) {
	if ev.Name != "error_reported" {
		return ErrorReported{}, false
	}
	out := ErrorReported{Common: commonOf(ev)}
	for i := range ev.Fields {
		f := &ev.Fields[i]
		v := &f.Value
		switch f.Name {
		case "error_number":
			out.ErrorNumber = i64(v)
		case "severity":
			out.Severity = i64(v)
		case "state":
			out.State = i64(v)
		case "user_defined":
			out.UserDefined = boolOf(v)
		case "category":
			out.Category = mapOfField(ev, i, maps)
		case "destination":
			out.Destination = mapOfField(ev, i, maps)
		case "is_intercepted":
			out.IsIntercepted = boolOf(v)
		case "message":
			out.Message = v.Raw
		}
	}
	return out, true
}

// Typed returns the typed view of ev (one of the structs above, by value),
// or nil for an event this file does not model; the generic Event always
// has everything.
func Typed(ev *Event, maps MapResolver) any {
	switch ev.Name {
	case "sql_batch_starting":
		t, _ := AsBatchStarting(ev)
		return t
	case "sql_batch_completed":
		t, _ := AsBatchCompleted(ev, maps)
		return t
	case "rpc_starting", "rpc_completed":
		t, _ := AsRPC(ev, maps)
		return t
	case "sql_statement_completed", "sp_statement_completed":
		t, _ := AsStatementCompleted(ev)
		return t
	case "physical_page_read", "physical_page_write":
		t, _ := AsPageIO(ev)
		return t
	case "lock_acquired", "lock_released":
		t, _ := AsLock(ev, maps)
		return t
	case "lock_escalation":
		t, _ := AsLockEscalation(ev, maps)
		return t
	case "wait_info", "wait_completed":
		t, _ := AsWait(ev, maps)
		return t
	case "query_thread_profile":
		t, _ := AsThreadProfile(ev)
		return t
	case "query_post_execution_showplan":
		t, _ := AsShowplan(ev, maps)
		return t
	case "page_split":
		t, _ := AsPageSplit(ev, maps)
		return t
	case "query_memory_grant_usage":
		t, _ := AsMemoryGrantUsage(ev)
		return t
	case "hash_warning", "sort_warning", "hash_spill_details", "exchange_spill":
		t, _ := AsSpill(ev, maps)
		return t
	case "log_flush_complete":
		t, _ := AsLogFlush(ev)
		return t
	case "file_read", "file_read_completed", "file_write_completed":
		t, _ := AsFileIO(ev, maps)
		return t
	case "transaction_log":
		t, _ := AsTransactionLog(ev, maps)
		return t
	case "sql_transaction":
		t, _ := AsSQLTransaction(ev, maps)
		return t
	case "error_reported":
		t, _ := AsErrorReported(ev, maps)
		return t
	}
	return nil
}
