// Package standin is QueryReplay's SQL Server stand-in: the behaviour behind
// the TDS protocol server in internal/tds (this package implements
// tds.Handler, the way an http.Handler sits behind net/http's server). No
// SQL Server can run on the project's machines, so tests, the demo and
// benchmarks talk to this instead, through the real go-mssqldb driver or
// FreeTDS.
//
// It is honest rather than a mirror of the tracer: every batch is tokenised
// and parsed by a recursive-descent T-SQL parser and executed against a real
// in-memory demo database; anything outside the supported shapes is answered
// with SQL Server's own error (number, severity and text from
// learn.microsoft.com's "Database engine events and errors" pages), never
// with a silent empty result.
//
// # API
//
//	srv := standin.New(standin.Options{})           // a tds.Handler
//	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{})
//	db, _ := sql.Open("sqlserver", run.DSN)          // sa / QueryReplay-Standin1, database QueryReplayDemo
//	run.Faults().DropConnection("fn_dblog")          // fault injection (a tdsfault wrapper)
//	run.Restart()                                    // service restart
//	standin.Scenarios()                              // the demo queries
//	release, err := standin.PrepareScenario(ctx, run.Server, sc) // what sc needs from other sessions
//	h, err := run.HoldLocks(ctx, "UPDATE …", standin.HoldOptions{AfterWait: 400 * time.Millisecond})
//	h, err := run.HoldWorkspaceMemory(ctx, kb, standin.HoldOptions{})
//	h.Release()                                      // rolls the holder back / returns the memory
//	standin.GenerateTrace(pages, operators)          // large synthetic traces for benchmarks
//
// # What is emulated
//
//   - Demo database QueryReplayDemo (database_id 5): dbo.Customers (1,000
//     rows), dbo.Products (200), dbo.Orders (10,000, plus nonclustered
//     IX_Orders_CustomerID) and dbo.OrderLines (about 30,000), generated from
//     a fixed seed. Each index has partitions/hobts/allocation units with
//     SQL Server-shaped ids (2^56 + n·65536), an IAM page, leaf pages in key
//     order and a root page; every view of that layout agrees: lock events,
//     physical_page_read page ids, %%physloc%%, %%lockres%%,
//     sys.system_internals_allocation_units, sys.dm_db_page_info and
//     sys.dm_db_database_page_allocations.
//   - A query engine (docs/standin.md §3): every SELECT, INSERT, UPDATE,
//     DELETE and MERGE is planned into the operators SQL Server would choose
//     on the demo data (seeks, key lookups, nested loops/hash/merge joins,
//     stream and hash aggregates, sorts, windows, spools, parallelism) and
//     executed as iterators whose counters and events are the actual plan
//     and the trace. T-SQL: CTEs (recursive, MAXRECURSION), UNION [ALL],
//     INTERSECT, EXCEPT, window functions with PARTITION BY/ORDER BY/ROWS
//     and RANGE frames, OFFSET/FETCH, TOP [PERCENT] [WITH TIES], ROLLUP/CUBE/
//     GROUPING SETS, derived tables, APPLY, EXISTS/IN/ANY/ALL and scalar
//     subqueries, the everyday date, string and conversion functions,
//     SELECT INTO, UPDATE/DELETE … FROM, MERGE, #temp tables, table
//     variables, CREATE/DROP TABLE, WHILE; table hints WITH (INDEX(...))
//     (which also change the %%lockres%% and %%physloc%% answers to the
//     hinted index) and query hints (MAXDOP, join hints, grant percents).
//     PRIMARY KEY (Msg 2627) and NOT NULL (Msg 515) checks; IF, BEGIN ...
//     END, DECLARE/SET @var, PRINT, USE, WAITFOR DELAY; sp_executesql
//     parameters as variables.
//   - Concurrency and bounds: statements give the server latch up every 256
//     rows (after 64 rows or 1 ms when another session waits for it) and
//     around network writes, and stop on ATTENTION or KILL, so sessions run
//     side by side; the latch is handed over in arrival order (latch.go),
//     so a session reading many rows beside a busy one is not starved; blocking operators hold rows against
//     Options.MaxStatementMemory/MaxStatementRows, past which a statement
//     fails with Msg 701.
//   - Errors behave as in SQL Server: compile-time errors (syntax, unknown
//     object/column/function/variable) end the whole batch; run-time errors
//     (constraint violations, conversions, divide by zero, XE DDL
//     refusals) end only their statement and the batch goes on, unless SET
//     XACT_ABORT ON, which also rolls the transaction back. Each error also
//     fires error_reported.
//   - sys.dm_tran_locks (the locks each session's transaction holds),
//     sys.dm_tran_current_transaction, sys.dm_exec_requests (the caller's
//     request and every one suspended on a lock: blocking_session_id,
//     wait_type, wait_time, wait_resource, last_wait_type),
//     sys.dm_exec_sessions (running while a request is), and
//     sys.dm_exec_input_buffer (requests.go).
//   - Transactions: BEGIN TRAN [name], COMMIT, ROLLBACK (and TM requests
//     from database/sql BeginTx), with X/IX locks held until the end and
//     released then (lock_released events), log records in fn_dblog(NULL,
//     NULL) ([Current LSN], Operation, Context, [Transaction ID], AllocUnitId,
//     [Page ID], [Slot ID], [RowLog Contents 0/1], [Log Record] in the layout
//     docs/design/tracing.md §13 describes; modelled, not byte-identical), undone for
//     real on ROLLBACK with compensation records and LOP_ABORT_XACT.
//     CHECKPOINT cleans dirty pages and truncates the inactive log (simple
//     recovery).
//   - Buffer pool: all pages start cached; DBCC DROPCLEANBUFFERS evicts clean
//     pages, so the next reads are physical (PAGEIOLATCH_SH waits,
//     file_read/file_read_completed, physical_page_read), CHECKPOINT writes
//     dirty pages (physical_page_write, file_write_completed) and a commit
//     that changed data flushes the log (WRITELOG wait,
//     log_flush_complete). Statements fire sql_statement_starting/completed
//     with line, offsets and text; batches sql_batch_starting/completed,
//     RPCs rpc_starting/completed; transactions sql_transaction. Without trace
//     flag 652 scans read ahead (one file_read for up to 64 contiguous pages,
//     no PAGEIOLATCH wait); DBCC TRACEON(652) (session) or TRACEON(652, -1)
//     (global) turns read-ahead off. WITH NO_INFOMSGS suppresses Msg 2528.
//   - SET NOCOUNT, XACT_ABORT, STATISTICS XML (the actual plan comes back as
//     an extra result set "Microsoft SQL Server 2005 XML Showplan"), the ANSI
//     options drivers send, TRANSACTION ISOLATION LEVEL, LOCK_TIMEOUT.
//     SET NOEXEC, PARSEONLY and FMTONLY stop later statements from running
//     (FMTONLY returns column metadata only), ROWCOUNT limits results and
//     the rows DML changes, TEXTSIZE cuts max-type values (safety.go).
//     SET SHOWPLAN_XML ON is refused with Msg 102.
//   - Personas (persona.go, Options.Persona): SQL Server 2016/2017/2019/
//     2022/2025, Azure SQL Database and Managed Instance differ in version,
//     EngineEdition, ON SERVER/ON DATABASE, callstack_rva, event_file kinds
//     and permissions; docs/standin.md §5 has the table and sources.
//   - TLS (tls.go): a CA and certificate generated at Start, Options.Encryption
//     for SQL Server's Force Encryption settings, TDS 8.0 strict.
//   - RPC (prepared.go): sp_executesql with OUTPUT parameters, sp_prepare,
//     sp_execute, sp_prepexec, sp_unprepare; savepoints (savepoint.go).
//   - @@SPID, @@VERSION (by default SQL Server 2017 14.0.3192.2 on Linux, the build
//     whose wait_types map keys are in realdata), @@TRANCOUNT, SERVERPROPERTY
//     (ProductVersion, EngineEdition 3, ErrorLogFileName
//     /var/opt/mssql/log/errorlog, InstanceDefaultLogPath, ...), DB_ID,
//     DB_NAME, OBJECT_ID, OBJECT_NAME, HAS_PERMS_BY_NAME, IS_SRVROLEMEMBER,
//     fn_my_permissions, and the string functions the tracer's path
//     arithmetic uses (LEFT, LEN, CHARINDEX, PATINDEX, REVERSE, ...).
//   - Extended Events: CREATE/ALTER/DROP EVENT SESSION ... ON SERVER or ON
//     DATABASE with events, actions, predicates (AND/OR/NOT, comparisons,
//     LIKE/NOT LIKE on string sources, package0 comparator functions),
//     event SET attributes, targets package0.event_file (filename,
//     max_file_size, max_rollover_files) and package0.ring_buffer
//     (max_events_limit, max_memory), and every WITH option. Catalog:
//     sys.server_event_sessions (+ _events, _actions, _targets, _fields),
//     the database_* equivalents, sys.dm_xe_sessions, sys.dm_xe_session_targets
//     (ring_buffer target_data with <type> elements, event_file
//     EventFileTarget), sys.dm_xe_map_values (wait_types from the real SQL
//     2017 map, lock_mode, lock_resource_type, lock_owner_type,
//     event_opcode, log_op, log_context, ...), sys.dm_xe_objects.
//     sys.fn_xe_file_target_read_file(pattern, NULL, initial_file_name,
//     initial_offset) returns module_guid, package_guid, object_name,
//     event_data, file_name, file_offset, timestamp_utc; files are kept in
//     memory, named <name>_0_<FILETIME>.xel, written in buffers (one
//     file_offset per buffer, a buffer being at most a third of
//     MAX_MEMORY), flushed at STOP, when a buffer fills, or once
//     MAX_DISPATCH_LATENCY has passed; they survive DROP EVENT SESSION, as
//     files on disk do. Resuming with initial_file_name/initial_offset skips
//     that whole buffer. A relative file name goes to the instance log
//     directory; a file in a directory the emulated server lacks (anything
//     but /var/opt/mssql/log, /var/opt/mssql/data, /tmp and
//     Options.Directories; C:\x paths map to /x as on Linux) makes
//     STATE = START fail with Msg 25602.
//   - Live query progress (queryprofiles.go): sys.dm_exec_query_profiles
//     and sys.dm_exec_query_statistics_xml for the queries running now,
//     under the documented profiling rules; Options.PaceToWallClock makes
//     event time follow the wall clock (clock.go).
//   - Event files can also be read whole, as SQL Server allows: SELECT
//     BulkColumn FROM OPENROWSET(BULK N'<file>', SINGLE_BLOB) AS f returns a
//     file as binary .xel (rendered from the file's event XML by
//     Options.XELEncoder, which callers set to pkg/xe.EncodeXMLAsXEL: this
//     package does not import pkg/xe), refused with Msg 4834 without
//     ADMINISTER BULK OPERATIONS (Options.BulkPermission; the sysadmin has
//     it by default) and Msg 4860 for a missing file (or no encoder);
//     sys.dm_os_enumerate_filesystem(dir, pattern) lists the event files.
//     HAS_PERMS_BY_NAME and fn_my_permissions report the bulk permissions
//     the same way (HAS_PERMS_BY_NAME(NULL, NULL, p) tests a server
//     permission, as the documentation's example does).
//   - Event XML is what fn_xe_file_target_read_file returns (no <type>,
//     strings in CDATA, map fields with <value> and <text>, millisecond
//     timestamps with many events per millisecond, the plan as a child
//     element of <value> in query_post_execution_showplan); units follow
//     docs/design/event-fields.md (wait durations ms, lock durations µs, batch
//     duration/cpu µs). Columns that document marks [U] are only emitted
//     with Options.GuessedColumns.
//   - Scenarios (Scenarios(); `queryreplay standin --list-scenarios`):
//     29 named demo statements, each showing a lane or finding of the
//     product (spills, skew, blocking, grant waits, page splits,
//     read-ahead, call stacks…), in compare pairs where one hint or index
//     changes the plan. A scenario is data for its callers: nothing in the
//     stand-in looks at a statement's text to decide what it does (no
//     statement is special; another spelling of a scenario behaves the
//     same).
//   - Holds (hold.go): what a statement meets from other sessions is set
//     up by explicit control calls on the running stand-in, never by the
//     statement. Server.HoldLocks runs T-SQL as a real session (SPID 999,
//     login demo_blocker, its own transaction and locks) and leaves the
//     transaction open; Server.HoldWorkspaceMemory takes workspace memory
//     from the resource semaphore's pool. Each returns a Hold that ends —
//     the transaction rolls back, the memory returns — at Release, at the
//     end of its context, AfterWait after another session first waited on
//     it (so a demo shows a ~400 ms LCK_M_S wait without the caller timing
//     anything), or at its hard bound (Max, at most MaxHold). Any statement
//     that needs the lock or memory waits, whatever its spelling; none does
//     without a hold. PrepareScenario sets up a scenario's Blocker and
//     GrantHoldKB this way; the demo and every test that traces such a
//     scenario call it before the trace and release after. (A real second
//     go-mssqldb connection would do for locks, but not for held memory, and
//     its wait-triggered end would need the caller to time it; holds keep
//     both in the stand-in, where the waits are seen.)
//   - Plan cache (plancache.go): every statement compiled into a plan
//     (SELECT, INSERT, UPDATE, DELETE, MERGE), from any session, is an
//     entry of sys.dm_exec_query_stats / sys.dm_exec_sql_text, as on SQL
//     Server; bounded at 2,000 entries, least recently executed evicted
//     first; a restart empties it.
//   - Fault injection (Faults): drop the connection at a matching batch,
//     delay it, answer it with an error, drop logins — all from
//     internal/tds/tdsfault, a wrapper around this package's tds.Handler
//     that Running installs, so the executor never consults them; kill a
//     session (as KILL does: its transaction rolls back and its running
//     request — held by a Delay, in WAITFOR or waiting for a lock — is
//     aborted and never runs; the client finds the connection closed); and
//     a trigger that commits (EndTransactionIn, ReplaceTransactionIn), the
//     one fault inside the engine because it changes the session's
//     transaction after the batch ran (docs/standin.md §1.4);
//     Running.Restart drops every connection and keeps only event sessions
//     with STARTUP_STATE = ON running.
//
// # What is refused, and with which error
//
//   - Unknown statements and clauses: Msg 102/156 (Incorrect syntax near
//     ...). This includes PIVOT, OUTPUT, cursors, TRY/CATCH, FOR XML/JSON,
//     views, stored procedures (EXEC is Msg 2812)
//     and SET IMPLICIT_TRANSACTIONS/ANSI_DEFAULTS ON; savepoints (SAVE
//     TRANSACTION, TM save/rollback-to-savepoint requests). XML data type methods
//     (event_data.value(...)) are Msg 195: clients must shred event XML
//     themselves, as QueryReplay does.
//   - Unknown tables and views: Msg 208; columns Msg 207/209; functions
//     Msg 195; variables Msg 137; databases Msg 911 / 4060 at login.
//   - Event sessions: unknown event/action/target/predicate source Msg 25623;
//     histogram, pair_matching and event_counter targets Msg 25602 (the
//     stand-in does not emulate them); missing filename Msg 25642; unknown
//     attribute Msg 25629; duplicates Msg 25625/25631/25702; bad option
//     values Msg 25703/25632/25634; START/STOP twice Msg 25705/25704; a
//     missing session on ALTER/DROP Msg 15151; fn_xe_file_target_read_file
//     with no matching file Msg 25718 (SQL Server's behaviour for a pattern
//     matching nothing is unverified), unpaired initial arguments Msg 25719,
//     an offset that is not a buffer start Msg 25722.
//   - Wrong password or unknown login: 18456 (via tds.LoginError).
//   - Non-sysadmin logins (Options.ExtraLogins): fn_dblog Msg 229, DBCC
//     Msg 2571; event session DDL and the state DMVs as their granted
//     permissions allow (Options.ServerPermissions, DatabasePermissions;
//     permissions.go): CREATE EVENT SESSION Msg 297, ALTER/DROP Msg 15151,
//     server-state DMVs Msg 300, database-state DMVs Msg 262.
//
// # Packages
//
// The stand-in is split along its seams, each package saying in its doc
// comment what it must not do:
//
//   - sqlfront: the T-SQL front end (lexer, parser, statement and
//     expression trees, SQLError, SQLType). Syntax only, standard library
//     only.
//   - xevents: the Extended Events emulation that needs no executor
//     (catalog, sessions, predicates, event XML, in-memory .xel files). It
//     reaches the server only through the Instance and Values interfaces it
//     declares.
//   - engine: the query engine — the storage layout of the demo data, the
//     planner, the operators and what their work emits, actual plans,
//     values and evaluation. It imports only sqlfront and xevents and asks
//     the server through the interfaces it declares (Exec: Host, Events,
//     Buffers, Locks, Session, Catalog), which the request context
//     implements (exec_engine.go).
//   - this package: the server — connections, sessions and their SET
//     options, transactions and the lock manager, the buffer pool, system
//     views, personas, procedures, the demo data, when events fire and the
//     views over XE sessions, streaming results through the tds.Handler.
//
// # What it must not do
//
// It must not import pkg/xe or pkg/showplan (the parsers it is a test
// double for); it writes event XML and plans as text. It does not plan
// queries or run operators itself: the engine's Planner plans them and
// its RunCtx runs them (DML builds its write operators as engine
// PlanNodes), and whatever the engine needs back — locks, pages, events,
// session state — goes through engine.Exec, never through the engine
// reaching into this package. Sessions execute side
// by side (the server latch is given up every 256 rows, sooner when another
// session waits, and around network writes, and handed over in arrival
// order); a statement that needs a lock another transaction holds in an
// incompatible mode waits for it (READ COMMITTED readers for S page or key
// locks, writers for X key locks; NOLOCK and READ UNCOMMITTED do not wait),
// with LCK_M_* waits, SET LOCK_TIMEOUT (Msg 1222), cancellation, and
// deadlock detection (the requester closing the cycle is the victim: Msg
// 1205, its transaction rolled back). Updates, deletes and seeks re-read
// each row after locking it. Row versioning is not emulated; lock
// escalation only as far as the trace sees it: lock_escalation fires when
// one statement reaches 5,000 row or page locks on one index and no other
// session's lock would block the table lock, but the row locks are kept
// (escalation.go). Latch, columnstore and
// batch-mode events are accepted in session DDL but never fire; so are
// wait_completed and hash_spill_details.
// login, logout and attention do fire. %%lockres%% hashes have SQL Server's format but not
// its (undocumented) hash function. Event timestamps come from a simulated
// clock per session (clock.go): raised to the wall clock when the session's
// batch or query starts and when a real wait ends, advanced by simulated
// work otherwise, and never moved by another session's statements.
//
// # Why hand-written
//
// No Go library parses T-SQL (ScriptDom is .NET) or emulates SQL Server's
// catalog, Extended Events or showplan output, so the tokenizer, parser,
// engine and event writer are written here.
package standin
