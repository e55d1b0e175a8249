// Package exporter is QueryReplay's Prometheus exporter: a long-running,
// light Extended Events session on each configured SQL Server whose events
// are read incrementally and published as aggregated counters — page reads
// and writes by object and index, waits by type and category, spills by
// kind with their tempdb pages, page splits by object, index and operation,
// memory grants, log flushes and statements — with a bounded table of the
// queries that spill and read the most, whose rows link to the replay
// dashboard. No DMV-polling exporter publishes these (docs/design/exporter.md).
//
// # How a target is polled
//
// Each target has one session per exporter process,
// queryreplay_exporter_<name>_<owner id>, owned by an idle connection of
// the process (owner.go) so that two exporters on one server never touch
// each other's, and made anew at startup from the configuration (event groups, database and wait
// predicates resolved through the server's sys.dm_xe_map_values into key
// ranges). Every poll checks the session in sys.dm_xe_sessions — a session
// dropped by someone is created again, a stopped one (a server restart) is
// started — and reads what is new:
//
//   - event_file: sys.fn_xe_file_target_read_file from a bookmark
//     (initial_file_name/initial_offset: the last buffer read to its end).
//     A half-read buffer is read again and event_sequence drops what was
//     already counted; a bookmarked file that rolled over is skipped up to
//     client-side; sequence gaps are counted as lost.
//   - ring_buffer (Azure SQL Database, Managed Instance, or by choice): the
//     target_data document, events already counted recognised by
//     event_sequence within one session start.
//
// Events are decoded with pkg/xe (reused buffers, no allocation per event)
// and aggregated per poll by numeric identity; names (databases, HoBTs,
// pages → objects) are looked up once per poll in bounded, expiring caches;
// the batch is then merged into counters that only grow for as long as the
// process runs, whatever the server does. Each metric group keeps at most
// its label limit of label sets in an LRU (golang-lru); an evicted set
// folds into the group's "other" series and counts in
// queryreplay_exporter_label_folds_total, so memory stays bounded under
// churn and no count is lost.
//
// The exporter's connections carry the application name
// queryreplay-exporter, which its session's predicate excludes. At startup
// events left in files by earlier sessions are skipped (never counted in
// one burst); on a clean shutdown the session is dropped unless
// drop_session_on_shutdown is false, when it is stopped and started again to
// mark where this process stopped reading, and the next process counts
// what the session recorded since as lost (backlog.go). The package never touches a session
// it did not name, in particular not the tracer's queryreplay_<id>
// sessions, and drops another exporter's session only when its name has
// the exact exporter form and its owner connection is gone (a crashed
// exporter's leftovers); SIGHUP or /-/reload apply a new configuration
// without losing counts (reload.go); probes run through the tracer (a Tracing passed
// to New with WithTracing, so this package does not import pkg/tracer) with its safety rules
// (modifications refused).
//
// # Decisions
//
//   - No HTTP 500 when a server is down: one exporter serves many targets,
//     and each target's queryreplay_up says whether its last poll worked;
//     the counters keep their values.
//   - Query hashes are exemplars (OpenMetrics) on spills_total,
//     page_reads_total and statement_logical_reads_total, a bounded label
//     on query_spills_total, and rows of the top-query table; statement
//     text appears only in queryreplay_top_query_info (at most
//     top_queries.size series per target, capped length) and in the JSON,
//     never in logs.
//   - Metric names follow Prometheus conventions (units in names, _total
//     counters); promtool check metrics is part of the tests.
//
// What this package must NOT do: log DSNs, passwords, query text or
// results; change data (its only statements are session DDL and reads of
// DMVs and catalog views); parse event XML itself (pkg/xe does); drop or
// alter a session whose name is not one of its targets'.
//
// Hand-written here: the bookmark/sequence bookkeeping and the label-limited
// store (no library does either); everything else uses client_golang,
// exporter-toolkit, golang-lru/v2, go-mssqldb and go.yaml.in/yaml/v3.
package exporter
