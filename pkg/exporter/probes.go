package exporter

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// probePolicy is every probe's tracer policy: read-only. A probe's batch
// that modifies data is refused when the configuration is checked, and the
// tracer refuses it again before anything runs; the buffer pool is never
// cleared.
var probePolicy = tracer.Policy{Modifications: tracer.ModificationsRefuse}

// probe traces a named read-only query on a schedule with pkg/tracer (its
// own private session, queryreplay_<id>, filtered to its connection, always
// dropped) and publishes what the last successful run read, waited, spilled
// and took.
type probe struct {
	cfg Probe
	dsn string
	log *slog.Logger

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
// modify data (the tracer's own classifier).
func checkProbe(p Probe) error {
	_, err := tracer.Options{SQL: p.SQL, Database: p.Database}.Validate(probePolicy)
	return err
}

func newProbe(cfg Probe, dsn string, log *slog.Logger) *probe {
	return &probe{cfg: cfg, dsn: dsn, log: log.With("probe", cfg.Name), runs: map[string]uint64{}}
}

// run traces the probe every interval until ctx ends.
func (p *probe) run(ctx context.Context) {
	// Each trace dials its own connections with network deadlines, so a
	// silent network cannot hang a probe past its timeout.
	opener, err := tracer.NewDSNOpener(withAppName(p.dsn))
	if err != nil {
		p.log.Error("probe cannot open its connection", "err", err)
		return
	}
	tr := tracer.New(opener, probePolicy, p.log)
	every(ctx, p.cfg.Interval.D(), func(ctx context.Context) { p.once(ctx, tr) })
}

func (p *probe) once(ctx context.Context, tr *tracer.Tracer) {
	tctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout.D()+time.Minute)
	defer cancel()
	b, err := tr.Trace(tctx, tracer.Options{
		SQL: p.cfg.SQL, Database: p.cfg.Database, Timeout: p.cfg.Timeout.D(),
		Events: bundle.EventGroups{Waits: true, Memory: true, Splits: true},
	})
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
