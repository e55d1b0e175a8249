package exporter

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// Reloading (SIGHUP, POST /-/reload). A reload must never lose a count:
//
//   - a target whose configuration (and the global settings) did not change
//     goes on untouched;
//   - a changed target hands its counters, its top-query table, its owner
//     and its event-file cursor to its successor, which redefines the
//     session under the same name at its next poll and reads on from the
//     same bookmark (the events the old definition flushed at DROP are in
//     the files it reads next) — as when someone drops the session;
//   - a target whose DSN changed keeps its counters but starts a session of
//     its own on the new server; the old one is dropped;
//   - a removed target stops and drops its session;
//   - probes are replaced as configured (they hold no counts a reload
//     could lose but their run counters, which are carried by name).
//
// A configuration that fails validation changes nothing.

// current returns the running targets, probes and configuration.
func (e *Exporter) current() ([]*target, []*probe, *Config) {
	e.state.RLock()
	defer e.state.RUnlock()
	return e.targets, e.probes, e.cfg
}

// Reload applies a validated configuration (LoadConfig, ConfigFromDSN) to
// the running exporter.
func (e *Exporter) Reload(ctx context.Context, cfg *Config) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	probes, err := e.buildProbes(cfg)
	if err != nil {
		return err
	}
	for _, tc := range cfg.Targets {
		if tc.dsn == "" {
			return fmt.Errorf("reload: target %s has no DSN: load the configuration with LoadConfig, ParseConfig or ConfigFromDSN", tc.Name)
		}
	}
	oldTargets, oldProbes, oldCfg := e.current()
	byName := map[string]*target{}
	for _, t := range oldTargets {
		byName[t.cfg.Name] = t
	}
	sameGlobal := reflect.DeepEqual(oldCfg.Global, cfg.Global)
	var next, started, retired []*target
	for _, tc := range cfg.Targets {
		old := byName[tc.Name]
		delete(byName, tc.Name)
		switch {
		case old != nil && sameGlobal && reflect.DeepEqual(old.cfg, tc):
			next = append(next, old)
		case old != nil:
			old.run.stopRun()
			nt := newTarget(tc, &cfg.Global, e.log)
			nt.takeOver(old)
			if old.db != nil { // the DSN changed: old drops its session
				retired = append(retired, old)
			}
			next, started = append(next, nt), append(started, nt)
		default:
			nt := newTarget(tc, &cfg.Global, e.log)
			next, started = append(next, nt), append(started, nt)
		}
	}
	for _, old := range byName {
		old.run.stopRun()
		retired = append(retired, old)
	}
	for _, p := range oldProbes {
		p.ctl.stopRun()
	}
	carryProbeRuns(oldProbes, probes)
	e.state.Lock()
	e.targets, e.probes, e.cfg = next, probes, cfg
	e.state.Unlock()
	if e.runCtx != nil {
		for _, t := range started {
			e.runTarget(t)
		}
		for _, p := range probes {
			e.runProbe(p)
		}
	}
	var errs []error
	for _, old := range retired {
		if err := old.shutdown(ctx, *oldCfg.Global.DropSessionOnShutdown); err != nil {
			errs = append(errs, err)
		}
	}
	e.log.Info("configuration reloaded", "targets", len(next), "restarted", len(started), "removed", len(retired), "probes", len(probes))
	return errors.Join(errs...)
}

// takeOver moves old's counts and, when the DSN is the same, its
// connections, owner and session into t: the session is redefined at the
// next poll under the same name, reading on from old's bookmark. old is
// left with nothing to drop.
func (t *target) takeOver(old *target) {
	old.pollMu.Lock()
	defer old.pollMu.Unlock()
	old.mu.Lock()
	t.groups, t.top, t.st = old.groups, old.top, old.st
	old.mu.Unlock()
	for _, def := range groupDefs {
		if g := t.groups[def.name]; g != nil {
			g.resize(t.labelLimit(def.name))
		}
	}
	if old.cfg.dsn != t.cfg.dsn {
		t.st.up, t.st.session = false, ""
		return
	}
	t.db, t.owner, t.spec, t.cursor, t.ringSeq = old.db, old.owner, old.spec, old.cursor, old.ringSeq
	t.created, t.dropped, t.dec, t.cat, t.waitNames = old.created, old.dropped, old.dec, old.cat, old.waitNames
	t.respec = t.spec != nil
	old.db, old.owner, old.spec = nil, nil, nil
}

