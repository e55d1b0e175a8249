package sqlconn

import (
	"net/url"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// driverDefaultApp is the name go-mssqldb sends when a DSN names none
// (msdsn.Parse).
const driverDefaultApp = "go-mssqldb"

// Application names (the TDS LOGIN7 AppName, seen by the server as
// sqlserver.client_app_name and sys.dm_exec_sessions.program_name).
const (
	// TraceApp is the name of every connection a trace opens (the
	// datasource's and the CLI's): the exporter's session leaves events of
	// such connections out, so replaying a query never counts as a
	// production spill.
	TraceApp = "QueryReplay"
	// ExporterApp is the name of the exporter's own connections (polls and
	// probes), also left out of its counters.
	ExporterApp = "queryreplay-exporter"
)

// OwnApps lists every application name QueryReplay's connections use.
func OwnApps() []string { return []string{ExporterApp, TraceApp} }

// WithApp sets the client application name app on a DSN, overriding any
// name the DSN gives (URL form: the "app name" query parameter; ADO form:
// a trailing "app name=" pair, which go-mssqldb reads last-wins).
func WithApp(dsn, app string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme == "sqlserver" {
		q := u.Query()
		q.Del("app name")
		q.Set("app name", app)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimRight(dsn, "; ") + ";app name=" + app
}

// DefaultApp sets app on dsn when the DSN names no application (go-mssqldb
// would send its own default): a DSN that names one keeps it. A DSN that
// does not parse, or whose form WithApp cannot extend, is returned as it
// is (opening it reports the error).
func DefaultApp(dsn, app string) string {
	cfg, err := msdsn.Parse(dsn)
	if err != nil || cfg.AppName != driverDefaultApp {
		return dsn
	}
	with := WithApp(dsn, app)
	if c, err := msdsn.Parse(with); err != nil || c.AppName != app {
		return dsn
	}
	return with
}
