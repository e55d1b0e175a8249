package plugin

import (
	"net/url"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// traceConnector is Connector for the tracer's connections, without
// go-mssqldb's "connection timeout". That parameter is not only the
// login's: go-mssqldb sets it as a deadline before every read and write
// for the connection's whole life (its timeoutConn), so a traced batch that
// returns nothing for connectTimeoutSeconds — a long sort, a WAITFOR, a
// large event file being read back — would fail with an i/o timeout long
// before traceTimeout. The tracer's connections have deadlines of their own
// (tracer.ConnectorOpener: the login until the dial timeout, the control
// connection an idle limit, the traced batch the trace's deadline).
// d.db (the health check, the resources) keeps the parameter: its queries
// are short, and it bounds a login to a server that never answers. The
// tracer's connections also ask for sqlconn.TracePacketSize packets: they
// read every event's XML.
func (s Settings) traceConnector() (*mssql.Connector, error) {
	dsn, err := s.DSN()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return s.connectorFor(dsn) // DSN builds a URL: not reached
	}
	q := u.Query()
	q.Del("connection timeout")
	u.RawQuery = q.Encode()
	return s.connectorFor(sqlconn.DefaultPacketSize(u.String(), sqlconn.TracePacketSize))
}
