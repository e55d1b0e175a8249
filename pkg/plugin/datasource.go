// Package plugin is QueryReplay's Grafana backend datasource: it turns
// Grafana's QueryData, CheckHealth and CallResource calls into traces run by
// pkg/tracer, kept in pkg/tracestore and shaped by pkg/frames
// (docs/frames.md is the contract).
//
// It is an adapter: it owns the Grafana SDK glue (instance settings and
// connectors, the query model, per-query errors with their error source,
// limits, health, resources) and must not parse events or plans, build
// timelines or talk TDS itself; those belong to the lower layers. It never
// logs secrets, query text or results.
package plugin

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tracestore"
)

// PluginID is the nested datasource's id in src/datasource/plugin.json.
const PluginID = "queryreplay-sqlserver-datasource"

var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ backend.CallResourceHandler   = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// sweepTimeout bounds the orphan sweep at start.
const sweepTimeout = time.Minute

// Datasource is one configured datasource instance. Settings problems are
// kept rather than failing instance creation, so that CheckHealth and every
// query can report them to the admin instead of a generic plugin error.
type Datasource struct {
	settings    Settings
	settingsErr error
	log         log.Logger

	db     *sql.DB
	tracer *tracer.Tracer
	store  *tracestore.Store
	slots  chan struct{}
	res    backend.CallResourceHandler

	// sweepDone closes when the start-up orphan sweep has finished.
	sweepDone  chan struct{}
	sweepCount int
	sweepErr   error

	// progress, when set, receives the tracer's progress reports (the
	// benchmarks time the steps with it).
	progress func(tracer.Progress)

	// runs remembers the run requests of trace queries (runonce.go).
	runs *runLedger

	runtimeMu sync.Mutex
	runtime   map[string]runtimeEntry // plan counters by trace id

	// uid is the datasource's uid (its live channels' namespace); lives
	// its live traces (live.go).
	uid   string
	lives *liveRegistry

	stop context.CancelFunc
	// trace runs one trace: d.tracer.Trace, replaced by tests that play
	// the producer of live updates.
	trace func(context.Context, tracer.Options) (*bundle.Bundle, error)
	// opener dials the tracer's connections (tracer.ConnectorOpener).
	opener tracer.Opener
}

// NewDatasource is the instance factory given to datasource.Manage.
func NewDatasource(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	logger := log.DefaultLogger.With("dsUid", s.UID)
	cfg, err := LoadSettings(s)
	d := &Datasource{settings: cfg, settingsErr: err, log: logger, sweepDone: make(chan struct{}), runtime: map[string]runtimeEntry{},
		runs: newRunLedger(), uid: s.UID, lives: newLiveRegistry()}
	d.res = httpadapter.New(d.routes())
	if err != nil {
		close(d.sweepDone)
		return d, nil
	}
	if err := d.open(s.UID); err != nil {
		d.settingsErr = err
		close(d.sweepDone)
		return d, nil
	}
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = stop
	go d.sweep(bg)
	return d, nil
}

func (d *Datasource) open(uid string) error {
	c, err := d.settings.Connector()
	if err != nil {
		return err
	}
	d.db = sql.OpenDB(c)
	d.db.SetMaxIdleConns(0) // every trace connection is discarded after use
	// Traces dial their own connections with network read deadlines (a
	// silent network cannot hang a trace past its timeout); d.db serves
	// the health check and the resources.
	d.opener = tracer.ConnectorOpener{New: d.settings.traceConnector}
	d.tracer = tracer.New(d.opener, d.settings.Policy(), newSlog(d.log))
	d.trace = d.tracer.Trace
	d.slots = make(chan struct{}, d.settings.maxConcurrent())
	store, err := openStore(context.Background(), d.settings.TraceStore, uid, newSlog(d.log))
	if err != nil {
		d.db.Close()
		return fmt.Errorf("trace store: %w", err)
	}
	d.store = store
	return nil
}

// sweep drops queryreplay_* sessions a crashed earlier instance left
// behind (only those older than the tracer's grace period).
func (d *Datasource) sweep(ctx context.Context) {
	defer close(d.sweepDone)
	ctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	n, err := d.tracer.SweepOrphans(ctx, tracer.DefaultGracePeriod)
	d.sweepCount, d.sweepErr = n, err
	if err != nil {
		d.log.Warn("orphan sweep at start failed", "target", d.settings.Redacted(), "error", err)
	} else if n > 0 {
		d.log.Info("dropped orphaned trace sessions at start", "count", n)
	}
	if _, err := d.store.Enforce(ctx); err != nil {
		d.log.Warn("trace store retention at start failed", "error", err)
	}
}

