package exporter

import (
	"github.com/prometheus/client_golang/prometheus"
)

// namespace prefixes every metric. Server-side counters are
// queryreplay_<name>; the exporter's own are queryreplay_exporter_<name>.
const namespace = "queryreplay"

// Label values the exporter writes itself.
const (
	// labelOther is the value every foldable label takes in the series that
	// collects the label sets evicted past a group's limit.
	labelOther = "other"
	// labelUnknown names what could not be resolved (a database id with no
	// name, a page whose object was not looked up).
	labelUnknown = "unknown"
)

// A metric group is a set of counters that share one label set (after
// target), one label limit and one LRU: the waits group publishes
// waits_total, wait_seconds_total and wait_signal_seconds_total for each
// (database, wait_type, wait_category).
type groupDef struct {
	name   string
	labels []string
	// keep lists the labels that survive folding: they come from small,
	// closed sets (a wait category, a spill kind), so the "other" series of
	// each value stays apart.
	keep    []string
	metrics []metricDef
}

type metricDef struct {
	name, help string
	// exemplar: the series carries an OpenMetrics exemplar with the query
	// hash of its latest event.
	exemplar bool
	fqName   string
}

// Metric group names (label_limits keys).
const (
	mgPages       = "pages"
	mgWaits       = "waits"
	mgSpills      = "spills"
	mgQuerySpills = "query_spills"
	mgSplits      = "splits"
	mgMemory      = "memory"
	mgLog         = "log"
	mgStatements  = "statements"
)

var groupDefs = []*groupDef{
	{name: mgPages, labels: []string{"database", "object", "index"}, metrics: []metricDef{
		{name: "page_reads_total", exemplar: true, help: "Pages read from disk (sqlserver.physical_page_read), by database, object (schema.table) and index; the exemplar carries the query hash of the latest read."},
		{name: "page_writes_total", help: "Pages written to disk (sqlserver.physical_page_write), by database, object and index."},
	}},
	{name: mgWaits, labels: []string{"database", "wait_type", "wait_category"}, keep: []string{"wait_category"}, metrics: []metricDef{
		{name: "waits_total", help: "Completed waits (sqlos.wait_info End or wait_completed events) by database, wait type and wait category."},
		{name: "wait_seconds_total", help: "Time spent waiting, in seconds (XE reports whole milliseconds: a wait shorter than 1 ms adds 0, see waits_below_1ms_total), by database, wait type and wait category."},
		{name: "wait_signal_seconds_total", help: "Signal wait time (runnable, waiting for a scheduler), in seconds, by database, wait type and wait category."},
		{name: "waits_below_1ms_total", help: "Completed waits that XE reported as 0 ms (its wait durations are whole milliseconds), by database, wait type and wait category: counted in waits_total, they add nothing to wait_seconds_total, which is a lower bound."},
	}},
	{name: mgSpills, labels: []string{"database", "kind"}, keep: []string{"kind"}, metrics: []metricDef{
		{name: "spills_total", exemplar: true, help: "Spills to tempdb (sort_warning, hash_warning, exchange_spill events) by database and kind (sort, hash, exchange); the exemplar carries the query hash of the latest spill."},
		{name: "spill_tempdb_pages_written_total", help: "Tempdb pages written by spills (worktable and workfile physical writes the events report), by database and kind."},
		{name: "spill_tempdb_pages_read_total", help: "Tempdb pages read back by spills (worktable physical reads the events report), by database and kind."},
	}},
	{name: mgQuerySpills, labels: []string{"database", "query_hash", "kind"}, keep: []string{"kind"}, metrics: []metricDef{
		{name: "query_spills_total", help: "Spills to tempdb by database, query hash (sqlserver.query_hash as 0x + 16 hex digits) and kind; bounded by the query_spills label limit."},
	}},
	{name: mgSplits, labels: []string{"database", "object", "index", "operation"}, keep: []string{"operation"}, metrics: []metricDef{
		{name: "page_splits_total", help: "Page splits (sqlserver.page_split) by database, object, index and split operation (SPLIT_FOR_INSERT, SPLIT_FOR_UPDATE, ...)."},
	}},
	{name: mgMemory, labels: []string{"database"}, metrics: []metricDef{
		{name: "memory_grants_total", help: "Query memory grants reported by sqlserver.query_memory_grant_usage, by database."},
		{name: "memory_grant_granted_bytes_total", help: "Memory granted to queries, in bytes (the events report KB), by database."},
		{name: "memory_grant_used_bytes_total", help: "Memory the queries used of their grants, in bytes, by database."},
	}},
	{name: mgLog, labels: []string{"database"}, metrics: []metricDef{
		{name: "log_flushes_total", help: "Transaction log flushes (sqlserver.log_flush_complete) by database."},
		{name: "log_flush_bytes_total", help: "Bytes written by log flushes, by database."},
	}},
	{name: mgStatements, labels: []string{"database"}, metrics: []metricDef{
		{name: "statements_total", help: "Completed statements (sqlserver.sql_statement_completed) by database."},
		{name: "statement_logical_reads_total", exemplar: true, help: "Logical reads (pages) of completed statements by database; the exemplar carries the query hash of the latest statement."},
		{name: "statement_physical_reads_total", help: "Physical reads (pages) of completed statements by database."},
		{name: "statement_writes_total", help: "Pages written by completed statements, by database."},
		{name: "statement_duration_seconds_total", help: "Elapsed time of completed statements, in seconds (XE reports microseconds), by database."},
		{name: "statement_cpu_seconds_total", help: "CPU time of completed statements, in seconds (XE reports microseconds), by database."},
	}},
}

