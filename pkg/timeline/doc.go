// Package timeline rebuilds what happened while a traced query ran: one clock
// in microseconds, events paired into intervals, each event tied to the plan
// operator that caused it (with the rule and confidence of that match), each
// operator's start, first-emit and end times with its consume, build, probe and
// emit phases, and lanes (plan, read, write, lock, wait, memory, split, log,
// io) that every view draws from.
//
// Input is decoded events (pkg/xe), the actual plan (pkg/showplan) and an
// optional Catalog that maps pages, HoBTs, allocation units and objects to
// schema/table/index names. Events are fed one at a time to a Builder, which
// keeps a compact record of each (well under 100 bytes), so memory stays
// proportional to the event count, not to the XML.
//
// Rules, in the words of xe-tracing.md (§6, §9, §10, §17):
//   - Order is package0.event_sequence when every event has it (gaps are
//     counted as lost events), else capture order. Time zero is the first
//     sql_batch_starting, else the earliest event.
//   - When every timestamp is millisecond-grained, the k-th of n events that
//     share one millisecond moves to +1000·k/n µs: order is kept and no event
//     leaves its millisecond.
//   - Matching tries, in decreasing confidence, the node id an event carries,
//     the object identity (strong when the index matches too, weak when one side
//     has no index name) — several candidates on one object are told apart by
//     their execution windows — and, for events that carry no object (waits,
//     spills without a node id), timing alone. An event whose object no
//     operator touches stays unmatched; it is never pushed to an operator on
//     another table.
//
// What this package must NOT do: any I/O (reading files, querying SQL Server,
// logging), parsing XML, or shaping frames for Grafana. It is pure: the same
// input gives the same Trace.
package timeline
