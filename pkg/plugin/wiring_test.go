package plugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// netPacketSize is the packet size the server negotiated with c.
func netPacketSize(t *testing.T, c tracer.Conn) int {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SELECT net_packet_size FROM sys.dm_exec_connections WHERE session_id = @@SPID")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		if err := rows.Scan(&size); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return size
}

// Traces dial their own connections through tracer.ConnectorOpener (with
// network read deadlines), not the health check's pool: opening one adds
// no connection to d.db, and a trace through it runs.
func TestTracesUseConnectorOpener(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	if _, ok := d.opener.(tracer.ConnectorOpener); !ok {
		t.Fatalf("the tracer opens connections with %T, want tracer.ConnectorOpener", d.opener)
	}
	before := d.db.Stats().OpenConnections
	c, err := d.opener.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(context.Background(), "SELECT @@SPID"); err != nil {
		t.Fatalf("SELECT @@SPID: %v", err)
	}
	// the trace's connections read every event's XML in 8,000-byte packets
	// (sqlconn.TracePacketSize), as the server negotiated them
	if size := netPacketSize(t, c); size != sqlconn.TracePacketSize {
		t.Fatalf("the trace connection's packet size is %d, want %d", size, sqlconn.TracePacketSize)
	}
	c.Close()
	if after := d.db.Stats().OpenConnections; after != before {
		t.Fatalf("the pool went from %d to %d connections: the opener used it", before, after)
	}
	fs := ok(t, run(t, d, context.Background(), query("A", map[string]any{"queryType": "trace", "sql": hashJoinSQL}))["A"])
	if ev, _ := frameNamed(t, fs, "trace").FieldByName("events"); ev == nil || ev.At(0).(int64) == 0 {
		t.Fatal("the trace through the opener read no events")
	}
}

// Settings.Redacted never holds a secret, whatever the authentication;
// connector errors are redacted by the DSN's own secrets.
func TestRedactedTargetsHoldNoSecret(t *testing.T) {
	for _, s := range []Settings{
		{Host: "db1", User: "sa", Password: "pw-Secret1", Database: "d"},
		{Host: "db1", User: "svc@REALM", Password: "pw-Secret1", AuthType: AuthWindows, KerberosRealm: "REALM", KerberosConfigFile: "/etc/krb5.conf"},
		{Host: "db1", User: "client-id", ClientSecret: "pw-Secret1", AuthType: AuthAzureAD, TenantID: "tenant"},
	} {
		if r := s.Redacted(); strings.Contains(r, "pw-Secret1") {
			t.Errorf("%s: Redacted shows the secret: %s", s.authType(), r)
		}
		dsn, err := s.DSN()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(dsn, "pw-Secret1") {
			t.Fatalf("%s: the DSN lacks its secret (the test is wrong): %s", s.authType(), tracer.RedactDSN(dsn))
		}
		leaky := errors.New("cannot use " + dsn)
		if got := tracer.RedactDSNError(leaky, dsn).Error(); strings.Contains(got, "pw-Secret1") {
			t.Errorf("%s: RedactDSNError keeps the secret: %s", s.authType(), got)
		}
	}
}
