package xe_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

func field(name, value string) string {
	return `<data name="` + name + `"><value>` + value + `</value></data>`
}

func mapField(name, key, text string) string {
	return `<data name="` + name + `"><value>` + key + `</value><text><![CDATA[` + text + `]]></text></data>`
}

func str(name, value string) string { return field(name, "<![CDATA["+value+"]]>") }

func event(name, pkg, body string) string {
	return `<event name="` + name + `" package="` + pkg + `" timestamp="2026-11-29T10:00:00.123Z">` + body +
		`<action name="event_sequence" package="package0"><value>42</value></action>` +
		`<action name="plan_handle" package="sqlserver"><value>0600050054BDCA1E</value></action>` +
		`<action name="task_address" package="sqlos"><value>0x000001E4A2B3C468</value></action>` +
		`<action name="query_hash_signed" package="sqlserver"><value>-7</value></action>` +
		`</event>`
}

func TestShowplanVerbatim(t *testing.T) {
	plan, err := os.ReadFile("testdata/realdata/table_variable_plan.sqlplan")
	if err != nil {
		t.Fatal(err)
	}
	planText := strings.TrimSpace(string(plan))
	in := event("query_post_execution_showplan", "sqlserver",
		field("duration", "1500")+field("cpu_time", "1200")+field("estimated_rows", "1")+field("dop", "1")+
			field("granted_memory_kb", "1024")+field("used_memory_kb", "16")+str("object_name", "")+
			mapField("object_type", "20801", "ADHOC")+field("nest_level", "0")+
			`<data name="showplan_xml"><value>`+"\n"+planText+"\n"+`</value></data>`+str("database_name", "Demo"))
	e := mustDecodeOne(t, in)
	s, ok := xe.AsShowplan(&e, nil)
	if !ok {
		t.Fatal("AsShowplan refused")
	}
	if s.ShowplanXML != planText {
		t.Errorf("plan not verbatim: %d bytes vs %d", len(s.ShowplanXML), len(planText))
	}
	if v, _ := e.Data("showplan_xml"); v.Kind != xe.KindXML {
		t.Errorf("kind %v", v.Kind)
	}
	if s.DurationUs != 1500 || s.CPUTimeUs != 1200 || s.GrantedMemoryKB != 1024 || s.UsedMemoryKB != 16 || s.DOP != 1 ||
		s.ObjectType.Text != "ADHOC" || s.DatabaseName != "Demo" || s.EstimatedRows != 1 {
		t.Errorf("%+v", s)
	}
	a := s.Actions
	if a.EventSequence.Value != 42 || a.PlanHandle.Value != "0600050054BDCA1E" || a.TaskAddress.Value != 0x000001E4A2B3C468 ||
		!a.QueryHashSigned.Valid || a.QueryHashSigned.Value != -7 || a.SessionID.Valid {
		t.Errorf("actions %+v", a)
	}
}

