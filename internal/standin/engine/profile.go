package engine

import (
	"sort"
	"time"
)

// ThreadProfile is an operator's counters on one thread so far, as
// sys.dm_exec_query_profiles reports them while the query runs (the
// server's queryprofiles.go turns them into rows). Times are on the
// session's event clock; zero: not reached yet.
type ThreadProfile struct {
	Thread                                       int
	Rows, Rewinds, Rebinds, EndOfScans, Scans    int64
	Logical, Physical, ReadAheads, RowsRead      int64
	Opened, FirstRow, LastRow, Exhausted, Closed time.Time
	Active                                       time.Duration
}

// Profile lists n's counters per thread, threads in order: one zero
// profile for thread 0 while no thread has run it.
func (n *PlanNode) Profile() []ThreadProfile {
	threads := make([]int, 0, len(n.threads))
	for t := range n.threads {
		threads = append(threads, t)
	}
	sort.Ints(threads)
	if len(threads) == 0 {
		return []ThreadProfile{{}}
	}
	out := make([]ThreadProfile, 0, len(threads))
	for _, t := range threads {
		c := n.threads[t]
		out = append(out, ThreadProfile{Thread: t, Rows: c.Rows, Rewinds: c.rewinds, Rebinds: c.rebinds, EndOfScans: c.endOfScans,
			Scans: c.scans, Logical: c.logical, Physical: c.physical, ReadAheads: c.readAheads, RowsRead: c.rowsRead,
			Opened: c.opened, FirstRow: c.firstRow, LastRow: c.lastRow, Exhausted: c.exhausted, Closed: c.closed, Active: c.active})
	}
	return out
}

// EstimatedRows is the optimizer's row estimate over all executions, as
// estimate_row_count reports it; EstimatedRowsRead the rows it expected
// the operator to read (estimated_read_row_count).
func (n *PlanNode) EstimatedRows() int64 { return int64(n.EstRows*max(n.EstExecs, 1) + 0.5) }

// EstimatedRowsRead is the optimizer's estimate of the rows n reads.
func (n *PlanNode) EstimatedRowsRead() int64 { return int64(n.estRowsRead + 0.5) }

// RowsSoFar is the rows n has returned on all threads.
func (n *PlanNode) RowsSoFar() int64 { return n.total().Rows }
