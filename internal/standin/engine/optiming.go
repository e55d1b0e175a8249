package engine

import (
	"slices"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Operator timing: when each operator, per thread, did what, and the
// query_thread_profile events that report it.
//
// Every operator is driven through RunCtx.Open, Next and Close, which
// record on the event clock:
//
//   - opened: its first Open;
//   - firstRow and lastRow: when it returned its first and its last row;
//   - exhausted: when it last returned end of data;
//   - closed: its last Close;
//   - active: the time spent inside its Open, GetNext and Close calls,
//     its inputs' calls included. That is what row mode reports per
//     operator and thread as ActualElapsedms: row-mode operators
//     accumulate their inputs' time (Paul White,
//     https://sqlperformance.com/2021/03/sql-performance/execution-plan-timings;
//     Erik Darling, https://erikdarling.com/understand-your-plan-operator-times-in-sql-server-execution-plans/),
//     and query_thread_profile's total_time_us carries the same here.
//
// PlanNode.Start and PlanNode.End are the first Open and the last row or
// end of data: when the operator worked, not when it was closed.
//
// When query_thread_profile fires. Its window in a trace is [timestamp −
// total_time_us, timestamp]. Lightweight profiling reports per operator
// and thread (https://learn.microsoft.com/sql/relational-databases/performance/query-profiling-infrastructure);
// docs/design/tracing.md §10 (from Internals Viewer) takes the timestamp as the
// operator's Close, and docs/design/event-fields.md §3.4 records, unverified, one
// event per operator and thread when the query ends. Whether SQL Server
// closes a hash join's build input when the build ends, or a sort's input
// once it is consumed, rather than from the root at the end of the query,
// is not documented anywhere we could find (sys.dm_exec_query_profiles
// documents open_time, first_row_time, last_row_time and close_time per
// operator and thread, but not when Close is called:
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-profiles-transact-sql).
// So the stand-in does what the documented facts allow and both readings
// cover: by default every operator is closed with the query and its
// events fire then, one per operator and thread, children before their
// parent (a parent's Close returns after its inputs'). With
// Options.ThreadProfileAtClose the events fire as the engine closes each
// operator — a hash join's build input when the build ends, a sort's or
// hash aggregate's input once consumed, an inner input after each
// execution (one event per execution, total_time_us that execution's
// share) — and any operator the engine never closed reports when the
// query ends. Either way the events' windows bound when an operator
// worked rather than show it: the timeline must not take a window's end
// for the end of an operator's work.

// threadTimes are one thread's times in an operator (zero: never).
type threadTimes struct {
	opened, firstRow, lastRow, exhausted, closed time.Time
	active                                       time.Duration
}

// callCost is what one GetNext call costs the engine before the operator
// does any work of its own: handing a row up a plan is not free, so an
// operator that returns many rows (a sort's output, a hash table's
// matches) takes measurable time doing it.
const callCost = 40 * time.Nanosecond

// rowSendCost is what writing one result row into the TDS output costs
// the statement, between two of the root operator's GetNext calls.
const RowSendCost = 120 * time.Nanosecond

// activeTime is the operator's active time on a thread. Operators the
// engine drives itself rather than through RunCtx (a window's segment and
// projections, a recursive CTE's concatenation, a MERGE's join) have
// none recorded; they worked from their first open to their end.
func (n *PlanNode) activeTime(thread int) time.Duration {
	if c := n.threads[thread]; c != nil && c.active > 0 {
		return c.active
	}
	if !n.Opened || n.Start.IsZero() || n.End.Before(n.Start) {
		return 0
	}
	return n.End.Sub(n.Start)
}

// profileThreads lists the threads query_thread_profile reports for an
// operator: the threads of its counters, else the coordinator.
func (n *PlanNode) profileThreads() []int {
	if len(n.threads) == 0 {
		return []int{0}
	}
	threads := make([]int, 0, len(n.threads))
	for t := range n.threads {
		threads = append(threads, t)
	}
	slices.Sort(threads)
	return threads
}

// operatorClosed fires query_thread_profile for an operator the engine has
// just closed, when the server is set to (Options.ThreadProfileAtClose).
func operatorClosed(x Exec, n *PlanNode) {
	if !x.ThreadProfileAtClose() || !x.AnySessionRunning() || (n.Hidden && len(n.Children) == 1) {
		return
	}
	profileNode(x, n)
}

// profileNode emits one query_thread_profile per thread for the active
// time not reported yet. A thread already reported with nothing new is
// skipped; one never reported reports (with 0 µs if it never ran) when
// the query ends.
func profileNode(x Exec, n *PlanNode) {
	if n.profiled == nil {
		n.profiled = map[int]time.Duration{}
	}
	for _, t := range n.profileThreads() {
		active := n.activeTime(t)
		done, reported := n.profiled[t]
		if reported && active <= done {
			continue // nothing new since it was last reported
		}
		n.profiled[t] = active
		c := n.Counters(t)
		fields := []xevents.Field{xevents.FUint("node_id", "uint32", int64(n.ID)), xevents.FUint("thread_id", "uint32", int64(t)),
			xevents.FUint("total_time_us", "uint64", (active - done).Microseconds())}
		if x.GuessedColumns() {
			fields = append(fields, xevents.FUint("actual_rows", "uint64", c.Rows), xevents.FUint("logical_reads", "uint64", c.logical),
				xevents.FUint("physical_reads", "uint64", c.physical))
		}
		x.Emit(&xevents.EventData{Name: "query_thread_profile", Pkg: "sqlserver", Time: x.Advance(3 * time.Microsecond), Fields: fields, Thread: t})
	}
}

// ThreadProfiles emits, when the query ends, query_thread_profile for
// every operator and thread not reported yet: children before their
// parent, as closing the plan from its root returns.
func ThreadProfiles(x Exec, root *PlanNode) {
	if !x.AnySessionRunning() {
		return
	}
	var visit func(n *PlanNode)
	visit = func(n *PlanNode) {
		for _, c := range n.Children {
			visit(c)
		}
		if n.Hidden && len(n.Children) == 1 {
			return
		}
		profileNode(x, n)
	}
	visit(root)
}
