package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tracestore"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// timeoutName names the limit a timed-out trace had: the query's own
// options.timeoutSeconds when it was shorter than traceTimeout, else
// traceTimeout — with the duration, so the message says what ran out.
func timeoutName(query, setting time.Duration) string {
	if query > 0 && query < setting {
		return fmt.Sprintf("options.timeoutSeconds (%s)", query)
	}
	return fmt.Sprintf("traceTimeout (%s)", setting)
}

// runTrace runs a trace or probe query within the limits: a slot among
// maxConcurrentTraces (waiting at most traceQueueTimeout), the whole trace
// bounded by traceTimeout, and Grafana's cancellation passed to the tracer,
// which stops the query and drops the session on every path.
func (d *Datasource) runTrace(ctx context.Context, m Query) (backend.DataResponse, error) {
	o, err := m.traceOptions(d.settings)
	if err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
	}
	if m.QueryType == QueryProbe {
		c, err := tsql.Classify(o.SQL)
		if err != nil {
			return backend.DataResponse{}, traceError(ctx, err, o.SQL, "")
		}
		if err := frames.CheckProbeMetrics(m.Metrics); err != nil {
			return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
		}
		if c.Modification {
			return backend.DataResponse{}, pluginErr(backend.StatusBadRequest,
				"probe refused: a probe must be read-only, and the batch modifies data (%s)", strings.Join(c.Verbs, ", "))
		}
	}
	o.Progress = d.progress
	release, err := d.acquire(ctx)
	if err != nil {
		return backend.DataResponse{}, err
	}
	defer release()
	tctx, cancel := context.WithTimeout(ctx, d.settings.traceTimeout())
	defer cancel()
	began := time.Now()
	b, err := d.tracer.Trace(tctx, o)
	if err != nil {
		return backend.DataResponse{}, traceError(ctx, err, o.SQL, timeoutName(o.Timeout, d.settings.traceTimeout()))
	}
	d.step("storing")
	e, err := d.store.Put(ctx, b)
	if err != nil {
		if tracestore.IsBucketError(err) {
			return backend.DataResponse{}, downstreamErr(backend.StatusBadGateway, "the trace ran but could not be stored: %v", err)
		}
		return backend.DataResponse{}, pluginErr(backend.StatusInternal, "the trace ran but could not be stored: %v", err)
	}
	d.log.FromContext(ctx).Info("trace stored", "traceId", e.ID, "events", b.Result.Events, "elapsed", time.Since(began).String())
	if m.QueryType == QueryProbe {
		f, err := frames.Probe(d.source(e))
		if err != nil {
			return backend.DataResponse{}, pluginErr(backend.StatusInternal, "%v", err)
		}
		if f, err = frames.SelectProbeMetrics(f, m.Metrics); err != nil {
			return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
		}
		return backend.DataResponse{Frames: data.Frames{f}}, nil
	}
	d.step("building frames")
	return d.build(e, m)
}

// step reports the datasource's own steps after the tracer's.
func (d *Datasource) step(name string) {
	if d.progress != nil {
		d.progress(tracer.Progress{Step: name})
	}
}

// acquire takes a trace slot or refuses after traceQueueTimeout.
func (d *Datasource) acquire(ctx context.Context) (func(), error) {
	t := time.NewTimer(d.settings.queueTimeout())
	defer t.Stop()
	select {
	case d.slots <- struct{}{}:
		return func() { <-d.slots }, nil
	case <-t.C:
		return nil, pluginErr(backend.StatusTooManyRequests,
			"%d traces are already running on this datasource (maxConcurrentTraces) and none finished within %s (traceQueueTimeout); try again later",
			cap(d.slots), d.settings.queueTimeout())
	case <-ctx.Done():
		return nil, downstreamErr(backend.StatusBadRequest, "the request was cancelled while waiting for a trace slot; nothing ran")
	}
}

