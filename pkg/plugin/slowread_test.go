package plugin

import (
	"testing"
)

// go-mssqldb's "connection timeout" is not only the login's: it sets a
// deadline before every read and write for the connection's whole life
// (go-mssqldb net.go, timeoutConn). A DSN carrying connectTimeoutSeconds as
// "connection timeout" makes any trace whose server stays silent longer —
// a query that runs a while before its first row, a long read-back — fail
// with an i/o timeout. connectTimeoutSeconds must bound connecting only;
// the trace is bounded by traceTimeout.
func TestTraceOutlastsTheConnectTimeout(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "slow", map[string]any{"connectTimeoutSeconds": 1})
	r := run(t, d, bg, query("S", map[string]any{"queryType": "trace", "sql": "WAITFOR DELAY '00:00:03'; SELECT COUNT(*) FROM dbo.Orders"}))["S"]
	fs := ok(t, r)
	if got := summarize(t, fs); got.events == 0 {
		t.Error("the trace read no events")
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Errorf("sessions left: %v", s)
	}
}
