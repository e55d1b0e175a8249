package xevents

import "strings"

// The XE objects the stand-in knows: every event, action and predicate
// source QueryReplay's tracer uses, plus the common monitoring ones. CREATE
// EVENT SESSION naming anything else fails with Msg 25623, as SQL Server
// fails for a name that does not exist. Event field names and units follow
// docs/design/event-fields.md; columns that document marks [U] (unverified) are only
// emitted when Options.GuessedColumns is set.

type EventDef struct {
	Pkg    string
	Fields []string // data columns usable in predicates
	custom []string // customizable attributes (SET …)
	Fires  bool     // false: accepted in DDL but the stand-in never emits it
}

var Events = map[string]EventDef{
	"sql_batch_starting":      {"sqlserver", []string{"batch_text"}, []string{"collect_batch_text"}, true},
	"sql_batch_completed":     {"sqlserver", []string{"cpu_time", "duration", "physical_reads", "logical_reads", "writes", "row_count", "result", "batch_text"}, []string{"collect_batch_text"}, true},
	"sql_statement_starting":  {"sqlserver", []string{"line_number", "offset", "offset_end", "statement"}, []string{"collect_statement"}, true},
	"sql_statement_completed": {"sqlserver", []string{"duration", "cpu_time", "physical_reads", "logical_reads", "writes", "row_count", "last_row_count", "line_number", "offset", "offset_end", "statement", "parameterized_plan_handle"}, []string{"collect_statement", "collect_parameterized_plan_handle"}, true},
	// sp_statement_*: the statements of a module (procedure, trigger) with
	// the module's object and nest level
	// (https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/quick-start-extended-events-in-sql-server).
	"sp_statement_starting":            {"sqlserver", []string{"source_database_id", "object_id", "object_type", "nest_level", "line_number", "offset", "offset_end", "object_name", "statement"}, []string{"collect_object_name", "collect_statement"}, true},
	"sp_statement_completed":           {"sqlserver", []string{"source_database_id", "object_id", "object_type", "duration", "cpu_time", "physical_reads", "logical_reads", "writes", "row_count", "last_row_count", "nest_level", "line_number", "offset", "offset_end", "object_name", "statement"}, []string{"collect_object_name", "collect_statement"}, true},
	"rpc_starting":                     {"sqlserver", []string{"object_name", "statement", "data_stream"}, []string{"collect_statement", "collect_data_stream"}, true},
	"rpc_completed":                    {"sqlserver", []string{"cpu_time", "duration", "physical_reads", "logical_reads", "writes", "result", "row_count", "connection_reset_option", "object_name", "statement", "data_stream", "output_parameters"}, []string{"collect_statement", "collect_data_stream", "collect_output_parameters"}, true},
	"query_post_execution_showplan":    {"sqlserver", []string{"source_database_id", "object_type", "object_id", "nest_level", "cpu_time", "duration", "estimated_rows", "estimated_cost", "serial_ideal_memory_kb", "requested_memory_kb", "used_memory_kb", "ideal_memory_kb", "granted_memory_kb", "dop", "object_name", "database_name", "showplan_xml"}, []string{"collect_database_name"}, true},
	"query_thread_profile":             {"sqlserver", []string{"node_id", "thread_id", "total_time_us"}, nil, true},
	"physical_page_read":               {"sqlserver", []string{"file_id", "page_id"}, nil, true},
	"physical_page_write":              {"sqlserver", []string{"file_id", "page_id"}, nil, true},
	"file_read":                        {"sqlserver", []string{"database_id", "file_id", "page_id", "file_group_id", "offset", "size", "mode"}, []string{"collect_path"}, true},
	"file_read_completed":              {"sqlserver", []string{"database_id", "file_id", "page_id", "file_group_id", "offset", "size", "mode", "duration"}, []string{"collect_path", "collect_io_data"}, true},
	"file_write_completed":             {"sqlserver", []string{"database_id", "file_id", "page_id", "file_group_id", "offset", "size", "mode", "duration"}, []string{"collect_path"}, true},
	"log_flush_complete":               {"sqlserver", []string{"database_id", "log_block_id", "duration", "write_size"}, nil, true},
	"lock_acquired":                    {"sqlserver", lockFields, []string{"collect_resource_description", "collect_database_name"}, true},
	"lock_released":                    {"sqlserver", lockFields, []string{"collect_resource_description", "collect_database_name"}, true},
	"lock_escalation":                  {"sqlserver", []string{"escalation_cause", "escalated_lock_count", "hobt_lock_count", "hobt_id", "resource_type", "mode", "owner_type", "object_id", "transaction_id", "database_id"}, []string{"collect_database_name", "collect_statement"}, true},
	"page_split":                       {"sqlserver", []string{"file_id", "page_id", "database_id", "rowset_id", "splitOperation", "new_page_file_id", "new_page_page_id"}, nil, true},
	"transaction_log":                  {"sqlserver", []string{"operation", "context", "alloc_unit_id", "database_id", "transaction_id"}, nil, true},
	"sql_transaction":                  {"sqlserver", []string{"transaction_id", "transaction_state", "transaction_type", "duration"}, nil, true},
	"sort_warning":                     {"sqlserver", []string{"sort_warning_type", "query_operation_node_id", "granted_memory_kb", "used_memory_kb", "worktable_physical_reads", "worktable_physical_writes"}, nil, true},
	"hash_warning":                     {"sqlserver", []string{"hash_warning_type", "query_operation_node_id", "recursion_level", "granted_memory_kb", "worktable_physical_writes", "workfile_physical_writes"}, nil, true},
	"hash_spill_details":               {"sqlserver", nil, nil, false},
	"exchange_spill":                   {"sqlserver", []string{"opcode", "query_operation_node_id", "worktable_physical_writes"}, nil, true},
	"query_memory_grant_usage":         {"sqlserver", []string{"granted_memory_kb", "used_memory_kb", "ideal_memory_kb", "granted_percent", "usage_percent", "dop"}, nil, true},
	"memory_grant_updated_by_feedback": {"sqlserver", nil, nil, false},
	"error_reported":                   {"sqlserver", []string{"error_number", "severity", "state", "user_defined", "category", "destination", "is_intercepted", "message"}, nil, true},
	"latch_suspend_begin":              {"sqlserver", latchFields, nil, false},
	"latch_suspend_end":                {"sqlserver", latchFields, nil, false},
	"latch_acquired":                   {"sqlserver", latchFields, nil, false},
	"latch_released":                   {"sqlserver", latchFields, nil, false},
	"latch_demoted":                    {"sqlserver", latchFields, nil, false},
	"latch_promoted":                   {"sqlserver", latchFields, nil, false},
	"login":                            {"sqlserver", []string{"is_cached", "is_recovered", "is_dac", "database_id", "packet_size", "options", "options_text", "database_name"}, []string{"collect_options_text", "collect_database_name"}, true},
	"logout":                           {"sqlserver", []string{"duration", "cpu_time", "reads", "writes"}, nil, true},
	"attention":                        {"sqlserver", []string{"duration", "request_id"}, nil, true},
	"blocked_process_report":           {"sqlserver", []string{"duration", "database_id", "object_id", "index_id", "lock_mode", "transaction_id", "resource_owner_type", "blocked_process", "database_name"}, nil, false},
	"wait_info":                        {"sqlos", []string{"wait_type", "opcode", "duration", "signal_duration", "wait_resource"}, nil, true},
	"wait_completed":                   {"sqlos", []string{"wait_type", "wait_result", "duration", "signal_duration", "wait_resource"}, []string{"collect_wait_resource"}, false},
	"wait_info_external":               {"sqlos", []string{"wait_type", "opcode", "duration"}, nil, false},
	// Batch-mode and columnstore events: accepted (IV adds them by default),
	// never emitted: the demo database has no columnstore indexes.
	"query_execution_wait_syncpoint":                      {"sqlserver", nil, nil, false},
	"query_execution_batch_filter":                        {"sqlserver", nil, nil, false},
	"query_execution_batch_global_string_dictionary":      {"sqlserver", nil, nil, false},
	"query_execution_batch_hash_aggregation_finished":     {"sqlserver", nil, nil, false},
	"batch_hash_join_separate_hash_column":                {"sqlserver", nil, nil, false},
	"query_execution_push_down_aggregate":                 {"sqlserver", nil, nil, false},
	"query_execution_dynamic_push_down_statistics":        {"sqlserver", nil, nil, false},
	"query_execution_column_store_segment_scan_started":   {"sqlserver", nil, nil, false},
	"query_execution_column_store_segment_scan_finished":  {"sqlserver", nil, nil, false},
	"query_execution_column_store_rowgroup_scan_finished": {"sqlserver", nil, nil, false},
	"column_store_expression_filter_bitmap_set":           {"sqlserver", nil, nil, false},
	"column_store_expression_filter_apply":                {"sqlserver", nil, nil, false},
	"column_store_segment_eliminate":                      {"sqlserver", nil, nil, false},
	"column_store_rowgroup_skip_delete_buffer":            {"sqlserver", nil, nil, false},
	"column_store_object_pool_hit":                        {"sqlserver", nil, nil, false},
	"column_store_object_pool_miss":                       {"sqlserver", nil, nil, false},
	"column_store_rowgroup_read_issued":                   {"sqlserver", nil, nil, false},
	"column_store_rowgroup_readahead_issued":              {"sqlserver", nil, nil, false},
	"column_store_fast_string_equals":                     {"sqlserver", nil, nil, false},
}

