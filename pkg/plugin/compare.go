package plugin

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/compare"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// traceFindings analyses a stored trace with the default thresholds; nil
// when it has no timeline (the frames refuse that trace anyway).
func traceFindings(b *bundle.Bundle, plan *showplan.Plan) *findings.Report {
	if b.Trace == nil {
		return nil
	}
	rep, err := findings.Analyze(findings.FromBundle(b, plan), findings.DefaultConfig())
	if err != nil { // only an invalid Config errs, and the defaults are valid
		return nil
	}
	return rep
}

// compareTraces answers a compare query: two stored traces, matched by plan
// shape (docs/frames.md §3.11). Nothing runs on SQL Server.
func (d *Datasource) compareTraces(ctx context.Context, m Query) (backend.DataResponse, error) {
	if len(m.TraceIDs) != 2 || strings.TrimSpace(m.TraceIDs[0]) == "" || strings.TrimSpace(m.TraceIDs[1]) == "" {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest,
			"traceIds must name two stored traces (A, then B); got %d", len(m.TraceIDs))
	}
	var src [2]*frames.Source
	var sides [2]compare.Side
	for i, id := range m.TraceIDs {
		e, err := d.store.Get(ctx, id)
		if err != nil {
			return backend.DataResponse{}, storeError(err)
		}
		if e.Bundle.Trace == nil {
			return backend.DataResponse{}, pluginErr(backend.StatusInternal, "trace %s has no timeline", e.ID)
		}
		src[i] = d.source(e)
		sides[i] = compare.Side{Label: e.ID, Trace: e.Bundle.Trace, Plan: d.cached(e).plan, Statements: compare.StatementsOf(e.Bundle)}
	}
	res, err := compare.Compare(sides[0], sides[1])
	if err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusInternal, "%v", err)
	}
	req := frames.Request{MaxDataPoints: int(min(m.MaxDataPoints, frames.MaxDataPointsLimit)), Groups: m.Frames}
	if m.MaxDataPoints < 0 {
		req.MaxDataPoints = int(m.MaxDataPoints) // Validate names it
	}
	if err := req.Validate(); err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusBadRequest, "%v", err)
	}
	fs, err := frames.Compare(src[0], src[1], res, req)
	if err != nil {
		return backend.DataResponse{}, pluginErr(backend.StatusInternal, "build compare frames: %v", err)
	}
	return backend.DataResponse{Frames: fs}, nil
}
