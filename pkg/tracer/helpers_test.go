package tracer

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/internal/testsql"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// stmtLog records every statement the tracer sent, in order, per
// connection: what the server received, without needing a server-side log.
type stmtLog struct {
	mu    sync.Mutex
	stmts []recorded
	conns int
}

type recorded struct {
	conn int
	sql  string
}

func (l *stmtLog) add(conn int, q string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, recorded{conn, q})
}

// texts returns the statements, optionally without the session marker.
func (l *stmtLog) texts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.stmts))
	for i, s := range l.stmts {
		out[i] = s.sql
	}
	return out
}

// recConn records the statements sent on a connection; it passes on what
// discard and the network limits use.
type recConn struct {
	Conn
	id  int
	log *stmtLog
}

func (r *recConn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	r.log.add(r.id, q)
	return r.Conn.ExecContext(ctx, q, args...)
}

func (r *recConn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	r.log.add(r.id, q)
	return r.Conn.QueryContext(ctx, q, args...)
}

func (r *recConn) Raw(f func(any) error) error {
	if raw, ok := r.Conn.(interface{ Raw(func(any) error) error }); ok {
		return raw.Raw(f)
	}
	return nil
}

func (r *recConn) setNetLimits(idle time.Duration, hard time.Time) { setNetLimits(r.Conn, idle, hard) }

// recOpener numbers the connections it opens and records their statements.
type recOpener struct {
	open Opener
	log  *stmtLog
}

func (o *recOpener) Open(ctx context.Context) (Conn, error) {
	c, err := o.open.Open(ctx)
	if err != nil {
		return nil, err
	}
	o.log.mu.Lock()
	o.log.conns++
	id := o.log.conns
	o.log.mu.Unlock()
	return &recConn{Conn: c, id: id, log: o.log}, nil
}

// testServer is the stand-in, or a real server when QUERYREPLAY_TEST_DSN
// is set.
type testServer struct {
	dsn     string
	running *standin.Running // nil for a real server
}

func startStandin(t testing.TB, dirs ...string) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{ExtraLogins: map[string]string{"reader": "Reader-Pass1"}, Directories: dirs,
		XELEncoder: xe.EncodeXMLAsXEL})
	if err != nil {
		cancel()
		t.Fatalf("start stand-in: %v", err)
	}
	t.Cleanup(func() { run.Close(); cancel() })
	return &testServer{dsn: run.DSN, running: run}
}

// newTracer returns a tracer on srv that records statements.
func newTracer(t testing.TB, dsn string, p Policy) (*Tracer, *stmtLog, *sql.DB) {
	t.Helper()
	db, err := OpenDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := &stmtLog{}
	return New(&recOpener{open: DBOpener{DB: db}, log: log}, p, nil), log, db
}

// sessions lists the queryreplay_* event sessions on the server.
func sessions(t testing.TB, db *sql.DB) []string {
	t.Helper()
	return testsql.EventSessions(t, db, SessionPrefix)
}

// stripMarker removes the "/* queryreplay_… */ " marker and session name so
// statement sequences compare across runs.
func normalize(q, name string) string {
	q = strings.ReplaceAll(q, "/* "+name+" */ ", "")
	q = strings.ReplaceAll(q, name, "<session>")
	if h := strings.TrimPrefix(name, SessionPrefix); len(h) >= 28 {
		q = strings.ReplaceAll(q, "qr_"+h[:28], "qr_<txn>")
	}
	return q
}

// waitOwnerGone waits until the server no longer lists the session that
// owns event session name (its id with its login time, as the name
// encodes them): a client's closed socket is noticed by the server a
// moment later, and only then may a sweep judge the owner gone.
func waitOwnerGone(t testing.TB, db *sql.DB, name string) {
	t.Helper()
	spid, login, ok := SessionOwnerOf(name)
	if !ok {
		t.Fatalf("%s names no owner", name)
	}
	testenv.WaitFor(t, 10*time.Second, "the server to end the owner of "+name, func() bool {
		var at sql.NullTime
		err := db.QueryRow("SELECT login_time FROM sys.dm_exec_sessions WHERE session_id = @p1", spid).Scan(&at)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("look the owner up: %v", err)
		}
		return err != nil || !at.Valid || loginKey(at.Time) != login
	})
}

// waitInTransaction waits until a session has an open transaction: the
// tracer has begun the one it runs the traced batch in, and sends that
// batch next.
func waitInTransaction(t testing.TB, db *sql.DB) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, "a session with an open transaction", func() bool {
		return openTransactions(t, db) > 0
	})
}

// openTransactions counts the sessions with an open transaction.
func openTransactions(t testing.TB, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE open_transaction_count > 0").Scan(&n); err != nil {
		t.Fatalf("count open transactions: %v", err)
	}
	return n
}