func TestTypedEvents(t *testing.T) {
	maps := &xe.MapTable{}
	maps.Add("lock_resource_type", 5, "OBJECT")
	cases := []struct {
		xml  string
		want any
	}{
		{event("sql_batch_starting", "sqlserver", str("batch_text", "select 1")), xe.BatchStarting{BatchText: "select 1"}},
		{event("rpc_completed", "sqlserver", field("duration", "10")+field("cpu_time", "9")+field("row_count", "3")+
			mapField("result", "0", "OK")+str("object_name", "sp_x")+str("statement", "exec sp_x")),
			xe.RPC{Completed: true, Completion: xe.Completion{DurationUs: 10, CPUTimeUs: 9, RowCount: 3},
				Result: xe.MapValue{Key: 0, Text: "OK"}, ObjectName: "sp_x", Statement: "exec sp_x"}},
		{event("rpc_starting", "sqlserver", str("object_name", "sp_x")), xe.RPC{ObjectName: "sp_x"}},
		{event("physical_page_write", "sqlserver", field("file_id", "1")+field("page_id", "4294967295")),
			xe.PageIO{Write: true, FileID: 1, PageID: 4294967295}},
		{event("lock_escalation", "sqlserver", mapField("escalation_cause", "0", "LOCK_THRESHOLD")+field("escalated_lock_count", "5000")+
			field("hobt_lock_count", "4999")+field("hobt_id", "72057594043236352")+field("resource_type", "5")+
			field("object_id", "245575913")+str("statement", "update t set x=1")),
			xe.LockEscalation{EscalationCause: xe.MapValue{Text: "LOCK_THRESHOLD"}, EscalatedLockCount: 5000, HobtLockCount: 4999,
				HobtID: 72057594043236352, ResourceType: xe.MapValue{Key: 5, Text: "OBJECT", Map: "lock_resource_type", FromResolver: true},
				ObjectID: 245575913, Statement: "update t set x=1"}},
		{event("wait_completed", "sqlos", mapField("wait_type", "183", "WRITELOG")+field("wait_result", "258")+
			field("duration", "12")+field("signal_duration", "1")+str("wait_resource", "")),
			xe.Wait{Completed: true, WaitType: xe.MapValue{Key: 183, Text: "WRITELOG", Map: "wait_types"}, WaitResult: 258,
				DurationUs: 12000, SignalDurationUs: 1000}},
		{event("query_thread_profile", "sqlserver", field("node_id", "3")+field("thread_id", "2")+field("total_time_us", "777")+
			field("actual_rows", "99")), xe.ThreadProfile{NodeID: 3, ThreadID: 2, TotalTimeUs: 777}},
		{event("page_split", "sqlserver", field("file_id", "4")+field("page_id", "24537")+field("database_id", "10")+
			field("rowset_id", "72057594049789952")+mapField("splitOperation", "0", "SPLIT_FOR_INSERT")+
			field("new_page_file_id", "4")+field("new_page_page_id", "64")),
			xe.PageSplit{FileID: 4, PageID: 24537, DatabaseID: 10, RowsetID: 72057594049789952,
				SplitOperation: xe.MapValue{Text: "SPLIT_FOR_INSERT"}, NewPageFileID: 4, NewPagePageID: 64}},
		{event("query_memory_grant_usage", "sqlserver", field("granted_memory_kb", "2048")+field("used_memory_kb", "100")+
			field("ideal_memory_kb", "4096")+field("granted_percent", "50")+field("usage_percent", "5")+field("dop", "4")),
			xe.MemoryGrantUsage{GrantedMemoryKB: 2048, UsedMemoryKB: 100, IdealMemoryKB: 4096, GrantedPercent: 50, UsagePercent: 5, DOP: 4}},
		{event("sort_warning", "sqlserver", mapField("sort_warning_type", "2", "Multiple pass")+field("query_operation_node_id", "7")+
			field("granted_memory_kb", "512")+field("used_memory_kb", "510")+field("worktable_physical_reads", "33")),
			xe.Spill{WarningType: xe.MapValue{Key: 2, Text: "Multiple pass"}, QueryOperationNodeID: 7, GrantedMemoryKB: 512,
				UsedMemoryKB: 510, WorktablePhysicalReads: 33}},
		{event("hash_warning", "sqlserver", mapField("hash_warning_type", "1", "Bailout")+field("recursion_level", "5")+
			field("worktable_physical_writes", "8")+field("workfile_physical_writes", "9")),
			xe.Spill{WarningType: xe.MapValue{Key: 1, Text: "Bailout"}, RecursionLevel: 5, WorktablePhysicalWrites: 8, WorkfilePhysicalWrites: 9}},
		{event("exchange_spill", "sqlserver", mapField("opcode", "1", "End")+field("query_operation_node_id", "2")),
			xe.Spill{WarningType: xe.MapValue{Key: 1, Text: "End"}, QueryOperationNodeID: 2}},
		{event("hash_spill_details", "sqlserver", field("granted_memory_kb", "64")), xe.Spill{GrantedMemoryKB: 64}},
		{event("log_flush_complete", "sqlserver", field("database_id", "5")+field("log_block_id", "123456789")+
			field("duration", "2")+field("write_size", "61440")),
			xe.LogFlush{DatabaseID: 5, LogBlockID: 123456789, DurationUs: 2000, WriteSize: 61440}},
		{event("file_read_completed", "sqlserver", field("database_id", "5")+field("file_id", "1")+field("page_id", "1200")+
			field("file_group_id", "1")+field("offset", "9830400")+field("size", "65536")+mapField("mode", "0", "Contiguous")+
			field("duration", "15")+str("path", `D:\data\x.mdf`)),
			xe.FileIO{Completed: true, DatabaseID: 5, FileID: 1, PageID: 1200, FileGroupID: 1, Offset: 9830400, Size: 65536,
				Mode: xe.MapValue{Text: "Contiguous"}, DurationUs: 15000, Path: `D:\data\x.mdf`}},
		{event("file_write_completed", "sqlserver", field("duration", "1")), xe.FileIO{Write: true, Completed: true, DurationUs: 1000}},
		{event("file_read", "sqlserver", field("offset", "8192")), xe.FileIO{Offset: 8192}},
		{event("transaction_log", "sqlserver", mapField("operation", "11", "LOP_DELETE_SPLIT")+mapField("context", "3", "INDEX_LEAF")+
			field("alloc_unit_id", "72057594045595648")+field("database_id", "5")+field("transaction_id", "9999")+
			field("log_record_size", "132")),
			xe.TransactionLog{Operation: xe.MapValue{Key: 11, Text: "LOP_DELETE_SPLIT", Map: "log_op"}, Context: xe.MapValue{Key: 3, Text: "INDEX_LEAF"},
				AllocUnitID: 72057594045595648, DatabaseID: 5, TransactionID: 9999, LogRecordSize: xe.Optional[uint64]{Value: 132, Valid: true}}},
		{event("sql_transaction", "sqlserver", field("transaction_id", "9999")+mapField("transaction_state", "1", "Commit")+
			mapField("transaction_type", "2", "User")+field("duration", "250")),
			xe.SQLTransaction{TransactionID: 9999, TransactionState: xe.MapValue{Key: 1, Text: "Commit"},
				TransactionType: xe.MapValue{Key: 2, Text: "User"}, DurationUs: 250}},
	}
	for _, c := range cases {
		e := mustDecodeOne(t, c.xml)
		got := xe.Typed(&e, maps)
		if got == nil {
			t.Errorf("%s: not modelled", e.Name)
			continue
		}
		// Compare without Common (checked separately) by zeroing it.
		gv := reflect.ValueOf(&got).Elem().Elem()
		cp := reflect.New(gv.Type()).Elem()
		cp.Set(gv)
		common := cp.FieldByName("Common").Interface().(xe.Common)
		cp.FieldByName("Common").Set(reflect.Zero(reflect.TypeOf(xe.Common{})))
		if !reflect.DeepEqual(cp.Interface(), c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", e.Name, cp.Interface(), c.want)
		}
		if common.Name != e.Name || common.Timestamp.Raw != "2026-11-29T10:00:00.123Z" || common.Actions.EventSequence.Value != 42 {
			t.Errorf("%s: common %+v", e.Name, common)
		}
	}
}

func TestTypedRefusesOtherEvents(t *testing.T) {
	e := mustDecodeOne(t, event("login", "sqlserver", ""))
	if _, ok := xe.AsLock(&e, nil); ok {
		t.Error("AsLock accepted login")
	}
	if _, ok := xe.AsWait(&e, nil); ok {
		t.Error("AsWait accepted login")
	}
	if _, ok := xe.AsPageIO(&e); ok {
		t.Error("AsPageIO accepted login")
	}
	if xe.Typed(&e, nil) != nil {
		t.Error("Typed modelled login")
	}
	// A map field whose value is not a number has no key.
	e = mustDecodeOne(t, event("wait_info", "sqlos", str("wait_type", "PAGEIOLATCH_SH")))
	if _, ok := e.MapField("wait_type", nil); ok {
		t.Error("MapField accepted a string key")
	}
}
