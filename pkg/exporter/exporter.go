package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Exporter runs every target's poller and probe, and serves their metrics.
type Exporter struct {
	cfg     *Config
	log     *slog.Logger
	targets []*target
	probes  []*probe
	reg     *prometheus.Registry
	tracing Tracing // probes and the start-up sweep (WithTracing)

	cancel context.CancelFunc
	runCtx context.Context // Start's, for targets a reload adds
	wg     sync.WaitGroup
	// state guards targets, probes and cfg, which a reload swaps;
	// reloadMu serialises reloads.
	state    sync.RWMutex
	reloadMu sync.Mutex
	sweeps   chan sweepResult // the start-up sweeps' results (sweep.go)

	buildOnce sync.Once
	buildErr  error
}

// New builds an exporter for a validated configuration. Nothing connects
// until Start.
func New(cfg *Config, log *slog.Logger, opts ...Option) (*Exporter, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Exporter{cfg: cfg, log: log, reg: prometheus.NewRegistry()}
	for _, o := range opts {
		o(e)
	}
	for _, tc := range cfg.Targets {
		if tc.dsn == "" {
			return nil, fmt.Errorf("target %s has no DSN: load the configuration with LoadConfig, ParseConfig or ConfigFromDSN", tc.Name)
		}
		e.targets = append(e.targets, newTarget(tc, &cfg.Global, log))
	}
	probes, err := e.buildProbes(cfg)
	if err != nil {
		return nil, err
	}
	e.probes = probes
	if err := e.reg.Register(collector{e}); err != nil {
		return nil, fmt.Errorf("register the collector: %w", err)
	}
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e, nil
}

// Gatherer returns everything /metrics serves.
func (e *Exporter) Gatherer() prometheus.Gatherer { return e.gatherer() }

// Start begins polling every target and running every probe until
// Shutdown or until ctx ends.
func (e *Exporter) Start(ctx context.Context) {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	e.runCtx, e.cancel = context.WithCancel(ctx)
	e.startSweeps(e.runCtx)
	targets, probes, _ := e.current()
	for _, t := range targets {
		e.runTarget(t)
	}
	for _, p := range probes {
		e.runProbe(p)
	}
}

// Ready reports whether every target has finished its first poll (whatever
// its outcome), so the first scrape sees every target's up.
func (e *Exporter) Ready() (bool, int) {
	waiting := 0
	targets, _, _ := e.current()
	for _, t := range targets {
		t.mu.Lock()
		if !t.st.polled {
			waiting++
		}
		t.mu.Unlock()
	}
	return waiting == 0, waiting
}

// Shutdown stops the pollers and probes, waits for them, and drops each
// target's session when drop_session_on_shutdown is set (the default). ctx
// bounds the drops.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
	targets, _, cfg := e.current()
	drop := *cfg.Global.DropSessionOnShutdown
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := t.shutdown(dctx, drop); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// PollNow runs one poll of every target at once, in parallel (tests and
// benchmarks; the pollers do this on their schedule).
func (e *Exporter) PollNow(ctx context.Context) {
	var wg sync.WaitGroup
	targets, _, _ := e.current()
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.poll(ctx)
		}()
	}
	wg.Wait()
}

// registerBuildInfo publishes queryreplay_build_info once (the handler may
// be built more than once, e.g. by tests).
func (e *Exporter) registerBuildInfo(version string) error {
	e.buildOnce.Do(func() {
		e.buildErr = e.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Name: "build_info",
			Help:        "Always 1: the version of the exporter and the Go version that built it.",
			ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
		}, func() float64 { return 1 }))
	})
	return e.buildErr
}
