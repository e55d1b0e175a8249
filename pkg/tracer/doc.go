// Package tracer runs one query on SQL Server inside a private Extended Events
// session and rebuilds its timeline: the run sequence of
// docs/design/tracing.md §2 with the improvements of §17, under the
// safety rules of docs/security.md.
//
// A trace uses three dedicated, never-pooled connections. The traced
// connection runs the batch inside QueryReplay's own transaction and nothing
// else: BEGIN TRANSACTION (reading @@TRANCOUNT and the transaction id), the
// batch with every result set drained and counted (values discarded), then
// a check that the same transaction is still open, ROLLBACK and a check
// that none is. The control connection does everything else: the server's
// identity, the permission pre-check, the sweep of orphaned sessions,
// CREATE EVENT SESSION (filtered to the traced session's id, QueryReplay's
// own statements excluded), the optional CHECKPOINT + DBCC
// DROPCLEANBUFFERS, START, STOP, the log records (fn_dblog, filtered to the
// trace's transaction), DROP, the read-back and name resolution. So nothing
// the batch leaves on its connection — SET options, an ended or open
// transaction, a hung request — can stop the cleanup. The watchdog
// connection, opened before anything is created, stays idle until the
// batch must be given up.
//
// When the batch outlives its timeout (DefaultTimeout unless set), the trace
// is cancelled, or the traced connection is lost, the watchdog connection
// stops the session at once and KILLs the traced session if it is still the
// one QueryReplay opened (same session id and login_time), so its locks go
// even while a middlebox keeps its socket open. It never waits for the
// control connection, which may be busy with a blocker sample or hung: a
// sample still in flight is abandoned with that connection. A
// trace whose watchdog connection cannot be opened does not start (the
// error says why) rather than fall back to the control connection, which
// is exactly the watchdog that failed. Connections from DSNOpener carry
// network deadlines, so a silent network never hangs a trace past its
// limits; the watchdog's statements share one budget (15 s). The cleanup
// runs on every path, ignores the caller's cancellation and retries with
// backoff over its whole budget: it drops the session on the control
// connection, else on the watchdog's, else from fresh connections, and
// KILLs a traced session whose connection was lost and that nothing yet
// found gone; what it cannot do, it reports, naming the session.
//
// While the batch runs, the control connection also samples
// sys.dm_exec_requests for the traced session (Options.BlockerInterval,
// default every 100 ms; blocking.go) and records, in Result.Blocking, each
// session that blocked it with the wait, the resource and the blocker's
// login, host and program from sys.dm_exec_sessions — its last batch only
// with Options.BlockerStatements. Sampling is bounded
// (Options.MaxBlockerSamples intervals), stops when the batch ends or the
// watchdog acts, and never fails the trace: a refusal is noted once in
// Result.BlockingNote.
//
// Events are read back (Options.ReadBack) either as the binary .xel files —
// listed with sys.dm_os_enumerate_filesystem, fetched with OPENROWSET(BULK …,
// SINGLE_BLOB) and decoded by pkg/xe's XELReader, when the login has
// ADMINISTER BULK OPERATIONS — or as XML with
// sys.fn_xe_file_target_read_file streamed into pkg/xe's decoder (a
// ring_buffer on Azure SQL Database and Managed Instance). Auto, the
// default, tries the binary path and falls back to XML on any refusal;
// RunInfo.ReadBack records the path, RunInfo.ReadBackFallback why binary was
// not used. The events are resolved to schema/table/index names after the
// run and handed to pkg/timeline.
//
// Design: the sequence talks to the server through two small consumer-side
// interfaces (Conn, the part of *sql.Conn it uses, and Opener, which opens a
// fresh one), so tests can record every statement the server received.
// The session DDL, the T-SQL safety classifier, DSN redaction and the bundle
// format are pure functions tested without any server.
//
// Decisions worth knowing:
//
//   - The classifier is an allowlist (keywords.go, classify.go): every
//     reserved keyword in a batch must be one the traceable statements need,
//     the non-reserved words that begin dangerous statements are refused, a
//     batch must begin with a statement keyword (else it is a procedure
//     call), and the tokenizer ends constants where SQL Server does. Every
//     batch, read-only or not, still runs in the verified transaction.
//   - Session names are queryreplay_ + a UUID v7 in hex (its first 48 bits
//     are the creation time) + the owner: the control session's id and
//     login time. The sweep drops a session as soon as its owner's session
//     is gone, never while it lives; the grace period applies only to names
//     without an owner. Call Tracer.SweepOrphans at startup; Trace sweeps
//     before each trace.
//   - The tracer's own statements after CREATE carry the comment
//     "/* <session name> */", which the session's sql_text predicate drops
//     (NOT sqlserver.like_i_sql_unicode_string, the documented comparator).
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
// What this package must NOT do: log query text, parameters, result values
// or secrets (only counts and timings reach slog; DSNs pass through
// RedactDSN); keep result rows; change data (a statement that could escape
// the rollback is refused before anything runs, and a rollback that cannot
// be verified is reported, never assumed); clear the buffer pool unless the
// Policy allows it; leave an event session behind; parse event XML or plans
// itself (pkg/xe, pkg/showplan) or build timelines (pkg/timeline).
//
// Why hand-written: the T-SQL tokenizer and classifier. No Go library
// tokenizes T-SQL (the reference tool uses .NET's ScriptDom); the
// classifier needs SQL Server's lexical rules and its reserved keywords,
// not a grammar, so a small scanner decides, never a regular expression
// over raw text. DSN redaction reuses go-mssqldb's own parser (msdsn) for
// the password it would use, and adds the readings a user's mistake could
// give.
package tracer
