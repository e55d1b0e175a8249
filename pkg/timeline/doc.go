// Package timeline rebuilds what happened while a traced query ran: one clock
// in microseconds, events paired into intervals, each event tied to the plan
// operator that caused it (with the rule and confidence of that match), each
// operator's start, first-emit and end times with its consume, build, probe and
// emit phases, and lanes (plan, read, write, lock, wait, memory, split, log,
// io) that every view draws from.
//
// Input is decoded events (pkg/xe), the actual plan (pkg/showplan) and an
// optional Catalog that maps pages, HoBTs, allocation units and objects to
// schema/table/index names (CatalogFromFile builds one from pkg/catalogfile's
// decoded JSON). Events are fed one at a time to a Builder, which keeps a
// compact record of each (well under 100 bytes), so memory stays
// proportional to the event count, not to the XML.
//
// Rules, in the words of docs/design/tracing.md (§6, §9, §10, §17):
//
//   - Order is package0.event_sequence when every event has it, else capture
//     order (and a note says how many lack one). An event_sequence seen twice
//     with the same content is one event fed twice: counted once
//     (Summary.Duplicates). A sequence shared by different events is kept and
//     reported (SequenceClashes). Gaps are counted as lost events and listed
//     with the times of the events around them (Summary.Gaps). Time zero is
//     the first sql_batch_starting, else the earliest event; earlier events
//     have negative times.
//
//   - Spreading is decided per millisecond: in a millisecond whose events all
//     carry millisecond-grained timestamps, the k-th of n moves to
//     +1000·k/n µs (order kept, no event leaves its millisecond); a
//     millisecond holding a sub-millisecond timestamp is left as it is.
//
//   - An interval whose end was not captured is Open (closed at the statement
//     end, or where it began for an uncompleted read). There is no sentinel
//     time: an interval that ended before sql_batch_starting is closed.
//
//   - A query_thread_profile window, [timestamp − total_time_us,
//     timestamp], bounds an operator: it was opened by the window's start
//     and worked no later than its end; total_time_us is its active time
//     (row mode: its inputs' included). It does not say the operator
//     worked until the window's end: the event fires when the operator
//     closes, which may be when the query ends (docs/design/tracing.md §10,
//     docs/design/event-fields.md §3.4). When every window ended together at the
//     end of the statement (within TimingLimitUs) a note says so and
//     windows place nothing.
//
//   - Matching tries, in decreasing confidence, the node id an event carries,
//     the object identity (strong when the index matches too, weak when one side
//     has no index name) and, for events that carry no object (waits, spills
//     without a node id), timing alone. It runs in two passes: operators'
//     times are worked out from the events that name them, and timing then
//     compares events with when each operator worked (an operator only
//     placed by its parent, for its active time, decides only low); the
//     times are worked out again with what that added. Several operators
//     on one object are told apart by time; unless every candidate has a
//     span and exactly one holds the event, timing decided: the match is
//     Ambiguous, low, and lists its Candidates; equal spans go to the deeper
//     operator. A timing match considers only spans within TimingLimitUs (2
//     ms) of the event; none that near, a wait or spill belongs to the
//     statement (rule "statement", no node) and data whose object the
//     catalog does not know stays unmatched (a tempdb page the catalog
//     does not know goes only to an operator that may read tempdb: a temp
//     table, or an object whose database the plan does not name; it is a
//     sort's, hash's or spool's worktable otherwise). An event whose object no
//     operator touches stays unmatched; it is never pushed to an operator on
//     another table, nor to one that never ran. Matches by timing alone do
//     not place operators in the first pass (they follow from the times);
//     once made, every event matched to an operator (not ambiguous) lies in
//     its span, and what it feeds is fitted around that.
//
//   - Invariants (Check; tested on every trace the tests build, on
//     generated plans and, by the stand-in's tests, on every scenario and
//     everyday query): an operator's span holds its own matched events; a
//     blocking operator first emits, and a hash join's build ends, at or
//     after its input's last event; Start ≤ FirstEmit ≤ End and phases
//     never overlap or run backwards.
//
//   - Phase boundaries rest on the strongest evidence (Phase.Source): a
//     hash join's build ends once its build input has and no later than
//     the probe input's first event; a blocking operator first emits once
//     its input has ended and after its own spill warnings; a nested loops'
//     outer input first emits before the inner input is first seen; an
//     input whose rows are taken as they come works until its parent is
//     done with it. Windows and active times only bound and fill in.
//
//   - Operators that never ran (ActualExecutions 0, the input an adaptive
//     join's ActualJoinType left unused, anything below them) are
//     NotExecuted: no phases, no plan-lane bar, at their parent's start.
//
//   - An operator re-executed on the inner side of a nested loops (more than
//     one execution per thread) is one consume→emit cycle per execution:
//     Cycles and numbered phases where repeated query_thread_profile windows
//     show them, else one "reexecuted" phase whose first emit ends the first
//     of its equal cycles. A spool or sort rewound (1 rebind) consumes once
//     and its emit phase stands for every execution.
//
//   - Operators with no evidence in their subtree are placed inside what
//     their parent's phases allow (TimeSource "parent"): a probe input after
//     its hash join's build, an inner input after the outer's first row.
//
//   - Parallel operators get per-thread bars (Threads: from the operator's
//     start for the thread's active time, no later than its window's end;
//     skew visible by rows and times); Parallelism operators show their
//     producer and consumer sides (Exchange).
//
//   - Call stacks (package0.callstack / callstack_rva actions) are kept
//     once each in a stack table (Trace.Stacks: id → frames as pkg/callstack
//     parses them, with Options.Stacks' module bases and identities); every
//     lane entry names its event's stack by id. Resolving frames to symbols
//     is I/O and belongs to the tracer, which fills StackFrame.Symbol.
//
// The JSON (queryreplay timeline --json; a tracer bundle's trace part) is
// schema 3 (Trace.Schema). Schema 1 — the JSON before the field existed —
// still loads (Trace.UnmarshalJSON turns its heldToEnd locks and
// uncompleted reads into open intervals), and so does schema 2; a newer
// schema is refused by name. Schema 3 only added fields: trace stacks[]
// (the stack table) and pages[] (page headers the tracer read), stack
// on read/write, lock, wait, memory, split and log entries, and source on
// phases (what each boundary rests on); operator timeSource is "events"
// for an operator its own events place (before: "thread_profile"
// whenever it had a window). Schema 2 only added fields and values:
//
//	trace        schema
//	match        ambiguous, candidates; rule "statement" now also for
//	             timing matches beyond the distance limit
//	lock         open (heldToEnd kept, same meaning)
//	io           open (completed kept)
//	phase        kind "reexecuted"; execution, executions
//	operator     notExecuted, notExecutedReason, executions, rebinds,
//	             rewinds, cycles[], threads[], exchange{producer,consumer};
//	             timeSource "parent" and "not_executed"
//	lanes.plan   leaves out operators that never ran
//	summary      gaps[], gapsTruncated, duplicates, sequenceClashes,
//	             withoutSequence, spreadBuckets, ambiguous{lane: n},
//	             timingLimitUs
//
// What this package must NOT do: any I/O (reading files, querying SQL Server,
// logging), parsing XML or JSON catalogs, or shaping frames for Grafana. It
// is pure: the same input gives the same Trace.
package timeline
