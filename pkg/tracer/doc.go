// Package tracer runs one query on SQL Server inside a private Extended Events
// session and rebuilds its timeline: the run sequence of
// ../shared/docs/xe-tracing.md §2 with the improvements of §17.
//
// A trace is, on one dedicated, never-pooled connection: SELECT @@SPID and the
// server's identity; a permission pre-check; a sweep of orphaned
// queryreplay_* sessions older than a grace period; CREATE EVENT SESSION
// (filtered to that @@SPID, the tracer's own statements excluded); the
// optional CHECKPOINT + DBCC DROPCLEANBUFFERS and DBCC TRACEON(652); START;
// the query, with every result set drained and counted (values discarded);
// STOP; and — on every path, error, cancellation, timeout or lost connection
// (then from a fresh connection) — TRACEOFF(652), ROLLBACK and DROP. Data
// modifications run only inside a named transaction that is always rolled
// back, with the transaction_log event and fn_dblog records around it.
// Events are read back (Options.ReadBack) either as the binary .xel files —
// listed with sys.dm_os_enumerate_filesystem, fetched with OPENROWSET(BULK …,
// SINGLE_BLOB) and decoded by pkg/xe's XELReader, when the login has
// ADMINISTER BULK OPERATIONS — or as XML with
// sys.fn_xe_file_target_read_file streamed into pkg/xe's decoder (a
// ring_buffer on Azure SQL Database). Auto, the default, tries the binary
// path and falls back to XML on any refusal; RunInfo.ReadBack records the
// path, RunInfo.ReadBackFallback why binary was not used. The events are
// resolved to schema/table/index names after the run and handed to
// pkg/timeline.
//
// Design: the sequence talks to the server through two small consumer-side
// interfaces (Conn, the part of *sql.Conn it uses, and Opener, which opens a
// fresh one), so tests can record every statement the server received.
// The session DDL, the T-SQL safety classifier and the bundle format are
// pure functions tested without any server.
//
// Decisions worth knowing:
//
//   - Session names are queryreplay_ + a UUID v7 in hex, whose first 48 bits
//     are the creation time: the orphan sweep tells a session's age from its
//     name (sys.server_event_sessions has no creation time). Call
//     Tracer.SweepOrphans at startup; Trace sweeps before each trace.
//   - The tracer's own statements after CREATE carry the comment
//     "/* <session name> */", which the session's sql_text predicate drops.
//   - There is no pause after START (the reference tool waits 250 ms): ALTER
//     EVENT SESSION … STATE = START returns with the session running, and the
//     traced batch's own sql_batch_starting proves it was captured (every
//     test checks Result.Batches == 1).
//   - Events are read once from the server: the first pass streams the rows
//     into the decoder (collecting what to resolve and the plan) and into a
//     local temporary spool, which the second pass feeds to the timeline
//     (the plan, which arrives last, is needed first).
//   - Event files stay in the server's directory after DROP: T-SQL has no
//     documented way to delete a file. The size cap bounds each trace.
//
// What this package must NOT do: log query text, parameters or result values
// (only counts and timings reach slog); keep result rows; change data (a
// modification that could escape the rollback is refused before anything
// runs); clear the buffer pool or run modifications unless the Policy allows
// it; leave an event session behind; parse event XML or plans itself (pkg/xe,
// pkg/showplan) or build timelines (pkg/timeline).
//
// Why hand-written: the T-SQL tokenizer. No Go library tokenizes T-SQL (the
// reference tool uses .NET's ScriptDom); the classifier needs only tokens —
// strings with ” escapes, N” literals, nested /* */ comments, -- comments,
// [bracketed] and "quoted" identifiers, GO lines — not a grammar, so a small
// scanner decides, never a regular expression over raw text.
package tracer
