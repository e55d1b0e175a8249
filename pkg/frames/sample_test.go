package frames

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testtrace"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

const sampleID = "0190d5c2a0e87c3b9a51e2f4c6d8b0a1"

func ip(v int) *int { return &v }

func i64(v int64) *int64 { return &v }

func m(node timeline.NodeID, r timeline.Rule, c timeline.Confidence) timeline.Match {
	return timeline.Match{NodeID: node, Rule: r, Confidence: c}
}

// orders and customers are the sample lanes' objects: handles into
// sampleObjects.
const (
	orders    timeline.ObjectRef = 1
	customers timeline.ObjectRef = 2
)

var sampleObjects = []timeline.ObjectName{
	{Schema: "dbo", Table: "Orders", Index: "PK_Orders"},
	{Schema: "dbo", Table: "Customers", Index: "PK_Customers"},
}

// sampleTrace is a small hand-made timeline with an entry in every lane:
// a hash join (node 0) building from Customers (1) and probing Orders (2).
func sampleTrace() *timeline.Trace {
	return &timeline.Trace{
		Schema: timeline.Schema, ZeroTime: "2026-11-29T12:00:00.000123Z", Start: 0, End: 900, Statement: "SELECT …",
		Operators: []timeline.Operator{
			{ID: 0, PhysicalOp: "Hash Match", LogicalOp: "Inner Join", Behavior: "hybrid", Start: 10, FirstEmit: 400, End: 880,
				TimeSource: "thread_profile", Phases: []timeline.Phase{{Kind: timeline.PhaseBuild, Start: 10, End: 300}, {Kind: timeline.PhaseProbe, Start: 300, End: 880}}},
			{ID: 1, Parent: ip(0), PhysicalOp: "Clustered Index Scan", LogicalOp: "Clustered Index Scan", Behavior: "streaming",
				Object: "[dbo].[Customers].[PK_Customers]", Start: 20, FirstEmit: 25, End: 290, TimeSource: "events",
				Phases: []timeline.Phase{{Kind: timeline.PhaseEmit, Start: 25, End: 290}}},
			{ID: 2, Parent: ip(0), PhysicalOp: "Clustered Index Scan", LogicalOp: "Clustered Index Scan", Behavior: "streaming",
				Object: "[dbo].[Orders].[PK_Orders]", Start: 310, FirstEmit: 320, End: 870, TimeSource: "derived", Executions: 1,
				Threads: []timeline.ThreadBar{{Thread: 1, Start: 310, End: 860, Rows: 6000, Source: "thread_profile"},
					{Thread: 2, Start: 315, End: 870, Rows: 4000, Source: "plan"}}},
		},
		Lanes: timeline.Lanes{
			Objects:       slices.Clone(sampleObjects),
			CandidateSets: [][]timeline.NodeID{{0, 2}},
			Read: []timeline.PageEvent{
				{T: 30, Match: m(1, timeline.RuleObject, timeline.ConfidenceStrong), DatabaseID: 5, FileID: 1, PageID: 280, Object: customers, Stack: 1},
				{T: 320, Match: m(2, timeline.RuleObject, timeline.ConfidenceStrong), DatabaseID: 5, FileID: 1, PageID: 312, Object: orders, Stack: 1},
				{T: 330, Match: m(2, timeline.RuleObject, timeline.ConfidenceStrong), DatabaseID: 5, FileID: 1, PageID: 312, Object: orders, Stack: 1},
				{T: 500, Match: m(timeline.Unmatched, timeline.RuleUnmatched, timeline.ConfidenceNone), DatabaseID: 5, FileID: 1, PageID: 9},
			},
			Write: []timeline.PageEvent{{T: 600, Match: m(2, timeline.RuleObjectTiming, timeline.ConfidenceWeak), DatabaseID: 5, FileID: 1, PageID: 312, Object: orders}},
			Lock: []timeline.LockInterval{
				{T: 28, End: 31, Match: m(1, timeline.RuleObject, timeline.ConfidenceStrong), Mode: "S", ResourceType: "PAGE",
					Resource: "5:1:280", TransactionID: 77, Object: customers, AcquireSeen: true, Stack: 2},
				{T: 700, End: 900, Match: m(2, timeline.RuleNodeID, timeline.ConfidenceExact), Mode: "X", ResourceType: "KEY",
					Resource: "5:72057594045136896:(8194443284a0)", TransactionID: 77, Object: orders, Open: true, HeldToEnd: true, Row: "OrderID=42", AcquireSeen: true},
			},
			Wait: []timeline.WaitInterval{
				{T: 40, End: 140, Match: m(1, timeline.RuleTiming, timeline.ConfidenceLow), WaitType: "PAGEIOLATCH_SH", Category: "Io", DurationUs: 100},
				{T: 850, End: 900, Match: timeline.Match{NodeID: timeline.Unmatched, Rule: timeline.RuleUnmatched, Ambiguous: true, Candidates: 1},
					WaitType: "CXPACKET", Category: "Parallelism", Open: true},
			},
			Memory: []timeline.MemoryEvent{
				{T: 15, Match: m(0, timeline.RuleStatement, timeline.ConfidenceExact), Kind: "query_memory_grant_usage", GrantedMemoryKB: 1824, UsedMemoryKB: 900},
				{T: 450, Match: m(0, timeline.RuleNodeID, timeline.ConfidenceExact), Kind: "hash_warning", Detail: "recursion level 1", Spill: true},
			},
			Split: []timeline.SplitEvent{{T: 610, Match: m(2, timeline.RuleObject, timeline.ConfidenceStrong), FileID: 1, PageID: 312, NewFileID: 1, NewPageID: 313, Operation: "SPLIT_FOR_INSERT", Object: orders}},
			Log: []timeline.LogEvent{
				{T: 605, Match: m(2, timeline.RuleObject, timeline.ConfidenceStrong), Kind: "record", Operation: "LOP_MODIFY_ROW", Context: "LCX_CLUSTERED", TransactionID: 77, Size: 124, Object: orders},
				{T: 890, Match: m(timeline.Unmatched, timeline.RuleStatement, timeline.ConfidenceNone), Kind: "flush", Size: 4096},
			},
			IO: []timeline.IOInterval{{T: 35, End: 130, Match: m(1, timeline.RuleTiming, timeline.ConfidenceLow), DatabaseID: 5, FileID: 1, Offset: 2293760, Size: 8192, DurationUs: 95, Completed: true}},
		},
		// the stack table: the page reads' stack (3 events) and the lock's
		Stacks: []timeline.Stack{
			{ID: 1, Events: 3, Frames: []timeline.StackFrame{
				{Module: "sqlmin", RVA: 0x1010, HasRVA: true, PDB: "sqlmin.pdb", GUID: "2A0AB7C4-4C6E-4F7A-8F55-0F0F0F0F0F0F", Age: 2, Symbol: "BPool::Get", Offset: 0x10},
				{Module: "sqlmin", RVA: 0x202a, HasRVA: true, PDB: "sqlmin.pdb", GUID: "2A0AB7C4-4C6E-4F7A-8F55-0F0F0F0F0F0F", Age: 2, Symbol: "IndexDataSetSession::GetNextRowValuesInternal", Offset: 0x2a},
				{Module: "sqldk", RVA: 0x301f, HasRVA: true, PDB: "SqlDK.pdb", GUID: "6A193443-3512-464B-8B8E-D905AD930EE6", Age: 2, Symbol: "SOS_Task::Param::Execute", Offset: 0x1f}}},
			{ID: 2, Events: 1, Frames: []timeline.StackFrame{
				{Module: "sqlmin", RVA: 0x202a, HasRVA: true, PDB: "sqlmin.pdb", GUID: "2A0AB7C4-4C6E-4F7A-8F55-0F0F0F0F0F0F", Age: 2, Symbol: "IndexDataSetSession::GetNextRowValuesInternal", Offset: 0x2a},
				{Module: "sqldk", RVA: 0x301f, HasRVA: true, PDB: "SqlDK.pdb", GUID: "6A193443-3512-464B-8B8E-D905AD930EE6", Age: 2, Symbol: "SOS_Task::Param::Execute", Offset: 0x1f},
				{Module: "ntdll", RVA: 0x4b0, HasRVA: true, Unresolved: "PDB not found on the symbol servers"}}},
		},
		// page headers of two of the pages read (page 9 has none)
		Pages: []timeline.PageHeader{
			{DatabaseID: 5, FileID: 1, PageID: 280, Type: "DATA_PAGE", Level: 0, NextFile: 1, NextPage: 281, ObjectID: 581577110, IndexID: 1},
			{DatabaseID: 5, FileID: 1, PageID: 312, Type: "DATA_PAGE", Level: 0, PrevFile: 1, PrevPage: 311, NextFile: 1, NextPage: 313, ObjectID: 613577224, IndexID: 1},
		},
		Summary: timeline.Summary{Events: 21, Lanes: map[string]int{"read": 4, "write": 1, "lock": 2, "wait": 2, "memory": 2, "split": 1, "log": 2, "io": 1, "plan": 3},
			Unmatched: map[string]int{"read": 1, "wait": 1, "log": 1}, Ambiguous: map[string]int{"wait": 1}, Ordering: "event_sequence", Notes: []string{"sample"}},
	}
}

