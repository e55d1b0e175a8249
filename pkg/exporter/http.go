package exporter

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// HTTP paths the exporter serves.
const (
	MetricsPath    = "/metrics"
	TopQueriesPath = "/api/v1/top-queries"
	TargetsPath    = "/api/v1/targets"
	HealthyPath    = "/-/healthy"
	ReadyPath      = "/-/ready"
)

// HandlerOptions configures HandlerWith.
type HandlerOptions struct {
	// Version is shown on the landing page and in queryreplay_build_info.
	Version string
	// MetricsPath serves the metrics (default MetricsPath).
	MetricsPath string
	// Reload, when set, serves POST /-/reload (ReloadPath) with it.
	Reload func() error
}

// ReloadPath re-reads the configuration (POST), as Prometheus's own does.
const ReloadPath = "/-/reload"

// Handler is HandlerWith the default metrics path and no reload.
func (e *Exporter) Handler(version string) (http.Handler, error) {
	return e.HandlerWith(HandlerOptions{Version: version})
}

// HandlerWith returns the exporter's HTTP handler: the metrics (Prometheus
// text or OpenMetrics with exemplars, by content negotiation) with the
// handler's own promhttp_* metrics, the landing page, /-/healthy,
// /-/ready, /-/reload and the JSON tables. TLS and basic auth wrap it in
// exporter-toolkit's web.ListenAndServe.
func (e *Exporter) HandlerWith(o HandlerOptions) (http.Handler, error) {
	if o.MetricsPath == "" {
		o.MetricsPath = MetricsPath
	}
	if !strings.HasPrefix(o.MetricsPath, "/") || o.MetricsPath == "/" {
		return nil, fmt.Errorf("metrics path %q must start with / and name a page", o.MetricsPath)
	}
	if err := e.registerBuildInfo(o.Version); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(o.MetricsPath, promhttp.InstrumentMetricHandler(e.reg, promhttp.HandlerFor(e.gatherer(), promhttp.HandlerOpts{
		EnableOpenMetrics:   true,
		ErrorLog:            slog.NewLogLogger(e.log.Handler(), slog.LevelError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             30 * time.Second,
	})))
	if o.Reload != nil {
		mux.HandleFunc(ReloadPath, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost && r.Method != http.MethodPut {
				w.Header().Set("Allow", "POST, PUT")
				http.Error(w, "use POST to reload the configuration", http.StatusMethodNotAllowed)
				return
			}
			if err := o.Reload(); err != nil {
				http.Error(w, "reload failed: "+err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintln(w, "Reloaded")
		})
	}
	mux.HandleFunc(HealthyPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "Healthy")
	})
	mux.HandleFunc(ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ok, waiting := e.Ready(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			targets, _, _ := e.current()
			fmt.Fprintf(w, "Not ready: %d of %d targets have not finished their first poll\n", waiting, len(targets))
			return
		}
		fmt.Fprintln(w, "Ready")
	})
	mux.HandleFunc(TopQueriesPath, e.serveTopQueries)
	mux.HandleFunc(TargetsPath, e.serveTargets)
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "QueryReplay exporter",
		Description: "Reads, waits, spills and page splits from a light Extended Events session per SQL Server, as Prometheus metrics.",
		Version:     o.Version,
		// no pprof links: the exporter does not serve /debug/pprof
		Profiling: "false",
		Links: []web.LandingLinks{
			{Address: o.MetricsPath, Text: "Metrics"},
			{Address: TopQueriesPath, Text: "Top queries", Description: "per target: the queries that spill and read the most, with replay links"},
			{Address: TargetsPath, Text: "Targets", Description: "poll status of each target"},
			{Address: HealthyPath, Text: "Health"},
			{Address: ReadyPath, Text: "Readiness"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("landing page: %w", err)
	}
	mux.Handle("/", landing)
	return mux, nil
}

// TopQueryJSON is one row of /api/v1/top-queries.
type TopQueryJSON struct {
	QueryHash          string    `json:"query_hash"`
	Database           string    `json:"database"`
	Statement          string    `json:"statement,omitempty"`
	StatementTruncated bool      `json:"statement_truncated,omitempty"`
	Spills             uint64    `json:"spills"`
	SpillPages         uint64    `json:"spill_tempdb_pages_written"`
	LogicalReads       uint64    `json:"logical_reads"`
	Executions         uint64    `json:"executions"`
	LastSeen           time.Time `json:"last_seen"`
	// ReplayURL opens the replay dashboard on the target's datasource with
	// the query hash and database
	// filled in; empty until the statement is known.
	ReplayURL string `json:"replay_url,omitempty"`
}

// TargetTopJSON is one target's table.
type TargetTopJSON struct {
	Target  string         `json:"target"`
	Queries []TopQueryJSON `json:"queries"`
}

// TopQueries returns every target's top-query table (or one target's).
func (e *Exporter) TopQueries(only string) []TargetTopJSON {
	out := []TargetTopJSON{}
	targets, _, cfg := e.current()
	for _, t := range targets {
		if only != "" && t.cfg.Name != only {
			continue
		}
		t.mu.Lock()
		tt := TargetTopJSON{Target: t.cfg.Name, Queries: []TopQueryJSON{}}
		for _, q := range t.top.top() {
			row := TopQueryJSON{QueryHash: formatQueryHash(q.QueryHash), Database: q.Database, Statement: q.Statement,
				StatementTruncated: q.Truncated, Spills: q.Spills, SpillPages: q.SpillPages, LogicalReads: q.LogicalReads,
				Executions: q.Executions, LastSeen: q.LastSeen.UTC()}
			row.ReplayURL = replayPath(cfg.Global.GrafanaURL, row.QueryHash, q.Database, t.cfg.GrafanaDatasource)
			tt.Queries = append(tt.Queries, row)
		}
		t.mu.Unlock()
		out = append(out, tt)
	}
	return out
}

func (e *Exporter) serveTopQueries(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"targets": e.TopQueries(r.URL.Query().Get("target"))})
}

// TargetStatusJSON is one row of /api/v1/targets.
type TargetStatusJSON struct {
	Target      string    `json:"target"`
	Session     string    `json:"session"`
	Up          bool      `json:"up"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
}

func (e *Exporter) serveTargets(w http.ResponseWriter, _ *http.Request) {
	out := []TargetStatusJSON{}
	targets, _, _ := e.current()
	for _, t := range targets {
		t.mu.Lock()
		out = append(out, TargetStatusJSON{Target: t.cfg.Name, Session: t.st.session, Up: t.st.up,
			LastSuccess: t.st.lastSuccess.UTC(), LastError: t.st.lastError})
		t.mu.Unlock()
	}
	writeJSON(w, map[string]any{"targets": out})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
