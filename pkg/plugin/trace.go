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
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
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

// runTrace runs a trace or probe query within the limits and stores the
// trace, owned by the caller: a slot among maxConcurrentTraces (waiting at
// most traceQueueTimeout), the whole trace bounded by traceTimeout, and
// Grafana's cancellation passed to the tracer, which stops the query and
// drops the session on every path.
func (d *Datasource) runTrace(ctx context.Context, who caller, o tracer.Options) (*tracestore.Entry, error) {
	o.Progress = d.progress
	release, err := d.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	tctx, cancel := context.WithTimeout(ctx, d.settings.traceTimeout())
	defer cancel()
	began := time.Now()
	b, err := d.trace(tctx, o)
	if err != nil {
		return nil, traceError(ctx, err, o.SQL, timeoutName(o.Timeout, d.settings.traceTimeout()))
	}
	d.step("storing")
	e, err := d.store.Put(tracestore.WithOwner(ctx, who.login), b)
	if err != nil {
		if tracestore.IsBucketError(err) {
			return nil, downstreamErr(backend.StatusBadGateway, "the trace ran but could not be stored: %v", err)
		}
		return nil, pluginErr(backend.StatusInternal, "the trace ran but could not be stored: %v", err)
	}
	d.log.FromContext(ctx).Info("trace stored", "traceId", e.ID, "events", b.Result.Events, "elapsed", time.Since(began).String())
	return e, nil
}

// traceQuery answers a trace query. It runs the batch only for a fresh run
// request (runonce.go) from a caller whose role may trace; otherwise it
// serves the trace the request produced, or the query's traceId, or a
// notice that nothing ran. A refresh, a zoom or a reload of a saved
// dashboard therefore never runs the batch (nor a saved clearBufferPool)
// again.
func (d *Datasource) traceQuery(ctx context.Context, who caller, m Query) (backend.DataResponse, error) {
	if m.Run != "" && !validRun(m.Run) {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest,
			"run %q is not a run request (unix milliseconds, a dash and 16 to 64 hex digits); press Execute to run the trace", cut(m.Run, 40))
	}
	state, id := runStale, ""
	if m.Run != "" {
		if err := d.checkTrace(m); err != nil { // a bad query does not use up its request
			return backend.DataResponse{}, err
		}
		state, id = d.runs.claim(m.Run, d.settings.mayTrace(who))
	}
	switch {
	case state == runRefused:
		return backend.DataResponse{}, d.settings.roleRefusal(who, "trace")
	case state == runFresh && m.Live:
		return d.startLive(ctx, who, m)
	case state == runFresh:
		o, err := d.prepare(ctx, m)
		if err != nil {
			return backend.DataResponse{}, err
		}
		e, err := d.runTrace(ctx, who, o)
		if err != nil {
			return backend.DataResponse{}, err
		}
		d.runs.done(m.Run, e.ID)
		d.step("building frames")
		return d.build(e, m)
	case id != "":
		m.TraceID = id
	case state == runUsed:
		return notice(noticeRunUsed), nil
	}
	if m.TraceID == "" {
		return notice(noticeNotRun), nil
	}
	return d.stored(ctx, m)
}

// checkTrace refuses a trace query that could not run, before its run
// request is used: bad options, or a query hash that is not one (its
// statement is looked up only when the request is fresh).
func (d *Datasource) checkTrace(m Query) error {
	if m.QueryHash != "" {
		if strings.TrimSpace(m.SQL) != "" {
			return pluginErr(backend.StatusBadRequest, "give sql or queryHash, not both")
		}
		if _, err := sqlconn.ParseQueryHash(strings.TrimSpace(m.QueryHash)); err != nil {
			return pluginErr(backend.StatusBadRequest, "queryHash: %v", err)
		}
		return nil
	}
	if _, err := m.traceOptions(d.settings); err != nil {
		return pluginErr(backend.StatusBadRequest, "%v", err)
	}
	return nil
}

// prepare makes the tracer's options of a trace query, looking the
// statement of a query hash up first (queryhash.go); its parameters travel
// as arguments, never in the text.
func (d *Datasource) prepare(ctx context.Context, m Query) (tracer.Options, error) {
	var params *sqlconn.Params
	if m.QueryHash != "" {
		var err error
		if m, params, err = d.resolveQueryHash(ctx, m); err != nil {
			return tracer.Options{}, err
		}
	}
	o, err := m.traceOptions(d.settings)
	if err != nil {
		return o, pluginErr(backend.StatusBadRequest, "%v", err)
	}
	o.Params = params
	return o, nil
}

// What a trace query that runs nothing says (a notice on an empty frame:
// Grafana shows it on the panel without marking the query failed).
const (
	noticeNotRun = "This trace has not run: a trace runs only when you press Execute in the query editor " +
		"(or a dashboard link asks for a run), never on dashboard load, refresh or time-range change. Press Execute to run it."
	noticeRunUsed = "This run request has been used already; its trace is still running or did not finish. " +
		"Press Execute to run the trace again."
)

func notice(text string) backend.DataResponse {
	f := data.NewFrame("notice")
	f.SetMeta(&data.FrameMeta{Notices: []data.Notice{{Severity: data.NoticeSeverityInfo, Text: text}}})
	return backend.DataResponse{Frames: data.Frames{f}}
}

// cut shortens s for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// probe runs a probe query: the one query type that runs on schedule (it
// is what alert rules evaluate), so it must be read-only and may not clear
// the buffer pool.
func (d *Datasource) probe(ctx context.Context, who caller, m Query) (backend.DataResponse, error) {
	if m.QueryHash != "" {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "queryHash is for trace queries, not %s", m.QueryType)
	}
	o, err := m.traceOptions(d.settings)
	if err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
	}
	if !d.settings.mayProbe(who) {
		return backend.DataResponse{}, d.settings.roleRefusal(who, "probe")
	}
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
	if o.ClearBufferPool {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest,
			"probe refused: options.clearBufferPool would run DBCC DROPCLEANBUFFERS on every evaluation; a probe runs on schedule, so it traces the cache as it is")
	}
	e, err := d.runTrace(ctx, who, o)
	if err != nil {
		return backend.DataResponse{}, err
	}
	f, err := frames.Probe(d.source(e))
	if err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusInternal, "%v", err)
	}
	if f, err = frames.SelectProbeMetrics(f, m.Metrics); err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
	}
	return backend.DataResponse{Frames: data.Frames{f}}, nil
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
	return &frames.Source{TraceID: e.ID, Bundle: e.Bundle, Runtime: r.counters, Findings: r.findings, CPUMs: statementCPU(r.plan)}
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
		if len(st.Operators) > 0 {
			return frames.RuntimeOf(st)
		}
	}
	return nil
}

func ptr(v int64) *int64 { return &v }

// statementCPU is the traced statement's CPU time (QueryTimeStats
// CpuTime, ms); nil when the plan has no QueryTimeStats.
func statementCPU(st *showplan.Statement) *int64 {
	if st == nil || st.TimeStats == nil {
		return nil
	}
	return ptr(st.TimeStats.CPUMs)
}

// notFound is a helper for resources.
func notFound(id string) error { return fmt.Errorf("trace %s: %w", id, tracestore.ErrNotFound) }