func sampleBundle() *bundle.Bundle {
	return &bundle.Bundle{Format: bundle.Format, Version: bundle.Version,
		SQL:    "SELECT c.Name, o.OrderID FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID",
		Server: bundle.ServerInfo{ProductVersion: "14.0.3192.2", EngineEdition: 3, Database: "QueryReplayDemo", SPID: 53},
		Run: bundle.RunInfo{Session: "queryreplay_" + sampleID, StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
			Groups: bundle.EventGroups{Locks: true, Waits: true, Memory: true, Splits: true, Log: true, FileIO: true}, ReadBack: "binary", Modification: true},
		Result: bundle.Result{Rows: []int64{12}, DurationUs: 950, Events: 21, Lost: 2, DroppedEvents: 1, RolledBack: true,
			Warnings: []string{"sample warning"},
			LogRecords: []bundle.LogRecord{{LSN: "00000025:00000010:0002", Operation: "LOP_BEGIN_XACT", Context: "LCX_NULL", TransactionID: "0000:000003e8"},
				{LSN: "00000025:00000010:0003", Operation: "LOP_MODIFY_ROW", Context: "LCX_CLUSTERED", TransactionID: "0000:000003e8", AllocUnitID: 72057594045136896, PageID: "0001:00000138", SlotID: 4}}},
		Trace: sampleTrace(),
	}
}