// metricNames lists every metric the exporter can publish (tests check
// dashboards and rules against it).
var metricNames []string

// newDesc makes a descriptor of queryreplay_<subsystem>_<name> and records
// its name.
func newDesc(subsystem, name, help string, labels []string, constLabels prometheus.Labels) *prometheus.Desc {
	fq := prometheus.BuildFQName(namespace, subsystem, name)
	metricNames = append(metricNames, fq)
	return prometheus.NewDesc(fq, help, labels, constLabels)
}

// MetricNames returns the names of every metric the exporter publishes
// (histograms without their _bucket, _sum and _count suffixes).
func MetricNames() []string {
	out := append([]string(nil), metricNames...)
	for _, g := range groupDefs {
		for _, m := range g.metrics {
			out = append(out, m.fqName)
		}
	}
	return out
}

func metricGroupNames() []string {
	out := make([]string, len(groupDefs))
	for i, g := range groupDefs {
		out[i] = g.name
	}
	return out
}

func groupByName(name string) *groupDef {
	for _, g := range groupDefs {
		if g.name == name {
			return g
		}
	}
	return nil
}

func init() {
	for _, g := range groupDefs {
		for i := range g.metrics {
			m := &g.metrics[i]
			m.fqName = prometheus.BuildFQName(namespace, "", m.name)
		}
	}
}

// The exporter's own metrics, and the per-target health gauges.
var (
	descUp = newDesc("", "up",
		"1 when the target's last poll succeeded (connected, session running, events read), 0 otherwise.", []string{"target"}, nil)
	descLastSuccess = newDesc("", "last_successful_poll_timestamp_seconds",
		"Unix time of the target's last successful poll; 0 before the first.", []string{"target"}, nil)
	descDecoded = newDesc("exporter", "events_decoded_total",
		"Events read from the target's session and decoded, by event name.", []string{"target", "event"}, nil)
	descMalformed = newDesc("exporter", "events_malformed_total",
		"Event rows that could not be decoded and were skipped.", []string{"target"}, nil)
	descLost = newDesc("exporter", "events_lost_total",
		"Events the session recorded but the exporter never saw: package0.event_sequence gaps (a rolled-over file, an overwritten ring buffer) and a kept session's backlog (recorded while no exporter ran).", []string{"target"}, nil)
	descDuplicate = newDesc("exporter", "events_duplicate_total",
		"Events read twice (a poll resumed after a failure) and dropped by event_sequence, so never counted twice.", []string{"target"}, nil)
	descXEDropped = newDesc("exporter", "xe_dropped_events_total",
		"Events Extended Events itself dropped (sys.dm_xe_sessions.dropped_event_count; ALLOW_SINGLE_EVENT_LOSS), summed over session restarts.", []string{"target"}, nil)
	descSessionStarts = newDesc("exporter", "session_restarts_total",
		"Times the exporter had to create or start its session, by reason (created: missing; started: stopped, e.g. after a server restart).", []string{"target", "reason"}, nil)
	descPollErrors = newDesc("exporter", "poll_errors_total",
		"Failed polls, by the step that failed (connect, session, read, names).", []string{"target", "step"}, nil)
	descPollDuration = newDesc("exporter", "poll_duration_seconds",
		"Duration of the target's polls, in seconds.", []string{"target"}, nil)
	descFolds = newDesc("exporter", "label_folds_total",
		"Label sets evicted past a metric group's label limit and folded into its \"other\" series.", []string{"target", "group"}, nil)
	descSeries = newDesc("exporter", "series",
		"Label sets a metric group currently holds for the target (at most its limit, plus the other series).", []string{"target", "group"}, nil)
	descLinks = newDesc("exporter", "links_info",
		"Always 1: the absolute URLs the alert rules link to (global.grafana_url, global.runbook_url).", []string{"grafana_url", "runbook_url"}, nil)
	descTopInfo = newDesc("", "top_query_info",
		"The target's top queries by spills, then logical reads (the JSON table at /api/v1/top-queries): one series per query with its statement text from the plan cache (empty when the plan cache no longer holds it) and the Grafana datasource of the target (grafana_datasource), for the dashboard's replay links, which carry the query hash. Bounded by top_queries.size.", []string{"target", "query_hash", "database", "statement", "grafana_datasource"}, nil)
	descTopSpills = newDesc("", "top_query_spills",
		"Spills of each top query since it entered the table.", []string{"target", "query_hash"}, nil)
	descTopReads = newDesc("", "top_query_logical_reads",
		"Logical reads of each top query since it entered the table.", []string{"target", "query_hash"}, nil)
	descTopLastSeen = newDesc("", "top_query_last_seen_timestamp_seconds",
		"Unix time each top query was last seen in an event.", []string{"target", "query_hash"}, nil)
)