var lockFields = []string{"resource_type", "mode", "owner_type", "transaction_id", "database_id", "lockspace_workspace_id", "lockspace_sub_id", "lockspace_nest_id", "resource_0", "resource_1", "resource_2", "object_id", "associated_object_id", "duration", "resource_description", "database_name"}
var latchFields = []string{"address", "mode", "class", "database_id", "file_id", "page_id", "page_type_id", "has_waiters", "duration"}

// Actions are the global fields (actions) and their packages; the same
// names serve as predicate sources.
var Actions = map[string]string{
	"session_id": "sqlserver", "request_id": "sqlserver", "database_id": "sqlserver", "database_name": "sqlserver",
	"sql_text": "sqlserver", "plan_handle": "sqlserver", "transaction_id": "sqlserver", "query_hash": "sqlserver",
	"query_plan_hash": "sqlserver", "query_hash_signed": "sqlserver", "query_plan_hash_signed": "sqlserver",
	"client_app_name": "sqlserver", "client_hostname": "sqlserver", "client_pid": "sqlserver", "username": "sqlserver",
	"server_principal_name": "sqlserver", "server_instance_name": "sqlserver", "nt_username": "sqlserver",
	"is_system": "sqlserver", "session_nt_username": "sqlserver", "context_info": "sqlserver",
	"event_sequence": "package0", "collect_system_time": "package0", "callstack": "package0", "callstack_rva": "package0",
	"tsql_stack":   "sqlserver",
	"task_address": "sqlos", "worker_address": "sqlos", "system_thread_id": "sqlos", "scheduler_id": "sqlos",
	"cpu_id": "sqlos", "task_time": "sqlos",
}

