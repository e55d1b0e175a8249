package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// Tracing is what probes and the start-up sweep need from the tracer. The
// exporter does not import pkg/tracer (docs/ARCHITECTURE.md): a probe is a
// trace, with the tracer's whole run sequence (private session, rollback,
// watchdog, cleanup), so the command that builds the exporter passes the
// tracer in (tracer.ExporterTracing implements this) with WithTracing.
type Tracing interface {
	// TraceReadOnly traces sql once on dsn, refusing a batch that modifies
	// data and never clearing the buffer pool.
	TraceReadOnly(ctx context.Context, log *slog.Logger, dsn, sql, database string, timeout time.Duration, events bundle.EventGroups) (*bundle.Bundle, error)
	// SweepOrphans drops the trace sessions on dsn whose owner is gone and
	// returns how many.
	SweepOrphans(ctx context.Context, log *slog.Logger, dsn string) (int, error)
}

// Option configures New.
type Option func(*Exporter)

// WithTracing gives the exporter the tracer its probes and start-up sweep
// run through. Without it a configuration with probes is refused and the
// sweep is skipped.
func WithTracing(t Tracing) Option { return func(e *Exporter) { e.tracing = t } }

// probe traces a named read-only query on a schedule with the Tracing it
// is given (its own private session, queryreplay_<id>, filtered to its
// connection, always dropped) and publishes what the last successful run
// read, waited, spilled and took.
type probe struct {
	cfg     Probe
	dsn     string
	log     *slog.Logger
	tracing Tracing

	ctl     runCtl // its run loop (reload.go)
	mu      sync.Mutex
	runs    map[string]uint64 // by result: success, error, refused
	last    probeResult
	hasLast bool
}

type probeResult struct {
	durationSeconds float64
	reads, writes   float64
	spills, splits  float64
	waits           map[string]float64
	at              time.Time
}

var (
	descProbeRuns = newDesc("probe", "runs_total",
		"Probe runs by result (success, error, refused).", []string{"probe", "target", "result"}, nil)
	descProbeDuration = newDesc("probe", "duration_seconds",
		"Elapsed time of the probe's query in its last successful traced run, in seconds.", []string{"probe", "target"}, nil)
	descProbeReads = newDesc("probe", "page_reads",
		"Pages the probe's query read in its last successful run (timeline read entries).", []string{"probe", "target"}, nil)
	descProbeWrites = newDesc("probe", "page_writes",
		"Pages the probe's query wrote in its last successful run.", []string{"probe", "target"}, nil)
	descProbeSpills = newDesc("probe", "spills",
		"Spills to tempdb in the probe's last successful run.", []string{"probe", "target"}, nil)
	descProbeSplits = newDesc("probe", "page_splits",
		"Page splits in the probe's last successful run.", []string{"probe", "target"}, nil)
	descProbeWaits = newDesc("probe", "waits",
		"Waits by wait type in the probe's last successful run.", []string{"probe", "target", "wait_type"}, nil)
	descProbeLast = newDesc("probe", "last_success_timestamp_seconds",
		"Unix time of the probe's last successful run; 0 before the first.", []string{"probe", "target"}, nil)
)

func probeDescribe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descProbeRuns, descProbeDuration, descProbeReads, descProbeWrites, descProbeSpills, descProbeSplits, descProbeWaits, descProbeLast} {
		ch <- d
	}
}

// checkProbe refuses, at configuration time, a probe batch that would
// modify data: the checks tracer.Options.Validate makes under the tracer's
// read-only policy for a batch and a database (probes_test.go holds the two
// to the same answers over the classifier's corpus); the tracer refuses it
// again before anything runs.
func checkProbe(p Probe) error {
	if strings.TrimSpace(p.SQL) == "" {
		return &tsql.RefusedError{Reason: "no SQL to trace"}
	}
	if strings.ContainsRune(p.Database, 0) {
		return errors.New("database name holds a NUL character")
	}
	// The same classification the tracer's Options.Validate makes: a user
	// procedure's call is listed, not refused, because the trace reads and
	// classifies its definition on the server before anything runs; the
	// configuration check has no connection to read it with.
	c, err := tsql.ClassifyWith(p.SQL, tsql.Options{UserProcedures: true})
	if err != nil {
		return err
	}
	if c.Modification {
		return &tsql.RefusedError{Reason: fmt.Sprintf("the batch modifies data (%s) and the configuration refuses modifications", strings.Join(c.Verbs, ", "))}
	}
	return nil
}

func newProbe(cfg Probe, dsn string, log *slog.Logger, tracing Tracing) *probe {
	return &probe{cfg: cfg, dsn: dsn, log: log.With("probe", cfg.Name), tracing: tracing, runs: map[string]uint64{}}
}

// run traces the probe every interval until ctx ends. Each trace dials its
// own connections with network deadlines, so a silent network cannot hang
// a probe past its timeout.
func (p *probe) run(ctx context.Context) {
	every(ctx, p.cfg.Interval.D(), p.once)
}

func (p *probe) once(ctx context.Context) {
	tctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout.D()+time.Minute)
	defer cancel()
	b, err := p.tracing.TraceReadOnly(tctx, p.log, withAppName(p.dsn), p.cfg.SQL, p.cfg.Database, p.cfg.Timeout.D(),
		bundle.EventGroups{Waits: true, Memory: true, Splits: true})
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		var refused *tsql.RefusedError
		if errors.As(err, &refused) {
			p.runs["refused"]++
		} else {
			p.runs["error"]++
		}
		p.log.Warn("probe run failed", "err", err)
		return
	}
	p.runs["success"]++
	r := probeResult{durationSeconds: float64(b.Result.DurationUs) / 1e6, waits: map[string]float64{}, at: time.Now()}
	if b.Trace != nil {
		for _, op := range b.Trace.Summary.Operators {
			r.reads += float64(op.Reads)
			r.writes += float64(op.Writes)
			r.spills += float64(op.Spills)
			r.splits += float64(op.Splits)
			for w, n := range op.Waits {
				r.waits[w] += float64(n)
			}
		}
	}
	p.last, p.hasLast = r, true
}

func (p *probe) collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := []string{p.cfg.Name, p.cfg.Target}
	for _, res := range []string{"success", "error", "refused"} {
		ch <- prometheus.MustNewConstMetric(descProbeRuns, prometheus.CounterValue, float64(p.runs[res]), append(l, res)...)
	}
	last := 0.0
	if p.hasLast {
		last = float64(p.last.at.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(descProbeLast, prometheus.GaugeValue, last, l...)
	if !p.hasLast {
		return
	}
	ch <- prometheus.MustNewConstMetric(descProbeDuration, prometheus.GaugeValue, p.last.durationSeconds, l...)
	ch <- prometheus.MustNewConstMetric(descProbeReads, prometheus.GaugeValue, p.last.reads, l...)
	ch <- prometheus.MustNewConstMetric(descProbeWrites, prometheus.GaugeValue, p.last.writes, l...)
	ch <- prometheus.MustNewConstMetric(descProbeSpills, prometheus.GaugeValue, p.last.spills, l...)
	ch <- prometheus.MustNewConstMetric(descProbeSplits, prometheus.GaugeValue, p.last.splits, l...)
	for w, n := range p.last.waits {
		ch <- prometheus.MustNewConstMetric(descProbeWaits, prometheus.GaugeValue, n, append(l, w)...)
	}
}
