package dashgen

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

func overview() *dashboard.DashboardBuilder {
	return base(OverviewUID, "QueryReplay exporter: health",
		"Is every SQL Server target polled, are events lost, and how much the exporter holds.", false).
		WithRow(dashboard.NewRowBuilder("Targets")).
		WithPanel(statPanel("Targets up", "none", "Targets whose last poll succeeded.", `sum by (target) (queryreplay_up{`+sel+`})`, 6)).
		WithPanel(redAtOne(statPanel("Targets down", "none", "Targets whose last poll failed (the exporter's /api/v1/targets shows why).", `sum by (target) (queryreplay_up{`+sel+`} == bool 0)`, 6))).
		WithPanel(statPanel("Last successful poll", "s", "Seconds since each target's last successful poll (a target that never polled has no value here; Targets down shows it).",
			`max by (target) (time() - (queryreplay_last_successful_poll_timestamp_seconds{`+sel+`} > 0))`, 6)).
		WithPanel(redAtOne(statPanel("Events lost (1h)", "none", "Events the sessions recorded but the exporter could not read (rolled-over files, overwritten ring buffers) or XE dropped.",
			`sum by (target) (increase(queryreplay_exporter_events_lost_total{`+sel+`}[1h])) + sum by (target) (increase(queryreplay_exporter_xe_dropped_events_total{`+sel+`}[1h]))`, 6))).
		WithPanel(series("Up by target", "none", "1 when the target's last poll succeeded.", 8, 12,
			query(`queryreplay_up{`+sel+`}`, "{{target}}"))).
		WithPanel(series("Poll duration (p95)", "s", "95th percentile of the polls' duration.", 8, 12,
			query(`histogram_quantile(0.95, sum by (target, le) (rate(queryreplay_exporter_poll_duration_seconds_bucket{`+sel+`}[$__rate_interval])))`, "{{target}}"))).
		WithRow(dashboard.NewRowBuilder("Events")).
		WithPanel(series("Events decoded", "cps", "Events read from each target's session, per second, by event.", 8, 12,
			query(`sum by (target, event) (rate(queryreplay_exporter_events_decoded_total{`+sel+`}[$__rate_interval]))`, "{{target}} {{event}}"))).
		WithPanel(series("Lost, dropped and duplicate events", "cps", "Lost: sequence gaps. Dropped: XE's own count. Duplicate: read twice after a failed poll, never counted twice.", 8, 12,
			query(`sum by (target) (rate(queryreplay_exporter_events_lost_total{`+sel+`}[$__rate_interval]))`, "{{target}} lost"),
			query(`sum by (target) (rate(queryreplay_exporter_xe_dropped_events_total{`+sel+`}[$__rate_interval]))`, "{{target}} dropped by XE"),
			query(`sum by (target) (rate(queryreplay_exporter_events_duplicate_total{`+sel+`}[$__rate_interval]))`, "{{target}} duplicate"))).
		WithPanel(series("Poll errors", "short", "Failed polls by the step that failed.", 8, 12,
			query(`sum by (target, step) (increase(queryreplay_exporter_poll_errors_total{`+sel+`}[$__rate_interval]))`, "{{target}} {{step}}"))).
		WithPanel(series("Session restarts", "short", "Times a session had to be created (dropped by someone) or started (a server restart).", 8, 12,
			query(`sum by (target, reason) (increase(queryreplay_exporter_session_restarts_total{`+sel+`}[$__rate_interval]))`, "{{target}} {{reason}}"))).
		WithRow(dashboard.NewRowBuilder("Cardinality")).
		WithPanel(series("Series held", "short", "Label sets each metric group holds (at most its label limit, plus the other series).", 8, 12,
			query(`sum by (target, group) (queryreplay_exporter_series{`+sel+`})`, "{{target}} {{group}}"))).
		WithPanel(series("Label folds", "short", "Label sets evicted past a group's limit into its other series.", 8, 12,
			query(`sum by (target, group) (increase(queryreplay_exporter_label_folds_total{`+sel+`}[$__rate_interval]))`, "{{target}} {{group}}")))
}

