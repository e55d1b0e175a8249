package engine

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// memoryUse records what a memory-consuming operator needed for rows rows
// and, past its share of the grant, makes it spill: worktable writes and
// reads in tempdb, IO_COMPLETION waits and sort_warning/hash_warning, as
// SQL Server spills a sort or hash that does not fit its grant.
func memoryUse(x Exec, r *RunCtx, n *PlanNode, rows int64) {
	width := n.rowSize
	if width == 0 {
		width = rowSizeOf(n.Schema)
	}
	need := rows*int64(width+16)/1024 + 1
	if need <= n.GrantKB || n.GrantKB == 0 {
		if need > n.UsedKB {
			n.UsedKB = need
		}
		return
	}
	n.UsedKB = n.GrantKB
	pages := (need - n.GrantKB + 7) / 8
	n.spillPages += pages
	n.spillLevel = 1
	n.spillThreads = 1
	if !x.AnySessionRunning() {
		x.Advance(time.Duration(pages) * 40 * time.Microsecond)
		return
	}
	waits := min(pages, 256)
	for i := int64(0); i < waits; i++ {
		for _, opcode := range []string{"Begin", "End"} {
			x.Emit(&xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: x.Advance(40 * time.Microsecond), Fields: []xevents.Field{
				xevents.FMap("wait_type", "wait_types", "sqlos", "IO_COMPLETION"), xevents.FMap("opcode", "event_opcode", "sqlos", opcode),
				xevents.FUint("duration", "uint64", 0), xevents.FUint("signal_duration", "uint64", 0), xevents.FPtr("wait_resource", 0)}})
		}
	}
	switch n.Physical {
	case "Sort":
		n.spillKind = "sort"
		// Since SQL Server 2016 sort_warning reports the pages of the spill
		// (https://techcommunity.microsoft.com/t5/sql-server-blog/sql-server-2016-8211-added-information-on-tempdb-spill-events/ba-p/384552):
		// the worktable pages written and read back, the same numbers as the
		// plan's SortSpillDetails WritesToTempDb/ReadsFromTempDb (showplan.go).
		x.Emit(&xevents.EventData{Name: "sort_warning", Pkg: "sqlserver", Time: x.Advance(5 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("sort_warning_type", "sort_warning_type", "sqlserver", "Single pass"), xevents.FUint("query_operation_node_id", "uint32", int64(n.ID)),
			xevents.FUint("granted_memory_kb", "uint64", n.GrantKB), xevents.FUint("used_memory_kb", "uint64", n.GrantKB),
			xevents.FUint("worktable_physical_reads", "uint64", pages), xevents.FUint("worktable_physical_writes", "uint64", pages)}})
	default:
		n.spillKind = "hash"
		x.Emit(&xevents.EventData{Name: "hash_warning", Pkg: "sqlserver", Time: x.Advance(5 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("hash_warning_type", "hash_warning_type", "sqlserver", "Recursion"), xevents.FUint("query_operation_node_id", "uint32", int64(n.ID)),
			xevents.FUint("recursion_level", "uint32", 0), xevents.FUint("granted_memory_kb", "uint64", n.GrantKB),
			xevents.FUint("worktable_physical_writes", "uint64", pages), xevents.FUint("workfile_physical_writes", "uint64", 0)}})
	}
}
