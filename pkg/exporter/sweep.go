package exporter

import (
	"context"
	"fmt"
	"time"
)

// sweepTimeout bounds the start-up sweep of one target.
const sweepTimeout = time.Minute

// sweepResult is what the start-up sweep of one target did.
type sweepResult struct {
	target  string
	dropped int
	err     error
}

// sweepOrphans drops, once at start, the trace sessions (queryreplay_<id>_
// <owner>) that crashed traces left on the target — a probe killed with
// the exporter among them — through the tracer's owner-aware sweep: a
// session whose owner is alive is never touched, nor the exporter's own
// queryreplay_exporter_* sessions (the sweep never touches a name it did
// not make). Its connection has network deadlines (tracer.NewDSNOpener).
// Without a Tracing (WithTracing) there is no sweep.
func (t *target) sweepOrphans(ctx context.Context, tracing Tracing) sweepResult {
	res := sweepResult{target: t.cfg.Name}
	if tracing == nil {
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	res.dropped, res.err = tracing.SweepOrphans(ctx, t.log, withAppName(t.cfg.dsn))
	if res.err != nil {
		res.err = fmt.Errorf("orphan sweep: %w", res.err)
	}
	return res
}

// startSweeps sweeps every target in the background; waitSweeps returns
// their results once all have finished.
func (e *Exporter) startSweeps(ctx context.Context) {
	e.sweeps = make(chan sweepResult, len(e.targets))
	for _, t := range e.targets {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			r := t.sweepOrphans(ctx, e.tracing)
			switch {
			case r.err != nil && ctx.Err() == nil:
				e.log.Warn("orphan sweep at start failed", "target", t.cfg.Name, "err", r.err)
			case r.dropped > 0:
				e.log.Info("dropped orphaned trace sessions at start", "target", t.cfg.Name, "count", r.dropped)
			}
			e.sweeps <- r
		}()
	}
}

func (e *Exporter) waitSweeps(ctx context.Context) ([]sweepResult, error) {
	out := make([]sweepResult, 0, len(e.targets))
	for range e.targets {
		select {
		case r := <-e.sweeps:
			out = append(out, r)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}
