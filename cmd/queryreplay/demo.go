package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/exporter"
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// defaultDemoScenarios show a hash join's build and probe, a sort that
// spills, a nested loops' re-executed inner side and an update traced in
// rollback mode, and page reads traced with their call stacks (the viewer's
// call stack view has data).
var defaultDemoScenarios = []string{"hash_join", "sort_spill", "seek_key_lookup", "update_orders", "call_stacks"}

type demoArgs struct {
	once           bool
	scenarios      string
	listen         string
	exporterListen string
	out            string
	assets         string
	width          int
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("demo", "Run the demo: the SQL Server stand-in, the exporter on it, traces of its scenarios printed as a replay with their findings, and the local viewer.\n\n"+
			"Everything runs in this process on loopback; Ctrl-C stops it all. Exit status: 0 done or stopped, 1 failed, 2 usage, 130 interrupted before the viewer was up.")
		a := &demoArgs{}
		cmd.Flag("once", "Trace and print, then exit: serve neither the viewer nor the metrics.").BoolVar(&a.once)
		cmd.Flag("scenarios", "Comma-separated stand-in scenarios to trace (queryreplay standin --list-scenarios), or all.").Default(strings.Join(defaultDemoScenarios, ",")).StringVar(&a.scenarios)
		cmd.Flag("listen", "Loopback address of the viewer.").Default("127.0.0.1:0").StringVar(&a.listen)
		cmd.Flag("exporter-listen", "Loopback address of the exporter's /metrics.").Default("127.0.0.1:0").StringVar(&a.exporterListen)
		cmd.Flag("out", "Directory for the trace bundles (kept after the demo; open them with queryreplay view).").Default(filepath.Join(os.TempDir(), "queryreplay-demo")).StringVar(&a.out)
		cmd.Flag("assets", "Directory of a built viewer page (harness.js) to serve instead of the one embedded in the binary (for working on the page).").StringVar(&a.assets)
		cmd.Flag("width", "Columns of the replay's time axis.").Default("40").IntVar(&a.width)
		c.register(cmd, func(ctx context.Context, e *env) error { return runDemo(ctx, e, a) })
	})
}

// demoTrace is one traced scenario.
type demoTrace struct {
	scenario standin.Scenario
	bundle   *bundle.Bundle
	path     string
}

// demoRun holds what the demo started, so that stop can end it all.
type demoRun struct {
	e        *env
	progress io.Writer
	log      *slog.Logger
	standin  *standin.Running
	exporter *exporter.Exporter
	metrics  *http.Server
	metricsL net.Listener
	viewer   *runningViewer
	store    string
	symbols  *demoSymbols // the stand-in's PDBs (demo_symbols.go)
}

func runDemo(ctx context.Context, e *env, a *demoArgs) error {
	scenarios, err := pickScenarios(a.scenarios)
	if err != nil {
		return withStatus(2, err)
	}
	if a.width < 10 || a.width > 400 {
		return withStatus(2, fmt.Errorf("--width %d is outside 10-400", a.width))
	}
	var assets fs.FS
	if !a.once {
		for flag, addr := range map[string]string{"--listen": a.listen, "--exporter-listen": a.exporterListen} {
			if err := checkLoopbackListen(flag, addr); err != nil {
				return withStatus(2, err)
			}
		}
		if assets, err = findViewerAssets(a.assets); err != nil {
			return withStatus(2, err)
		}
	}
	if err := os.MkdirAll(a.out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	d := &demoRun{e: e, progress: e.stderr, log: componentLogger(e)}
	defer d.stop()

	if err := d.startStandin(ctx); err != nil {
		return d.failed(ctx, err)
	}
	if err := d.startExporter(ctx); err != nil {
		return d.failed(ctx, err)
	}
	traces, err := d.traceAll(ctx, scenarios, a.out)
	if err != nil {
		return d.failed(ctx, err)
	}
	for _, t := range traces {
		writeReplay(e.stdout, t.scenario.Name, t.scenario.Description, t.bundle, replayOptions{Width: a.width})
		writeTraceFindings(e.stdout, t.bundle)
		fmt.Fprintln(e.stdout)
	}
	d.runWorkload(ctx, scenarios)
	d.writeExporterSummary(ctx)
	if a.once {
		fmt.Fprintln(e.stdout, "Bundles written:")
		for _, t := range traces {
			fmt.Fprintf(e.stdout, "  %s\n", t.path)
		}
		fmt.Fprintf(e.stdout, "Open them with: queryreplay view %s\n", filepath.Join(a.out, "*.json.gz"))
		return nil
	}
	if err := d.serve(ctx, a, assets, traces); err != nil {
		return d.failed(ctx, err)
	}
	d.writeWhereToLook(traces, a.out)
	<-ctx.Done()
	fmt.Fprintln(d.progress, "demo: stopping")
	d.stop()
	fmt.Fprintln(d.progress, "demo: stopped")
	return nil
}

// failed turns an error into the command's result: an interruption is
// status 130 with one line, anything else is the error.
func (d *demoRun) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return withStatus(130, errors.New("interrupted"))
	}
	return err
}