// stored answers bundle and view queries from the store.
func (d *Datasource) stored(ctx context.Context, m Query) (backend.DataResponse, error) {
	if m.TraceID == "" {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "traceId is empty: a %s query needs the id of a stored trace", m.QueryType)
	}
	e, err := d.store.Get(ctx, m.TraceID)
	if err != nil {
		return backend.DataResponse{}, storeError(err)
	}
	return d.build(e, m)
}

func (d *Datasource) build(e *tracestore.Entry, m Query) (backend.DataResponse, error) {
	tr := e.Bundle.Trace
	span := traceSpan{start: tr.Start, end: tr.End}
	if z, err := time.Parse(time.RFC3339Nano, tr.ZeroTime); err == nil {
		span.zero = z
	}
	req := m.frameRequest(span)
	if err := req.Validate(); err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
	}
	fs, err := frames.Build(d.source(e), req)
	if err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusInternal, "build frames of trace %s: %v", e.ID, err)
	}
	return backend.DataResponse{Frames: fs}, nil
}

type runtimeEntry struct {
	counters map[int]frames.Runtime
	findings *findings.Report
	plan     *showplan.Statement
}

// source is the frames' view of a stored trace.
func (d *Datasource) source(e *tracestore.Entry) *frames.Source {
	r := d.cached(e)
	return &frames.Source{TraceID: e.ID, Bundle: e.Bundle, Runtime: r.counters, Findings: r.findings}
}

// cached returns what is derived from a stored trace's plan: the actual
// plan is parsed once per trace (pkg/showplan), and its runtime counters,
// its statement and the trace's findings are kept beside the store's entry.
func (d *Datasource) cached(e *tracestore.Entry) runtimeEntry {
	d.runtimeMu.Lock()
	r, ok := d.runtime[e.ID]
	d.runtimeMu.Unlock()
	if ok {
		return r
	}
	plan := parsePlan(e.Bundle.Plan)
	r = runtimeEntry{counters: runtimeCounters(plan), findings: traceFindings(e.Bundle, plan)}
	if e.Bundle.Trace != nil {
		r.plan = findings.PlanStatement(plan, e.Bundle.Trace)
	}
	d.runtimeMu.Lock()
	if len(d.runtime) > 4*tracestore.DefaultMaxTraces {
		clear(d.runtime) // a cache, not a record: rebuilt on demand
	}
	d.runtime[e.ID] = r
	d.runtimeMu.Unlock()
	return r
}

// parsePlan parses a bundle's actual plan XML; nil when there is none or it
// does not parse (the frames then go without runtime counters).
func parsePlan(planXML string) *showplan.Plan {
	if planXML == "" {
		return nil
	}
	p, err := showplan.ParseBytes([]byte(planXML))
	if err != nil {
		return nil
	}
	return p
}

// runtimeCounters reads the per-operator runtime counters of the first
// statement with operators (the statement the timeline follows).
func runtimeCounters(p *showplan.Plan) map[int]frames.Runtime {
	if p == nil {
		return nil
	}
	for _, st := range p.Statements {
		if len(st.Operators) == 0 {
			continue
		}
		out := make(map[int]frames.Runtime, len(st.Operators))
		for _, op := range st.Operators {
			est := op.EstimateRows
			r := frames.Runtime{EstimatedRows: &est}
			if a := op.Actual; a != nil {
				r.ActualRows, r.Executions = ptr(a.Rows), ptr(a.Executions)
				r.LogicalReads, r.PhysicalReads, r.ReadAheads = ptr(a.LogicalReads), ptr(a.PhysicalReads), ptr(a.ReadAheads)
				if a.HasTiming {
					r.ElapsedMs, r.CPUMs = ptr(a.ElapsedMs), ptr(a.CPUMs)
				}
			}
			out[op.NodeID] = r
		}
		return out
	}
	return nil
}

func ptr(v int64) *int64 { return &v }

// notFound is a helper for resources.
func notFound(id string) error { return fmt.Errorf("trace %s: %w", id, tracestore.ErrNotFound) }
