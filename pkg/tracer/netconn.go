package tracer

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// DSNOpener opens go-mssqldb connections whose network reads and writes
// have deadlines, so that a silent network — a proxy that accepts bytes and
// never answers, a cable pulled — cannot hang a trace: every read on a
// connection waits at most controlIdle for a byte (the login at most until
// the dial's deadline), except the traced batch's, which waits until the
// trace's deadline and no longer. Each Open dials a new connection with its
// own *sql.DB; closing the connection closes both, nothing is pooled.
type DSNOpener struct{ dsn string }

// NewDSNOpener checks dsn (its error never holds a secret) and returns an
// opener for it. A DSN that names no application gets sqlconn.TraceApp, so
// the exporter's session leaves the trace's own events out of production
// counts (docs/operations.md); one that names no packet size gets
// sqlconn.TracePacketSize.
func NewDSNOpener(dsn string) (*DSNOpener, error) {
	dsn = sqlconn.DefaultPacketSize(sqlconn.DefaultApp(dsn, sqlconn.TraceApp), sqlconn.TracePacketSize)
	if _, err := mssql.NewConnector(dsn); err != nil {
		return nil, fmt.Errorf("connection string %s: %w", RedactDSN(dsn), redactErr(err, dsn))
	}
	return &DSNOpener{dsn: dsn}, nil
}

// Open implements Opener.
func (o *DSNOpener) Open(ctx context.Context) (Conn, error) {
	connector, err := mssql.NewConnector(o.dsn)
	if err != nil {
		return nil, redactErr(err, o.dsn)
	}
	c, err := openGuarded(ctx, connector)
	return c, redactErr(err, o.dsn)
}

// ConnectorOpener is DSNOpener for callers that build go-mssqldb connectors
// themselves (the datasource: TLS, Kerberos and access-token settings): New
// makes a fresh connector for each Open. A Dialer already set on it still
// dials; the network guard wraps the connections it returns.
type ConnectorOpener struct {
	New func() (*mssql.Connector, error)
}

// Open implements Opener.
func (o ConnectorOpener) Open(ctx context.Context) (Conn, error) {
	connector, err := o.New()
	if err != nil {
		return nil, err
	}
	return openGuarded(ctx, connector)
}

// openGuarded opens one connection of connector through a guardDialer, on
// a *sql.DB of its own.
func openGuarded(ctx context.Context, connector *mssql.Connector) (Conn, error) {
	d := &guardDialer{inner: connector.Dialer}
	connector.Dialer = d
	if hd, ok := d.inner.(mssql.HostDialer); ok {
		connector.Dialer = hostGuardDialer{d, hd} // keep its own name resolution
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(0)
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	g := d.last()
	if g != nil {
		g.setLimits(controlIdle, time.Time{})
	}
	return &guardedSQLConn{Conn: c, db: db, guard: g}, nil
}

// guardedSQLConn is a connection opened by DSNOpener.
type guardedSQLConn struct {
	*sql.Conn
	db    *sql.DB
	guard *guardedNetConn // nil when the protocol did not dial TCP through the guard
}

func (c *guardedSQLConn) Close() error {
	err := c.Conn.Close()
	c.db.Close()
	return err
}

func (c *guardedSQLConn) setNetLimits(idle time.Duration, hard time.Time) {
	if c.guard != nil {
		c.guard.setLimits(idle, hard)
	}
}

// netLimiter is implemented by connections whose network waits can be
// bounded (DSNOpener's).
type netLimiter interface {
	setNetLimits(idle time.Duration, hard time.Time)
}

// setNetLimits bounds c's network waits when it can be: each read or write
// waits at most idle for progress (0: no idle limit) and never past hard
// (zero: none). Setting takes effect on a pending read at once.
func setNetLimits(c Conn, idle time.Duration, hard time.Time) {
	if l, ok := c.(netLimiter); ok {
		l.setNetLimits(idle, hard)
	}
}

// guardDialer dials TCP with inner, or like go-mssqldb's own dialer
// (keep-alive 30 s), and wraps the connection in a guard; the login may take
// until the dial context's deadline.
type guardDialer struct {
	inner mssql.Dialer
	mu    sync.Mutex
	conns []*guardedNetConn
}

func (d *guardDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	var err error
	if d.inner != nil {
		c, err = d.inner.DialContext(ctx, network, addr)
	} else {
		c, err = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
	}
	if err != nil || !strings.HasPrefix(network, "tcp") {
		return c, err // the SQL Browser's UDP query is not guarded
	}
	g := &guardedNetConn{Conn: c, idle: controlIdle}
	if dl, ok := ctx.Deadline(); ok {
		g.hard = dl
	}
	d.mu.Lock()
	d.conns = append(d.conns, g)
	d.mu.Unlock()
	return g, nil
}

// hostGuardDialer is a guardDialer over a HostDialer, which resolves names
// in its own network.
type hostGuardDialer struct {
	*guardDialer
	host mssql.HostDialer
}

func (h hostGuardDialer) HostName() string { return h.host.HostName() }

// last is the connection the session ended up on (a login may be routed,
// and redialled, elsewhere).
func (d *guardDialer) last() *guardedNetConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.conns) == 0 {
		return nil
	}
	return d.conns[len(d.conns)-1]
}

// guardedNetConn sets a deadline before every read and write: the nearest
// of now+idle, hard, and the deadline the driver itself set (go-mssqldb sets
// one when the DSN has a connection timeout).
type guardedNetConn struct {
	net.Conn
	mu   sync.Mutex
	idle time.Duration
	hard time.Time
	ext  time.Time
}

func (g *guardedNetConn) deadline() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	var d time.Time
	if g.idle > 0 {
		d = time.Now().Add(g.idle)
	}
	for _, t := range []time.Time{g.hard, g.ext} {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	return d
}

func (g *guardedNetConn) setLimits(idle time.Duration, hard time.Time) {
	g.mu.Lock()
	g.idle, g.hard = idle, hard
	g.mu.Unlock()
	_ = g.Conn.SetDeadline(g.deadline())
}

func (g *guardedNetConn) Read(b []byte) (int, error) {
	_ = g.Conn.SetReadDeadline(g.deadline())
	return g.Conn.Read(b)
}

func (g *guardedNetConn) Write(b []byte) (int, error) {
	_ = g.Conn.SetWriteDeadline(g.deadline())
	return g.Conn.Write(b)
}

func (g *guardedNetConn) SetDeadline(t time.Time) error {
	g.mu.Lock()
	g.ext = t
	g.mu.Unlock()
	return g.Conn.SetDeadline(g.deadline())
}

func (g *guardedNetConn) SetReadDeadline(t time.Time) error { return g.SetDeadline(t) }
