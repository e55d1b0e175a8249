package sqlconn

import (
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// A DSN without a packet size gets the trace's; one that names a size
// keeps it, in both DSN forms.
func TestDefaultPacketSize(t *testing.T) {
	cases := []struct {
		dsn  string
		want uint16
	}{
		{"sqlserver://u:p@127.0.0.1:1433?database=db", TracePacketSize},
		{"sqlserver://u:p@127.0.0.1:1433", TracePacketSize},
		{"server=127.0.0.1;user id=u;password=p;", TracePacketSize},
		{"sqlserver://u:p@127.0.0.1:1433?packet+size=4096", 4096},
		{"server=127.0.0.1;packet size=16000", 16000},
	}
	for _, c := range cases {
		out := DefaultPacketSize(c.dsn, TracePacketSize)
		if got := parsedDSN(t, out).PacketSize; got != c.want {
			t.Errorf("DefaultPacketSize(%q) = %q: packet size %d, want %d", c.dsn, out, got, c.want)
		}
		if a, b := appOf(t, c.dsn), appOf(t, out); a != b {
			t.Errorf("DefaultPacketSize(%q) changed the app %q to %q", c.dsn, a, b)
		}
	}
}

func FuzzDefaultPacketSize(f *testing.F) {
	for _, s := range []string{"sqlserver://h", "server=h;packet size=512", "odbc:server=h", "sqlserver://h?packet+size=", ";;", "server=h;password={a;b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		out := DefaultPacketSize(dsn, TracePacketSize)
		c, err := msdsn.Parse(dsn)
		if err != nil {
			if out != dsn {
				t.Fatalf("an unparsable DSN changed: %q -> %q", dsn, out)
			}
			return
		}
		oc, err := msdsn.Parse(out)
		if err != nil {
			t.Fatalf("DefaultPacketSize(%q) = %q does not parse: %v", dsn, out, err)
		}
		if c.PacketSize != 0 && oc.PacketSize != c.PacketSize {
			t.Fatalf("a named packet size %d became %d", c.PacketSize, oc.PacketSize)
		}
		if oc.Host != c.Host || oc.Password != c.Password || oc.User != c.User || oc.Database != c.Database || oc.AppName != c.AppName {
			t.Fatalf("DefaultPacketSize changed more than the packet size: %q -> %q", dsn, out)
		}
	})
}