// spillsInRange is each top query's spills in the dashboard's range, > 0
// only. The gauge counts from the query's entry into the exporter's table:
// its value now less its value at the range's start, or, when it had no
// value then (a query new in the range) or its value fell (the exporter
// restarted, the query left the table and came back), its whole value now,
// all of it counted since. increase() would miss a new query's first
// spills: a series' first sample has no predecessor to increase from.
const spillsInRange = `(((queryreplay_top_query_spills{` + sel + `} - queryreplay_top_query_spills{` + sel + `} offset $__range) >= 0` +
	` or queryreplay_top_query_spills{` + sel + `}) > 0)`

func spills() *dashboard.DashboardBuilder {
	topQueries := table.NewPanelBuilder().Title("Top queries: spills in the range").
		Description("The queries that spilled in the selected time range, most first (statement from the plan cache, empty when it no longer holds it). Click a query hash or statement to replay it on the server it ran on (grafana_datasource).").
		Datasource(promDS()).Height(10).Span(24).
		WithTarget(prometheus.NewDataqueryBuilder().Datasource(promDS()).Format(prometheus.PromQueryFormatTable).Instant().
			Expr(`sort_desc(`+spillsInRange+` * on (job, instance, target, query_hash) group_left (database, statement, grafana_datasource) queryreplay_top_query_info{`+selDB+`,query_hash=~"$query_hash"})`)).
		WithTransformation(organize("spills")).
		OverrideByName("statement", replayLink()).
		OverrideByName("query_hash", replayLink())
	return base(SpillsUID, "QueryReplay exporter: spills",
		"Spills to tempdb by database and kind, their pages, and the queries behind them: from the spill alert to a replay in two clicks.", true).
		// an exemplar's link (provisioning/datasources/prometheus.yaml)
		// opens this dashboard on its query hash
		WithVariable(dashboard.NewTextBoxVariableBuilder("query_hash").Label("Query hash").
			Description("A query hash (0x…) to show in the top-query table; .* for all. Exemplar links set it.").
			DefaultValue(dashboard.StringOrMap{String: ref(".*")})).
		WithPanel(statPanel("Spills (range)", "none", "Spills to tempdb in the selected range.", `sum by (target) (increase(queryreplay_spills_total{`+selDB+`}[$__range]))`, 8)).
		WithPanel(statPanel("Tempdb pages written (range)", "none", "Pages spills wrote to tempdb in the selected range.", `sum by (target) (increase(queryreplay_spill_tempdb_pages_written_total{`+selDB+`}[$__range]))`, 8)).
		WithPanel(statPanel("Memory grant use", "percentunit", "Memory the queries used of what they were granted.",
			`sum by (target) (rate(queryreplay_memory_grant_used_bytes_total{`+selDB+`}[$__range])) / sum by (target) (rate(queryreplay_memory_grant_granted_bytes_total{`+selDB+`}[$__range]))`, 8)).
		WithPanel(series("Spills by database and kind", "cps", "Spills per second; the exemplars (dots) carry the query hash of a spill.", 9, 12,
			query(`sum by (target, database, kind) (rate(queryreplay_spills_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} {{kind}}").Exemplar(true))).
		WithPanel(series("Tempdb pages written and read by spills", "short", "Worktable and workfile pages per second.", 9, 12,
			query(`sum by (target, database, kind) (rate(queryreplay_spill_tempdb_pages_written_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} {{kind}} written"),
			query(`sum by (target, database, kind) (rate(queryreplay_spill_tempdb_pages_read_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} {{kind}} read"))).
		// "is it new?": the range's spills beside the same range a day
		// and a week before
		WithPanel(series("Spills now, a day ago, a week ago", "short", "Spills in each interval, and in the same interval 1 day and 7 days earlier: a spill that has no past is new.", 8, 24,
			query(`sum by (target, database) (increase(queryreplay_spills_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} now"),
			query(`sum by (target, database) (increase(queryreplay_spills_total{`+selDB+`}[$__rate_interval] offset 1d))`, "{{target}} {{database}} 1 day ago"),
			query(`sum by (target, database) (increase(queryreplay_spills_total{`+selDB+`}[$__rate_interval] offset 7d))`, "{{target}} {{database}} 7 days ago"))).
		WithPanel(topQueries).
		// the workload beside the spills: is the server busier, or did
		// one query change?
		WithPanel(series("Statements completed", "cps", "Completed statements per second (sql_statement_completed; QueryReplay's own traces are left out).", 8, 12,
			query(`sum by (target, database) (rate(queryreplay_statements_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}}"))).
		WithPanel(series("Statement CPU and elapsed time", "short", "Seconds of CPU and of elapsed time of completed statements, per second (average statements running / on CPU).", 8, 12,
			query(`sum by (target, database) (rate(queryreplay_statement_cpu_seconds_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} CPU"),
			query(`sum by (target, database) (rate(queryreplay_statement_duration_seconds_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} elapsed"))).
		WithPanel(series("Top queries' logical reads, since each entered the table", "short", "Logical reads of the top queries (queryreplay_top_query_logical_reads), the ten highest.", 8, 12,
			query(`topk(10, sum by (target, query_hash) (queryreplay_top_query_logical_reads{`+sel+`,query_hash=~"$query_hash"}))`, "{{target}} {{query_hash}}"))).
		WithPanel(series("Top queries: seconds since last seen", "s", "Seconds since each top query last completed (queryreplay_top_query_last_seen_timestamp_seconds): a query still spilling now is near 0.", 8, 12,
			query(`bottomk(10, time() - max by (target, query_hash) (queryreplay_top_query_last_seen_timestamp_seconds{`+sel+`,query_hash=~"$query_hash"}))`, "{{target}} {{query_hash}}"))).
		// The counter itself, not its rate: a query's series appears at its
		// first spill, and rate() cannot see a series' first increment.
		WithPanel(series("Spills by query hash, since the exporter started", "short", "The bounded per-query spill counter (label limit query_spills; the rest folds into other).", 8, 24,
			query(`topk(10, sum by (target, query_hash, kind) (queryreplay_query_spills_total{`+selDB+`,query_hash=~"$query_hash"}))`, "{{target}} {{query_hash}} {{kind}}"))).
		WithPanel(lostInRange())
}

// lostInRange is a stat of the events each target's session recorded but
// the exporter could not count in the selected range (lost, or dropped
// by XE): shown on every data dashboard, next to the numbers it makes
// smaller.
func lostInRange() *stat.PanelBuilder {
	return redAtOne(statPanel("Events lost (range)", "none",
		"Events the session recorded but the exporter could not read (rolled-over files, overwritten ring buffers) or XE dropped, in the selected range: the counts on this dashboard are short by these.",
		`sum by (target) (increase(queryreplay_exporter_events_lost_total{`+sel+`}[$__range])) + sum by (target) (increase(queryreplay_exporter_xe_dropped_events_total{`+sel+`}[$__range]))`, 24))
}

func waits() *dashboard.DashboardBuilder {
	waitTable := table.NewPanelBuilder().Title("Wait types in the range").Description("Wait time and count per wait type over the selected range.").
		Datasource(promDS()).Height(10).Span(24).
		WithTarget(prometheus.NewDataqueryBuilder().Datasource(promDS()).Format(prometheus.PromQueryFormatTable).Instant().
			Expr(`sort_desc(sum by (target, wait_type, wait_category) (increase(queryreplay_wait_seconds_total{` + selDB + `}[$__range])))`)).
		WithTransformation(organize("wait seconds"))
	return base(WaitsUID, "QueryReplay exporter: waits",
		"Waits from the XE session by category and type (benign idle waits are filtered at the source).", true).
		WithPanel(series("Wait time by category", "short", "Seconds waited per second, by wait category: the average number of tasks waiting (not a duration).", 9, 12,
			query(`sum by (target, wait_category) (rate(queryreplay_wait_seconds_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{wait_category}}"))).
		WithPanel(series("Top wait types by time", "short", "The ten wait types with the most wait time, in seconds waited per second (average tasks waiting).", 9, 12,
			query(`topk(10, sum by (target, wait_type) (rate(queryreplay_wait_seconds_total{`+selDB+`}[$__rate_interval])))`, "{{target}} {{wait_type}}"))).
		WithPanel(series("Waits by category", "cps", "Completed waits per second.", 8, 12,
			query(`sum by (target, wait_category) (rate(queryreplay_waits_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{wait_category}}"))).
		WithPanel(series("Signal wait share", "percentunit", "Share of wait time spent runnable, waiting for a scheduler (CPU pressure).", 8, 12,
			query(`sum by (target) (rate(queryreplay_wait_signal_seconds_total{`+selDB+`}[$__rate_interval])) / sum by (target) (rate(queryreplay_wait_seconds_total{`+selDB+`}[$__rate_interval]))`, "{{target}} signal share"))).
		WithPanel(waitTable).
		WithPanel(lostInRange())
}

func storage() *dashboard.DashboardBuilder {
	splitTable := table.NewPanelBuilder().Title("Page splits by object and index").Description("Page splits in the selected range.").
		Datasource(promDS()).Height(9).Span(24).
		WithTarget(prometheus.NewDataqueryBuilder().Datasource(promDS()).Format(prometheus.PromQueryFormatTable).Instant().
			Expr(`sort_desc(sum by (target, database, object, index, operation) (increase(queryreplay_page_splits_total{` + selDB + `}[$__range])))`)).
		WithTransformation(organize("splits"))
	return base(StorageUID, "QueryReplay exporter: reads, writes and splits",
		"Physical page I/O by object and index, page splits, statements' logical reads, log flushes.", true).
		WithPanel(series("Pages read from disk by object", "short", "physical_page_read per second, top ten objects and indexes; exemplars carry query hashes.", 9, 12,
			query(`topk(10, sum by (target, database, object, index) (rate(queryreplay_page_reads_total{`+selDB+`}[$__rate_interval])))`, "{{target}} {{database}} {{object}} {{index}}").Exemplar(true))).
		WithPanel(series("Pages written by object", "short", "physical_page_write per second, top ten objects and indexes.", 9, 12,
			query(`topk(10, sum by (target, database, object, index) (rate(queryreplay_page_writes_total{`+selDB+`}[$__rate_interval])))`, "{{target}} {{database}} {{object}} {{index}}"))).
		WithPanel(series("Page splits", "short", "Page splits per second by object, index and operation.", 8, 12,
			query(`topk(10, sum by (target, database, object, index, operation) (rate(queryreplay_page_splits_total{`+selDB+`}[$__rate_interval])))`, "{{target}} {{object}} {{index}} {{operation}}"))).
		WithPanel(series("Statements' logical reads", "short", "Logical reads per second of completed statements, by database.", 8, 12,
			query(`sum by (target, database) (rate(queryreplay_statement_logical_reads_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}}").Exemplar(true))).
		WithPanel(series("Log flushes", "Bps", "Bytes written by log flushes per second.", 8, 12,
			query(`sum by (target, database) (rate(queryreplay_log_flush_bytes_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}}"))).
		WithPanel(series("Memory grants", "bytes", "Memory granted to and used by the queries that completed in each interval (bytes per interval, not a throughput).", 8, 12,
			query(`sum by (target, database) (increase(queryreplay_memory_grant_granted_bytes_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} granted"),
			query(`sum by (target, database) (increase(queryreplay_memory_grant_used_bytes_total{`+selDB+`}[$__rate_interval]))`, "{{target}} {{database}} used"))).
		WithPanel(splitTable).
		WithPanel(lostInRange())
}

// replayQuery is the QueryReplay datasource's query (src/datasource/types.ts
// ReplayQuery): the batch and database come from the dashboard variables.
type replayQuery struct {
	RefID      string               `json:"refId"`
	Datasource *dashboardDataSource `json:"datasource,omitempty"`
	SQL        string               `json:"sql"`
	QueryHash  string               `json:"queryHash"`
	Database   string               `json:"database"`
}

// replayLink is the data link from a top query to its replay.
func replayLink() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{Id: "links", Value: []map[string]any{{
		"title": "Replay this query on its server", "url": replayLinkTemplate, "targetBlank": false,
	}}}}
}

type dashboardDataSource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func (replayQuery) ImplementsDataqueryVariant()          {}
func (q replayQuery) Equals(o variants.Dataquery) bool   { r, ok := o.(replayQuery); return ok && r == q }
func (replayQuery) DataqueryType() string                { return QueryReplayType }
func (replayQuery) Validate() error                      { return nil }
func (q replayQuery) Build() (variants.Dataquery, error) { return q, nil }

func replay() *dashboard.DashboardBuilder {
	dsVar := "${" + ReplayDatasourceVar + "}"
	ds := common.DataSourceRef{Type: ref(QueryReplayType), Uid: ref(dsVar)}
	q := replayQuery{RefID: "A", Datasource: &dashboardDataSource{Type: QueryReplayType, UID: dsVar}, SQL: "${sql}", QueryHash: "${query_hash}", Database: "${database}"}
	panel := dashboard.NewPanelBuilder().Type(ReplayPanelType).Title("Replay").
		Description("The statement traced in a private Extended Events session: every page read, lock, wait, spill and split at its own microsecond, tied to the plan operator that caused it.").
		Datasource(ds).Height(24).Span(24).WithTarget(q)
	return dashboard.NewDashboardBuilder("QueryReplay: replay").Uid(ReplayUID).
		Description("Trace one statement and watch it execute. The exporter's dashboards link here with the query hash, database and server filled in.").
		Tags([]string{dashboardTag, "sqlserver"}).Time("now-5m", "now").Timezone("browser").
		Link(dashboard.NewDashboardLinkBuilder("QueryReplay").Type(dashboard.DashboardLinkTypeDashboards).Tags([]string{dashboardTag}).AsDropdown(true)).
		// A trace runs only when asked (docs/frames.md §1): this link asks, for
		// the statement in the variables now and each one typed after.
		Link(dashboard.NewDashboardLinkBuilder("Trace the statement").Type(dashboard.DashboardLinkTypeLink).
			Url("/d/" + ReplayUID + "?" + RunLinkParam + "=1").IncludeVars(true).KeepTime(true).Icon("bolt").
			Tooltip("Run the statement in a trace now; refreshing the page serves the stored trace")).
		WithVariable(dashboard.NewDatasourceVariableBuilder(ReplayDatasourceVar).Label("Server").Type(QueryReplayType).
			Description("The QueryReplay datasource (one per SQL Server) to trace on; the exporter's links choose the server the query ran on.").
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: ref("QueryReplay")},
				Value: dashboard.StringOrArrayOfString{String: ref(QueryReplayUID)}})).
		WithVariable(dashboard.NewTextBoxVariableBuilder("query_hash").Label("Query hash").
			Description("A query hash (0x and 16 hex digits): the datasource looks its statement up (plan cache, else Query Store) with its parameters' sniffed values. Leave sql empty.")).
		WithVariable(dashboard.NewTextBoxVariableBuilder("sql").Label("Statement").
			Description("The T-SQL batch to trace (modifications run in a transaction that is always rolled back); or leave it empty and give a query hash.")).
		WithVariable(dashboard.NewTextBoxVariableBuilder("database").Label("Database").
			Description("The database to run it in; empty: the datasource's default.")).
		WithPanel(panel)
}