// pickScenarios resolves the --scenarios list against the stand-in's.
func pickScenarios(list string) ([]standin.Scenario, error) {
	all := standin.Scenarios()
	if strings.TrimSpace(list) == "all" {
		return all, nil
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	var out []standin.Scenario
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.Index(names, name)
		if i < 0 {
			return nil, fmt.Errorf("--scenarios: no scenario %q; the stand-in has: %s", name, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	if len(out) == 0 {
		return nil, errors.New("--scenarios names no scenario")
	}
	return out, nil
}

// componentLogger is the logger of the stand-in, exporter and tracer:
// warnings only, unless --verbose asked for debug.
func componentLogger(e *env) *slog.Logger {
	if e.log != nil && e.log.Enabled(context.Background(), slog.LevelDebug) {
		return e.log
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func (d *demoRun) step(format string, args ...any) {
	fmt.Fprintf(d.progress, "demo: "+format+"\n", args...)
}

func (d *demoRun) startStandin(ctx context.Context) error {
	d.step("starting the SQL Server stand-in (demo database QueryReplayDemo)")
	// Not stopped by Ctrl-C itself: the tracer's and the exporter's cleanup
	// (dropping their sessions) needs the server until stop closes it.
	d.symbols = startDemoSymbols(d)
	run, err := standin.Start(context.WithoutCancel(ctx), "127.0.0.1:0", standin.Options{Logger: d.log, XELEncoder: xe.EncodeXMLAsXEL,
		ModuleBuilds: d.symbols.moduleBuilds()})
	if err != nil {
		return fmt.Errorf("start the stand-in: %w", err)
	}
	d.standin = run
	d.step("stand-in listening on %s", run.Addr)
	return nil
}

// startExporter creates the exporter and runs its first poll, which
// creates its session, so that the traces that follow are counted.
func (d *demoRun) startExporter(ctx context.Context) error {
	d.step("starting the exporter on the stand-in (its own Extended Events session)")
	cfg, err := exporter.ConfigFromDSN(d.standin.DSN, "default")
	if err != nil {
		return fmt.Errorf("exporter configuration: %w", err)
	}
	// The shortest MAX_DISPATCH_LATENCY (1 s, whole seconds), so that the
	// summary after the traces does not wait the default 5 s for the
	// session to hand its events to the file.
	cfg.Targets[0].Session.MaxDispatchLatency = exporter.Duration(exporterDispatchLatency)
	ex, err := exporter.New(cfg, d.log, exporter.WithTracing(tracer.ExporterTracing{}))
	if err != nil {
		return fmt.Errorf("exporter: %w", err)
	}
	d.exporter = ex
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ex.PollNow(pctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if up := gatherSum(ex, "queryreplay_up"); up < 1 {
		return errors.New("the exporter's first poll of the stand-in failed (queryreplay_up is 0); run with --verbose to see why")
	}
	return nil
}

// traceAll traces each scenario with the real tracer and writes its
// bundle. A scenario that names the trace options it is meant for gets
// exactly those; the others are traced cold with read-ahead off, so that
// every page read shows.
func (d *demoRun) traceAll(ctx context.Context, scenarios []standin.Scenario, out string) ([]demoTrace, error) {
	db, err := tracer.OpenDSN(d.standin.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tr := tracer.New(tracer.DBOpener{DB: db}, tracer.Policy{AllowClearBufferPool: true}, d.log)
	var traces []demoTrace
	for i, sc := range scenarios {
		started := time.Now()
		d.step("tracing %d/%d %s", i+1, len(scenarios), sc.Name)
		var lastShown time.Time
		own := sc.ClearBufferPool || sc.DisableReadAhead || sc.CallStacks
		o := tracer.Options{
			SQL: sc.SQL, ClearBufferPool: !own || sc.ClearBufferPool, DisableReadAhead: !own || sc.DisableReadAhead, CallStacks: sc.CallStacks,
			Events:    bundle.EventGroups{Locks: true, Waits: true, Memory: true, Splits: true, Log: true, FileIO: true},
			MaxEvents: tracer.DefaultMaxEvents, MaxFileSizeMB: tracer.DefaultMaxFileSizeMB, MaxLockRows: tracer.DefaultMaxLockRows,
			GracePeriod: tracer.DefaultGracePeriod,
			// The demo's stand-in is SQL Server 2017, which has no
			// sys.dm_db_page_info: names its pages the way a user would
			// ask for on such a server (--page-allocations-dmv); on the
			// stand-in the walk costs nothing.
			UndocumentedPageAllocations: true,
			// A long trace reports once it has taken two seconds, then at
			// most once a second (the tracer calls from one goroutine).
			Progress: func(p tracer.Progress) {
				if p.Elapsed < 2*time.Second || time.Since(lastShown) < time.Second {
					return
				}
				lastShown = time.Now()
				d.step("  %s, %s, %d events", p.Step, p.Elapsed.Round(100*time.Millisecond), p.Events)
			},
		}
		if o.CallStacks {
			d.symbols.options(&o)
		}
		b, err := d.traceScenario(ctx, tr, sc, o)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(out, sc.Name+".json.gz")
		if err := bundle.Save(path, b); err != nil {
			return nil, fmt.Errorf("save scenario %s: %w", sc.Name, err)
		}
		d.step("  %s in %.1f s → %s", plural(b.Result.Events, "event"), time.Since(started).Seconds(), path)
		traces = append(traces, demoTrace{scenario: sc, bundle: b, path: path})
	}
	return traces, nil
}

// traceScenario traces one scenario with what it needs besides its
// statement (another session's locks, held workspace memory) set up on the
// stand-in first and released after: the stand-in does nothing special for
// a scenario's text.
func (d *demoRun) traceScenario(ctx context.Context, tr *tracer.Tracer, sc standin.Scenario, o tracer.Options) (*bundle.Bundle, error) {
	release, err := standin.PrepareScenario(ctx, d.standin.Server, sc)
	if err != nil {
		return nil, err
	}
	defer release()
	b, err := tr.Trace(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("trace scenario %s: %w", sc.Name, err)
	}
	return b, nil
}

// demoWorkloadApp is the application name of the demo's workload: the
// exporter leaves QueryReplay's own traces out of its counters
// (sqlconn.TraceApp), so the demo also runs each scenario once as an
// application would, for the exporter to count.
const demoWorkloadApp = "queryreplay-demo-workload"

// runWorkload runs each scenario once on an ordinary connection, each in a
// transaction that is rolled back so the demo database stays as it was.
// A failure is logged and the demo goes on: the summary then shows less.
func (d *demoRun) runWorkload(ctx context.Context, scenarios []standin.Scenario) {
	d.step("running the scenarios once as an application would, for the exporter to count")
	db, err := tracer.OpenDSN(sqlconn.WithApp(d.standin.DSN, demoWorkloadApp))
	if err != nil {
		d.log.Warn("demo workload: open", "err", err)
		return
	}
	defer db.Close()
	for _, sc := range scenarios {
		if err := runRolledBack(ctx, db, sc.SQL); err != nil {
			d.log.Warn("demo workload: scenario failed", "scenario", sc.Name, "err", err)
		}
	}
}

// runRolledBack runs a batch inside a transaction and rolls it back.
func runRolledBack(ctx context.Context, db *sql.DB, batch string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // the rollback is the point; an error here means it already ended
	rows, err := tx.QueryContext(ctx, batch)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	for rows.NextResultSet() {
		for rows.Next() {
		}
	}
	rows.Close()
	return rows.Err()
}

// exporterDispatchLatency is the demo exporter session's
// MAX_DISPATCH_LATENCY.
const exporterDispatchLatency = time.Second

// writeExporterSummary polls again and prints what the exporter counted
// while the scenarios ran. Events reach the session's file at most one
// dispatch latency after they happened, so it waits that long and polls
// until the statements show (a few tries, bounded).
func (d *demoRun) writeExporterSummary(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for try := 0; try < 4 && pctx.Err() == nil; try++ {
		select {
		case <-time.After(exporterDispatchLatency + 100*time.Millisecond):
		case <-pctx.Done():
		}
		d.exporter.PollNow(pctx)
		if gatherSum(d.exporter, "queryreplay_statements_total") > 0 {
			break
		}
	}
	w := d.e.stdout
	fmt.Fprintln(w, "━━ exporter ━━ what the long-running session counted meanwhile (the same numbers /metrics serves)")
	fmt.Fprintln(w, "  (QueryReplay's own traces are left out of these counters; the scenarios' second run, as an application, is counted)")
	for _, m := range []struct{ name, label string }{
		{"queryreplay_statements_total", "statements"},
		{"queryreplay_page_reads_total", "page reads"},
		{"queryreplay_waits_total", "waits"},
		{"queryreplay_spills_total", "spills to tempdb"},
		{"queryreplay_page_splits_total", "page splits"},
	} {
		fmt.Fprintf(w, "  %-18s %10s   %s\n", m.label, thousands(int64(gatherSum(d.exporter, m.name))), m.name)
	}
	fmt.Fprintln(w)
}

// gatherSum adds up every series of one metric family of the exporter's
// registry (0 when it has none).
func gatherSum(ex *exporter.Exporter, family string) float64 {
	mfs, err := ex.Gatherer().Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Untyped != nil:
				sum += m.GetUntyped().GetValue()
			}
		}
	}
	return sum
}

// serve starts the exporter's polling and /metrics, then the viewer with
// the bundles.
func (d *demoRun) serve(ctx context.Context, a *demoArgs, assets fs.FS, traces []demoTrace) error {
	handler, err := d.exporter.Handler(version)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", a.exporterListen)
	if err != nil {
		return fmt.Errorf("exporter: listen on %s: %w", a.exporterListen, err)
	}
	d.metricsL = l
	d.metrics = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.metrics.Serve(l) }()
	d.exporter.Start(ctx)

	d.step("starting the viewer (the replay panel over the real datasource)")
	if d.store, err = os.MkdirTemp("", "queryreplay-demo-store-"); err != nil {
		return err
	}
	s, err := settingsFromDSN(d.standin.DSN)
	if err != nil {
		return err
	}
	s.Lab = true
	paths := make([]string, len(traces))
	for i, t := range traces {
		paths[i] = t.path
	}
	d.viewer, err = startViewer(ctx, d.e, s, d.store, assets, a.listen, paths)
	return err
}

func (d *demoRun) writeWhereToLook(traces []demoTrace, out string) {
	w := d.e.stdout
	ids := d.viewer.srv.TraceIDs()
	fmt.Fprintln(w, "━━ where to look")
	fmt.Fprintf(w, "Viewer:   %s\n", d.viewer.srv.URL())
	for i, t := range traces {
		fmt.Fprintf(w, "  %-22s %s\n", t.scenario.Name, d.viewer.traceURL(ids[i], t.scenario.Name))
	}
	fmt.Fprintf(w, "Metrics:  http://%s%s\n", d.metricsL.Addr(), exporter.MetricsPath)
	fmt.Fprintf(w, "Bundles:  %s (queryreplay view %s)\n", out, filepath.Join(out, "*.json.gz"))
	// The stand-in's login is fixed and documented (docs/standin.md), not a
	// secret: printing it lets any SQL Server client connect.
	fmt.Fprintf(w, "SQL:      %s (the stand-in)\n", d.standin.DSN)
	fmt.Fprintln(w, "Ctrl-C stops everything.")
}

// stop ends whatever started, newest first; it may run more than once.
func (d *demoRun) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if d.viewer != nil {
		_ = d.viewer.close()
		d.viewer = nil
	}
	if d.store != "" {
		_ = os.RemoveAll(d.store)
		d.store = ""
	}
	d.symbols.close()
	d.symbols = nil
	if d.metrics != nil {
		_ = d.metrics.Shutdown(ctx)
		d.metrics = nil
	}
	if d.exporter != nil {
		if err := d.exporter.Shutdown(ctx); err != nil {
			d.log.Warn("exporter shutdown", "err", err)
		}
		d.exporter = nil
	}
	if d.standin != nil {
		d.standin.Close()
		d.standin = nil
	}
}
