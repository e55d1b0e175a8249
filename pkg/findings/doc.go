// Package findings says what a trace means: it reads a rebuilt timeline
// (pkg/timeline) and, when there is one, the actual plan's runtime counters
// (pkg/showplan), and applies rules that each name a problem a DBA would
// recognise, in the DBA's words and with the engine's own numbers ("Key
// Lookup did 85% of the reads: 12,400 of 14,600 pages").
//
// Every Finding carries: the rule that produced it, a title with the
// numbers, a severity, a confidence with its reasons, the operators it is
// about, the evidence (lane entries of the trace, by lane and index, so a
// viewer can jump to them), the measured numbers with their units, and a
// hint with its learn.microsoft.com reference.
//
// Rules (Rules lists them with their thresholds; see Config):
//
//   - reads-concentrated: one operator did most of the reads (logical reads
//     from the plan's runtime counters, else physical page reads from the
//     trace), with a hint that depends on the operator (a key lookup wants
//     a covering index, a scan an index for its predicate).
//   - residual-predicate: an operator read many rows (ActualRowsRead) to
//     return few, the residual predicate filtering after the read.
//   - spill: a sort or hash spilled to tempdb (sort_warning, hash_warning,
//     hash_spill_details or the plan's SpillToTempDb), with the pages written
//     to tempdb and the memory grant's use.
//   - exchange-spill: a Parallelism operator wrote its buffers to tempdb.
//   - grant-excess: the memory grant was far above what the query used.
//   - grant-too-small: the query got less memory than it asked for, or
//     spilled with its grant full.
//   - grant-wait: the query waited for its memory grant (RESOURCE_SEMAPHORE).
//   - blocking: lock waits (LCK_M_*), with the resource (the lock acquired
//     when the wait ended) and the holder when the input names it: a
//     LockHolder the caller gives, or the Blocker the tracer sampled from
//     sys.dm_exec_requests while the wait lasted (matched by time, within
//     blockerSlackUs, by wait type and, for key locks, by key hash).
//   - cold-cache: pages came from disk rather than the buffer pool, with
//     the read-ahead effect (what read-ahead fetched, or, when it was
//     disabled, the synchronous reads and their PAGEIOLATCH waits).
//   - parallel-skew: one thread of a parallel operator did most of its rows.
//   - parallelism-waits: CXPACKET/CXCONSUMER took most of the wait time.
//   - page-splits: page splits by index and split kind.
//   - log-volume: the log records (count, bytes, operations) a traced
//     modification wrote.
//   - lock-escalation: row or page locks escalated to a table (or
//     partition) lock (lock_escalation), with the object and lock count.
//   - row-goal: an operator costed for a row goal (TOP, EXISTS, IN, FAST
//     n) produced far more rows than the goal's estimate.
//   - spool-rebinds: a spool re-ran its input many times, or an eager
//     index spool built a temporary index for many seeks.
//   - parameter-sensitivity, implicit-conversion, no-join-predicate,
//     no-statistics, compile-timeout, non-parallel: what the plan itself
//     records (rules_plan.go).
//
// Operator-bound findings from the plan (reads-concentrated, row-goal,
// spool-rebinds) are warnings only when the operator took at least
// Config.WarningTimeShare of the statement's elapsed time.
//   - events-lost, events-truncated, events-ambiguous: evidence the trace
//     is missing or could not place, which lowers other findings'
//     confidence.
//
// Confidence starts high and drops (to medium, then low) when events were
// lost inside the finding's time span (medium), lost at times the trace
// cannot place (medium) or lost in large numbers (Config.LostShareLow: low),
// when the read-back was truncated (low), and — for findings about which
// operator did something (reads-concentrated, residual-predicate, spill,
// exchange-spill, parallel-skew) — when evidence matched its operator
// ambiguously (medium; low from Config.AmbiguousShareLow of the evidence).
// Findings resting on the plan's runtime counters alone do not depend on the
// event stream and keep high confidence. Reasons are listed on the finding.
//
// Profile computes the per-operator figures (reads, waits by category,
// spills, phases, rows) that the rules and pkg/compare share.
//
// What this package must NOT do: any I/O (files, SQL Server, logging),
// parsing of XML or JSON trace bundles beyond the Config it is given, or
// shaping frames for Grafana. It is pure: the same input gives the same
// Report. The numbers are formatted here so that every surface (CLI,
// frames, panel) shows the same titles.
package findings