// Dispose releases the instance's resources when Grafana replaces it.
func (d *Datasource) Dispose() {
	if d.stop != nil {
		d.stop()
	}
	<-d.sweepDone
	if d.db != nil {
		d.db.Close()
	}
	if d.store != nil {
		d.store.Close()
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// StoreDirectory is where a datasource's traces persist when no bucket is
// configured: traceStore.directory, else $GF_PLUGIN_TRACE_STORE_DIR (the
// ini setting [plugin.queryreplay-sqlserver-datasource] trace_store_dir),
// else $GF_PATHS_DATA/queryreplay/traces (Grafana's data path; the SDK has
// no API for it and Grafana forwards it only where the environment is
// inherited, as in its container images), else the user cache directory;
// one sub-directory per datasource uid.
func StoreDirectory(ts TraceStoreSettings, uid string) string {
	base := ts.Directory
	if base == "" {
		base = os.Getenv("GF_PLUGIN_TRACE_STORE_DIR")
	}
	if base == "" {
		if d := os.Getenv("GF_PATHS_DATA"); d != "" {
			base = filepath.Join(d, "queryreplay", "traces")
		}
	}
	if base == "" {
		if d, err := os.UserCacheDir(); err == nil {
			base = filepath.Join(d, "queryreplay", "traces")
		} else {
			base = filepath.Join(os.TempDir(), "queryreplay-traces")
		}
	}
	if uid == "" {
		uid = "default"
	}
	return filepath.Join(base, unsafeName.ReplaceAllString(uid, "_"))
}

func openStore(ctx context.Context, ts TraceStoreSettings, uid string, l *slog.Logger) (*tracestore.Store, error) {
	var backendStore tracestore.Backend
	if ts.BucketURL != "" {
		prefix := unsafeName.ReplaceAllString(cmpOr(uid, "default"), "_")
		b, err := tracestore.OpenBucket(ctx, ts.BucketURL, tracestore.BucketOptions{Prefix: prefix,
			AccessKeyID: ts.AccessKey, SecretAccessKey: ts.SecretKey})
		if err != nil {
			return nil, err
		}
		backendStore = b
	} else {
		dir, err := tracestore.OpenDir(StoreDirectory(ts, uid))
		if err != nil {
			return nil, err
		}
		backendStore = dir
	}
	o := tracestore.Options{MaxTraces: ts.MaxTraces, MaxMemoryBytes: int64(ts.MaxMemoryMB) << 20,
		MaxAge: time.Duration(ts.MaxAgeHours) * time.Hour, MaxDiskBytes: int64(ts.MaxDiskMB) << 20,
		BundleLimit: ts.bundleLimit(), Logger: l}
	s, err := tracestore.New(backendStore, o)
	if err != nil {
		backendStore.Close()
		return nil, err
	}
	return s, nil
}

// QueryData answers every query on its own: one query's failure never hides
// another's result. Queries run concurrently; traces among them wait for a
// slot (maxConcurrentTraces).
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	who := callerOf(req.PluginContext.User)
	streams := liveWatched(req)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, q := range req.Queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := d.guardedQuery(ctx, who, q, streams)
			mu.Lock()
			resp.Responses[q.RefID] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return resp, nil
}

// guardedQuery is query with a panic turned into that query's error: one
// query's bug must not take down the plugin process and every other
// query with it. The query's own deferred cleanup (a trace's DROP EVENT
// SESSION and ROLLBACK) has run by the time the panic reaches here.
func (d *Datasource) guardedQuery(ctx context.Context, who caller, q backend.DataQuery, streams bool) (r backend.DataResponse) {
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("query panicked", "refId", q.RefID, "queryType", q.QueryType, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = response(q.RefID, pluginErr(backend.StatusInternal, "the query failed inside the datasource (a bug in QueryReplay; the server log has its stack): %v", p))
		}
	}()
	return d.query(ctx, who, q, streams)
}

// query answers one query; streams says whether the request's consumer can
// follow a live channel (liveWatched): without one a live query runs to the
// end like any trace.
func (d *Datasource) query(ctx context.Context, who caller, q backend.DataQuery, streams bool) backend.DataResponse {
	if d.settingsErr != nil {
		if !isSettingsError(d.settingsErr) { // the connector or the trace store could not be set up
			return response(q.RefID, pluginErr(backend.StatusInternal, "the datasource could not start: %v", d.settingsErr))
		}
		return response(q.RefID, downstreamErr(backend.StatusBadRequest, "%v", d.settingsErr))
	}
	m, err := parseQuery(q, d.settings.queryLimit())
	if err != nil {
		return response(q.RefID, pluginErr(backend.StatusBadRequest, "%v", err))
	}
	m.Live = m.Live && streams
	var frames backend.DataResponse
	switch m.QueryType {
	case QueryTrace:
		frames, err = d.traceQuery(ctx, who, m)
	case QueryProbe:
		frames, err = d.probe(ctx, who, m)
	case QueryBundle, QueryView:
		frames, err = d.stored(ctx, m)
	case QueryCompare:
		frames, err = d.compareTraces(ctx, m)
	default:
		err = pluginErr(backend.StatusBadRequest, "queryType %q is not one of trace, bundle, view, compare, probe", m.QueryType)
	}
	if err != nil {
		return response(q.RefID, err)
	}
	return frames
}
