package sqlconn

import (
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// parsedDSN is dsn as go-mssqldb reads it.
func parsedDSN(t *testing.T, dsn string) msdsn.Config {
	t.Helper()
	c, err := msdsn.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %q: %v", dsn, err)
	}
	return c
}

func appOf(t *testing.T, dsn string) string {
	t.Helper()
	return parsedDSN(t, dsn).AppName
}

func TestWithAppOverridesEveryForm(t *testing.T) {
	for _, dsn := range []string{
		"sqlserver://u:p@127.0.0.1:1433?database=x",
		"sqlserver://u:p@127.0.0.1:1433?database=x&app+name=mine",
		"server=127.0.0.1;user id=u;password=p",
		"server=127.0.0.1;user id=u;password=p;app name=mine;",
	} {
		if got := appOf(t, WithApp(dsn, ExporterApp)); got != ExporterApp {
			t.Errorf("WithApp(%q): app %q, want %q", dsn, got, ExporterApp)
		}
	}
}

func TestDefaultAppKeepsANamedApp(t *testing.T) {
	cases := []struct{ dsn, want string }{
		{"sqlserver://u:p@127.0.0.1:1433", TraceApp},
		{"server=127.0.0.1;user id=u;password=p", TraceApp},
		{"sqlserver://u:p@127.0.0.1:1433?app+name=" + ExporterApp, ExporterApp},
		{"server=127.0.0.1;app name=mine", "mine"},
	}
	for _, c := range cases {
		if got := appOf(t, DefaultApp(c.dsn, TraceApp)); got != c.want {
			t.Errorf("DefaultApp(%q): app %q, want %q", c.dsn, got, c.want)
		}
	}
}

func FuzzDefaultApp(f *testing.F) {
	for _, s := range []string{"sqlserver://h", "server=h;app name=x", "odbc:server=h", "sqlserver://h?app+name=", ";;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		out := DefaultApp(dsn, TraceApp)
		c, err := msdsn.Parse(dsn)
		if err != nil {
			if out != dsn {
				t.Fatalf("an unparsable DSN changed: %q -> %q", dsn, out)
			}
			return
		}
		oc, err := msdsn.Parse(out)
		if err != nil {
			t.Fatalf("DefaultApp(%q) = %q does not parse: %v", dsn, out, err)
		}
		if c.AppName != driverDefaultApp && oc.AppName != c.AppName {
			t.Fatalf("a named app %q became %q", c.AppName, oc.AppName)
		}
		if oc.Host != c.Host || oc.Password != c.Password || oc.User != c.User {
			t.Fatalf("DefaultApp changed more than the app: %q -> %q", dsn, out)
		}
	})
}
