package plugin

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// hashOf reads, from the stand-in's plan cache, the query hash of the
// statement whose text holds marker.
func (f *fixture) hashOf(t *testing.T, marker string) string {
	t.Helper()
	rows, err := f.db.Query("SELECT qs.query_hash, st.text FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var h []byte
		var text string
		if err := rows.Scan(&h, &text); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, marker) && len(h) == 8 {
			return sqlconn.FormatQueryHash(binary.BigEndian.Uint64(h))
		}
	}
	t.Fatalf("no plan cache entry holds %q", marker)
	return ""
}

// A trace query may name a query hash instead of SQL: the datasource looks
// the statement up in the server's plan cache and traces it like any batch
// (the trace frame's statement is the cached one, whole). Lower-case hex is
// the same hash.
func TestTraceByQueryHash(t *testing.T) {
	f := startStandin(t)
	stmt := "SELECT COUNT(*) FROM dbo.Orders WHERE Amount > 100 AND Status <> N'" + strings.Repeat("z", 5000) + "'"
	if _, err := f.db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
	hash := f.hashOf(t, "Amount > 100 AND Status")
	d := f.datasource(t, "qh", nil)
	for _, h := range []string{hash, strings.ToLower(hash)} {
		r := run(t, d, context.Background(), query("A", map[string]any{"queryType": "trace", "queryHash": h}))["A"]
		tf := frameNamed(t, ok(t, r), "trace")
		if got := tf.Fields[1].At(0).(string); got != stmt {
			t.Fatalf("traced %d bytes %.60q…, want the cached statement whole (%d bytes)", len(got), got, len(stmt))
		}
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// A query hash the server does not hold, one that is not a hash, and a
// query that gives both SQL and a hash are refused before anything runs.
func TestTraceByQueryHashRefusals(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "qh", nil)
	cases := []struct {
		m      map[string]any
		status backend.Status
		source backend.ErrorSource
		words  []string
	}{
		{map[string]any{"queryType": "trace", "queryHash": "0x0123456789ABCDEF"}, backend.StatusNotFound, backend.ErrorSourceDownstream, []string{"0x0123456789ABCDEF", "not found"}},
		{map[string]any{"queryType": "trace", "queryHash": "12345"}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"16 hexadecimal digits"}},
		{map[string]any{"queryType": "trace", "queryHash": "0x0123456789ABCDEF", "sql": "SELECT 1"}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"not both"}},
		{map[string]any{"queryType": "probe", "queryHash": "0x0123456789ABCDEF"}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"trace queries"}},
	}
	for i, c := range cases {
		r := run(t, d, context.Background(), query(fmt.Sprint(i), c.m))[fmt.Sprint(i)]
		fails(t, r, c.status, c.source, c.words...)
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// The datasource's connections carry sqlconn.TraceApp, the name the
// exporter's session leaves out: a replay of a spilling query is not a
// production spill (pkg/exporter's TestOwnTracesAreNotProductionSpills).
func TestDatasourceConnectsAsTraceApp(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "app", nil)
	dsn, err := d.settings.DSN()
	if err != nil {
		t.Fatal(err)
	}
	c, err := msdsn.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if c.AppName != sqlconn.TraceApp {
		t.Fatalf("the datasource connects as %q, not %q", c.AppName, sqlconn.TraceApp)
	}
}