// lookupEvent resolves an event name; pkg may be empty (bare name).
func lookupEvent(pkg, name string) (EventDef, string, bool) {
	d, ok := Events[strings.ToLower(name)]
	if !ok {
		return d, "", false
	}
	if pkg != "" && !strings.EqualFold(pkg, d.Pkg) {
		return d, "", false
	}
	return d, strings.ToLower(name), true
}

func HasString(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Map values (sys.dm_xe_map_values). Keys are those of SQL Server 2017
// 14.0.3192.2 where a real source gave them (docs/design/event-fields.md §2); texts are
// what clients must resolve by, because keys move between builds.
type MapEntry struct {
	Key  int
	Text string
}

type Map struct {
	Name, Pkg string
	Entries   []MapEntry
}

var Maps = []Map{
	{"lock_mode", "sqlserver", seq("NL", "SCH_S", "SCH_M", "S", "U", "X", "IS", "IU", "IX", "SIU", "SIX", "UIX", "BU", "RS_S", "RS_U", "RI_NL", "RI_S", "RI_U", "RI_X", "RX_S", "RX_U", "LAST_MODE")},
	{"lock_resource_type", "sqlserver", []MapEntry{{0, "UNKNOWN_LOCK_RESOURCE"}, {1, "NULL_RESOURCE"}, {2, "DATABASE"}, {3, "FILE"}, {5, "OBJECT"}, {6, "PAGE"}, {7, "KEY"}, {8, "EXTENT"}, {9, "RID"}, {10, "APPLICATION"}, {11, "METADATA"}, {12, "HOBT"}, {13, "ALLOCATION_UNIT"}, {14, "OIB"}, {15, "ROWGROUP"}, {16, "XACT"}, {17, "LAST_RESOURCE"}}},
	{"lock_owner_type", "sqlserver", []MapEntry{{1, "Transaction"}, {2, "Cursor"}, {3, "Session"}, {4, "SharedXactWorkspace"}, {5, "ExclusiveXactWorkspace"}, {6, "LockConflictNotificationObject"}, {7, "LockTableIterator"}, {8, "Node"}}},
	{"event_opcode", "sqlos", []MapEntry{{0, "Begin"}, {1, "End"}}},
	{"lock_escalation_cause", "sqlserver", seq("LOCK_THRESHOLD", "MEMORY_THRESHOLD")},
	{"latch_mode", "sqlserver", seq("NL", "KP", "SH", "UP", "EX", "DT")},
	{"page_split_operation", "sqlserver", seq("SPLIT_FOR_INSERT", "SPLIT_FOR_GHOST", "SPLIT_FOR_DELETE", "SPLIT_FOR_UPDATE", "SPLIT_FOR_INTERNAL_NODE", "SPLIT_FOR_ROOT_NODE", "SPLIT_EMPTY_BTREE", "SPLIT_FOR_REVERT", "SPLIT_FOR_NEW_PAGE")},
	{"log_op", "sqlserver", []MapEntry{{1, "LOP_FORMAT_PAGE"}, {2, "LOP_INSERT_ROWS"}, {3, "LOP_DELETE_ROWS"}, {4, "LOP_MODIFY_ROW"}, {5, "LOP_MODIFY_HEADER"}, {6, "LOP_MODIFY_COLUMNS"}, {7, "LOP_SET_BITS"}, {10, "LOP_SET_FREE_SPACE"}, {11, "LOP_DELETE_SPLIT"}, {13, "LOP_EXPUNGE_ROWS"}, {18, "LOP_COUNT_DELTA"}, {19, "LOP_ROOT_CHANGE"}, {128, "LOP_BEGIN_XACT"}, {129, "LOP_COMMIT_XACT"}, {130, "LOP_ABORT_XACT"}, {132, "LOP_MARK_SAVEPOINT"}, {137, "LOP_HOBT_DDL"}, {140, "LOP_HOBT_DELTA"}, {141, "LOP_LOCK_XACT"}, {150, "LOP_BEGIN_CKPT"}, {152, "LOP_XACT_CKPT"}, {153, "LOP_END_CKPT"}}},
	{"log_context", "sqlserver", []MapEntry{{0, "LCX_NULL"}, {1, "LCX_HEAP"}, {2, "LCX_CLUSTERED"}, {3, "LCX_INDEX_LEAF"}, {4, "LCX_INDEX_INTERIOR"}, {8, "LCX_GAM"}, {9, "LCX_SGAM"}, {10, "LCX_IAM"}, {11, "LCX_PFS"}, {19, "LCX_MARK_AS_GHOST"}, {20, "LCX_BOOT_PAGE"}}},
	{"hash_warning_type", "sqlserver", []MapEntry{{0, "Recursion"}, {1, "Bailout"}}},
	{"sort_warning_type", "sqlserver", []MapEntry{{1, "Single pass"}, {2, "Multiple pass"}}},
	{"transaction_state", "sqlserver", []MapEntry{{0, "Begin"}, {1, "Commit"}, {2, "Rollback"}, {3, "Savepoint"}}},
	{"transaction_type", "sqlserver", []MapEntry{{0, "User"}, {1, "System"}}},
	{"statement_result", "sqlserver", []MapEntry{{0, "OK"}, {1, "Error"}, {2, "Abort"}}},
	{"object_type", "sqlserver", []MapEntry{{8272, "PROC"}, {20801, "ADHOC"}, {20816, "PREPARED"}}},
	{"file_io_mode", "sqlserver", []MapEntry{{0, "Contiguous"}, {1, "Scatter/Gather"}}},
	{"error_category", "sqlserver", []MapEntry{{2, "SERVER"}}}, // 2 = SERVER seen in real XML (X6); other keys unverified
	{"wait_types", "sqlos", nil}, // filled from wait_types_sql2017.tsv in init
}

func seq(texts ...string) []MapEntry {
	out := make([]MapEntry, len(texts))
	for i, t := range texts {
		out[i] = MapEntry{i, t}
	}
	return out
}

var mapIndex map[string]map[string]int

// MapKey returns the key of text in the named map.
func MapKey(mapName, text string) int {
	return mapIndex[mapName][text]
}

func indexMaps() {
	mapIndex = map[string]map[string]int{}
	for _, m := range Maps {
		idx := map[string]int{}
		for _, e := range m.Entries {
			if _, dup := idx[e.Text]; !dup {
				idx[e.Text] = e.Key
			}
		}
		mapIndex[m.Name] = idx
	}
}