func sampleStacks() *callstack.Tree {
	var t callstack.Tree
	scan := callstack.Frame{Module: "sqlmin", Symbol: "IndexDataSetSession::GetNextRowValuesInternal", SymbolOffset: 0x2a}
	get := callstack.Frame{Module: "sqlmin", Symbol: "BPool::Get", SymbolOffset: 0x10}
	root := callstack.Frame{Module: "sqldk", Symbol: "SOS_Task::Param::Execute", SymbolOffset: 0x1f}
	t.Add(callstack.Stack{Frames: []callstack.Frame{get, scan, root}, Count: 3})
	t.Add(callstack.Stack{Frames: []callstack.Frame{scan, root}, Count: 1})
	res := &callstack.Resolver{Classifier: callstack.DefaultClassifier()}
	if _, err := t.Resolve(context.Background(), res); err != nil {
		panic(err)
	}
	return &t
}

func sampleSource() *Source {
	return &Source{TraceID: sampleID, Bundle: sampleBundle(), Runtime: map[int]Runtime{
		0: {ActualRows: i64(12), Executions: i64(1), ElapsedMs: i64(1), CPUMs: i64(0), EstimatedRows: new(float64(10))},
		1: {ActualRows: i64(250), Executions: i64(1), LogicalReads: i64(3), PhysicalReads: i64(1), ReadAheads: i64(2), Scans: i64(1)},
	}, CPUMs: i64(7)}
}

// generatedSource is a real timeline built from the stand-in's synthetic
// trace (pages × 5 events) with the real parsers.
func generatedSource(tb testing.TB, pages, operators int) *Source {
	tb.Helper()
	b, err := testtrace.Generated(pages, operators)
	if err != nil {
		tb.Fatal(err)
	}
	return &Source{TraceID: sampleID, Bundle: b}
}
