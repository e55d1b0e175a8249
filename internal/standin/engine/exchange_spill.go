package engine

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// exchangeSpill makes an order-preserving Gather Streams spill when its
// producers are skewed: a merging exchange must take rows from every
// producer in order, so one producer's rows back up in its buffers and
// go to tempdb (exchange_spill, ExchangeSpillDetails), as SQL Server's
// exchanges do under skew.
func exchangeSpill(x Exec, r *RunCtx, e *exchangeIter) {
	if len(e.order) == 0 || e.kind != "Gather Streams" {
		return
	}
	in := e.in.Node()
	var most, total int64
	for t, c := range in.threads {
		if t == 0 {
			continue
		}
		total += c.Rows
		most = max(most, c.Rows)
	}
	const bufferRows = 2048 // rows the exchange buffers per producer
	if total == 0 || most*4 < total*3 || most <= bufferRows {
		return
	}
	pages := (most - bufferRows) / 100
	if pages < 1 {
		return
	}
	e.n.exchangeSpill = pages
	if !x.AnySessionRunning() {
		x.Advance(time.Duration(pages) * 30 * time.Microsecond)
		return
	}
	// exchange_spill reports the pages the spill wrote to tempdb in
	// worktable_physical_writes (SQL Server 2016 SP2 release notes,
	// https://learn.microsoft.com/en-us/sql/sql-server/sql-server-2016-release-notes).
	// The event fires at the start and at the end of the spill; the count
	// is known at the end, so the Begin event carries 0 and the pages are
	// counted once, as the plan's ExchangeSpillDetails WritesToTempDb.
	for _, opcode := range []string{"Begin", "End"} {
		written := int64(0)
		if opcode == "End" {
			written = pages
		}
		x.Emit(&xevents.EventData{Name: "exchange_spill", Pkg: "sqlserver", Time: x.Advance(time.Duration(pages) * 15 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("opcode", "event_opcode", "sqlos", opcode), xevents.FUint("query_operation_node_id", "uint32", int64(e.n.ID)),
			xevents.FUint("worktable_physical_writes", "uint64", written)}})
	}
}
