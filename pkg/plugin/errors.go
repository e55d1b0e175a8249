package plugin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/pkg/tracestore"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// queryError is an error with the status and source its DataResponse gets.
type queryError struct {
	status backend.Status
	source backend.ErrorSource
	msg    string
}

func (e *queryError) Error() string { return e.msg }

func pluginErr(status backend.Status, format string, args ...any) *queryError {
	return &queryError{status: status, source: backend.ErrorSourcePlugin, msg: fmt.Sprintf(format, args...)}
}

func downstreamErr(status backend.Status, format string, args ...any) *queryError {
	return &queryError{status: status, source: backend.ErrorSourceDownstream, msg: fmt.Sprintf(format, args...)}
}

// response turns any error into the query's DataResponse.
func response(refID string, err error) backend.DataResponse {
	var qe *queryError
	if !errors.As(err, &qe) {
		qe = pluginErr(backend.StatusInternal, "%v", err)
	}
	return backend.ErrDataResponseWithSource(qe.status, qe.source, fmt.Sprintf("query %s: %s", refID, qe.msg))
}

// SQLServerErrorText formats a SQL Server error as SSMS prints it: every
// message the server sent, first to last, because the first is often the
// cause (a login to a missing database is Msg 4060, then Msg 18456).
func SQLServerErrorText(e mssql.Error) string {
	all := e.All
	if len(all) == 0 {
		all = []mssql.Error{e}
	}
	texts := make([]string, len(all))
	for i, m := range all {
		s := fmt.Sprintf("Msg %d, Level %d, State %d", m.Number, m.Class, m.State)
		if m.ProcName != "" {
			s += ", Procedure " + m.ProcName
		}
		texts[i] = fmt.Sprintf("%s, Line %d: %s", s, m.LineNo, m.Message)
	}
	return strings.Join(texts, "; ")
}

var refusedLine = regexp.MustCompile(`^line (\d+): `)

// traceError classifies what the tracer returned: SQL Server's own errors
// and unreachable servers are downstream; refusals name the statement;
// Grafana's cancellation and the timeout say what happened to the session.
func traceError(ctx context.Context, err error, sql string, timeout string) *queryError {
	var refused *tsql.RefusedError
	if errors.As(err, &refused) {
		return pluginErr(backend.StatusBadRequest, "%s", refusal(refused, sql))
	}
	var se mssql.Error
	if errors.As(err, &se) {
		step := strings.TrimSuffix(strings.SplitN(err.Error(), ": ", 2)[0], ":")
		where := ""
		if step != "" && !strings.HasPrefix(step, "mssql") && step != se.Error() {
			where = " (while the tracer was at: " + step + ")"
		}
		return downstreamErr(backend.StatusBadRequest, "SQL Server error %s%s", SQLServerErrorText(se), where)
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return downstreamErr(backend.StatusBadRequest, "the request was cancelled; the trace was stopped and its event session dropped")
	case errors.Is(err, context.DeadlineExceeded):
		return downstreamErr(backend.StatusTimeout, "the trace did not finish within %s; it was stopped and its event session dropped", timeout)
	case strings.HasPrefix(err.Error(), "connect:"):
		return downstreamErr(backend.StatusBadGateway, "cannot reach SQL Server: %v", err)
	}
	return pluginErr(backend.StatusInternal, "trace failed: %v", err)
}

// refusal names the refused statement: the classifier says "line N: why",
// and the line's text tells the user which statement that is.
func refusal(r *tsql.RefusedError, sql string) string {
	m := refusedLine.FindStringSubmatch(r.Reason)
	if m == nil {
		return r.Error()
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(sql, "\n")
	if n < 1 || n > len(lines) {
		return r.Error()
	}
	text := strings.TrimSpace(lines[n-1])
	if len(text) > 120 {
		text = text[:117] + "..."
	}
	return fmt.Sprintf("trace refused: line %d (%s): %s", n, text, strings.TrimPrefix(r.Reason, m[0]))
}

// storeError classifies a trace store failure.
func storeError(err error) *queryError {
	if errors.Is(err, tracestore.ErrNotFound) {
		return pluginErr(backend.StatusNotFound, "%v (it may have been removed by retention or never stored here; list the stored traces in the datasource's resources)", err)
	}
	if tracestore.IsBucketError(err) { // the bucket's service failed, not the plugin
		return downstreamErr(backend.StatusBadGateway, "trace store: %v", err)
	}
	return pluginErr(backend.StatusInternal, "trace store: %v", err)
}

func sqlServerError(err error) (mssql.Error, bool) {
	var se mssql.Error
	ok := errors.As(err, &se)
	return se, ok
}