// runCtl lets one target or probe be stopped on its own (a reload).
type runCtl struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *runCtl) start(parent context.Context, wg *sync.WaitGroup, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	r.mu.Lock()
	r.cancel, r.done = cancel, done
	r.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		fn(ctx)
	}()
}

// stopRun stops the loop and waits for it (its poll in progress ends).
func (r *runCtl) stopRun() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (e *Exporter) runTarget(t *target) { t.run.start(e.runCtx, &e.wg, t.loop) }
func (e *Exporter) runProbe(p *probe)   { p.ctl.start(e.runCtx, &e.wg, p.run) }

// buildProbes checks and builds the configuration's probes.
func (e *Exporter) buildProbes(cfg *Config) ([]*probe, error) {
	dsns := map[string]string{}
	for _, tc := range cfg.Targets {
		dsns[tc.Name] = tc.dsn
	}
	var problems []string
	var out []*probe
	for i, pc := range cfg.Probes {
		if err := checkProbe(pc); err != nil {
			problems = append(problems, fmt.Sprintf("probes[%d].sql: %v", i, err))
			continue
		}
		if e.tracing == nil {
			problems = append(problems, fmt.Sprintf("probes[%d]: probes need the tracer (exporter.WithTracing)", i))
			continue
		}
		out = append(out, newProbe(pc, dsns[pc.Target], e.log, e.tracing))
	}
	if len(problems) > 0 {
		return nil, &ConfigError{Problems: problems}
	}
	return out, nil
}

// redefineSession applies a reloaded configuration to the running session:
// the session is dropped (which flushes its buffers to its files) and
// created again under the same name from the new configuration, and the
// cursor reads on from its bookmark; the new session's event_sequence
// starts a new file, so nothing is counted twice. A session whose target
// kind, scope or file changed starts afresh instead.
func (t *target) redefineSession(ctx context.Context) error {
	spec, err := t.resolveSpec(ctx)
	if err != nil {
		return err
	}
	spec.name = t.spec.name
	if err := t.setFile(ctx, spec); err != nil {
		return err
	}
	if spec.target != t.spec.target || spec.scope != t.spec.scope || spec.file != t.spec.file {
		if _, err := t.db.ExecContext(ctx, t.spec.dropDDL()); err != nil {
			return fmt.Errorf("drop session %s to redefine it: %w", t.spec.name, err)
		}
		t.spec, t.respec = nil, false
		return t.initialize(ctx)
	}
	for _, ddl := range []string{spec.dropDDL(), spec.createDDL(), spec.startDDL()} {
		if _, err := t.db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("redefine session %s: %w", spec.name, err)
		}
	}
	t.spec, t.respec = spec, false
	if spec.target == "ring_buffer" {
		t.ringSeq.startFresh()
	}
	t.log.Info("session redefined after a reload", "session", spec.name)
	return nil
}

// carryProbeRuns keeps the run counters of probes that stay (by name).
func carryProbeRuns(old, next []*probe) {
	byName := map[string]*probe{}
	for _, p := range old {
		byName[p.cfg.Name] = p
	}
	for _, p := range next {
		if o := byName[p.cfg.Name]; o != nil {
			o.mu.Lock()
			for k, v := range o.runs {
				p.runs[k] = v
			}
			p.last, p.hasLast = o.last, o.hasLast
			o.mu.Unlock()
		}
	}
}
