package tracer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// tableContents fingerprints every row of the demo tables: equal
// fingerprints before and after mean no row changed.
func tableContents(t testing.TB, db *sql.DB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := sha256.New()
	for _, table := range []string{"dbo.Customers", "dbo.Products", "dbo.Orders", "dbo.OrderLines"} {
		lines := rowStrings(t, ctx, db, "SELECT * FROM "+table)
		slices.Sort(lines)
		fmt.Fprintf(h, "%s %d\n%s\n", table, len(lines), strings.Join(lines, "\n"))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestCorpusAgainstStandin traces the whole safety corpus against the
// stand-in: the refused inputs send nothing at all, the others are traced
// (or answered with the stand-in's honest error) and verified rolled back;
// afterwards not one row of the demo tables changed and no session is left.
func TestCorpusAgainstStandin(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	before := tableContents(t, db)
	traced, answered := 0, 0
	for _, c := range tsqlcorpus.Cases {
		sent := len(log.texts())
		b, err := tr.Trace(context.Background(), Options{SQL: c.SQL, Timeout: 20 * time.Second})
		var re *tsql.RefusedError
		var ended *TransactionEndedError
		switch {
		case c.Refuse != "":
			if !errors.As(err, &re) {
				t.Errorf("%q: %v, want a refusal", c.SQL, err)
			}
			if _, cerr := tsql.ClassifyWith(c.SQL, tsql.Options{UserProcedures: true}); cerr != nil {
				if n := len(log.texts()); n != sent {
					t.Errorf("%q: refused, yet %d statements reached the server", c.SQL, n-sent)
				}
				break
			}
			// a call of a user procedure is refused once its definition
			// is read: only the connections' identity and catalog reads
			// may have reached the server (procedures.go)
			for _, q := range log.texts()[sent:] {
				if strings.Contains(q, "EVENT SESSION") || strings.Contains(q, "BEGIN TRANSACTION") || strings.Contains(q, c.SQL) {
					t.Errorf("%q: refused, yet %q reached the server", c.SQL, q)
				}
			}
		case strings.TrimSpace(c.SQL) == "":
			if !errors.As(err, &re) {
				t.Errorf("empty batch: %v", err)
			}
		case errors.As(err, &ended) || errors.As(err, &re):
			t.Errorf("%q: %v", c.SQL, err)
		case err != nil:
			answered++ // the stand-in's SQL Server error for what it does not support
		case !b.Result.RolledBack:
			t.Errorf("%q: traced, but QueryReplay's transaction was not verified rolled back", c.SQL)
		default:
			traced++
		}
		if s := sessions(t, db); len(s) != 0 {
			t.Fatalf("%q left sessions %v", c.SQL, s)
		}
	}
	waitNoOpenTransactions(t, db)
	if after := tableContents(t, db); after != before {
		t.Fatal("the corpus changed data")
	}
	if traced < 40 {
		t.Errorf("only %d corpus inputs traced end to end", traced)
	}
	t.Logf("%d inputs: %d traced, %d answered with the stand-in's error, the rest refused; no row changed, no session left", len(tsqlcorpus.Cases), traced, answered)
}

func logHas(recs []bundle.LogRecord, op string) bool {
	return slices.ContainsFunc(recs, func(r bundle.LogRecord) bool { return r.Operation == op })
}

// TestTransactionEndedIsCaught: a batch that ended or replaced QueryReplay's
// transaction in a way the classifier cannot see (a committing trigger,
// modelled by a stand-in fault; or the classifier bypassed) fails the trace
// with TransactionEndedError, and the bundle says rolledBack false and
// shows the commit in the log records. A nested BEGIN/COMMIT, which leaves
// the transaction open, is verified and rolled back.
func TestTransactionEndedIsCaught(t *testing.T) {
	cases := []struct {
		name      string
		sql       string
		skip      bool
		fault     func(*standin.Faults)
		ended     bool
		replaced  bool
		permanent bool
	}{
		{"trigger commits", updateSQL, false, func(f *standin.Faults) { f.EndTransactionIn("VALUES (100001") }, true, false, true},
		{"trigger commits and begins again", updateSQL, false, func(f *standin.Faults) { f.ReplaceTransactionIn("VALUES (100001") }, true, true, true},
		{"1COMMIT past the classifier", "UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1COMMIT", true, nil, true, false, true},
		{"COMMIT then BEGIN past the classifier", "UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1; COMMIT; BEGIN TRAN", true, nil, true, true, true},
		{"nested BEGIN and COMMIT", "BEGIN TRAN; UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1; COMMIT", true, nil, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := startStandin(t)
			tr, _, db := newTracer(t, srv.dsn, Policy{})
			before := checksum(t, db)
			if c.fault != nil {
				c.fault(srv.running.Faults())
			}
			b, err := tr.Trace(context.Background(), Options{SQL: c.sql, skipClassifier: c.skip})
			var ended *TransactionEndedError
			if errors.As(err, &ended) != c.ended {
				t.Fatalf("error %v; want a TransactionEndedError: %v", err, c.ended)
			}
			if c.ended {
				if ended.Replaced != c.replaced || !strings.Contains(err.Error(), "the batch ended QueryReplay's transaction") ||
					!strings.Contains(err.Error(), "may be permanent") {
					t.Errorf("error %q (replaced %v, want %v)", err, ended.Replaced, c.replaced)
				}
				if b == nil || b.Result.RolledBack {
					t.Fatalf("bundle %v: want one, with rolledBack false", b)
				}
				if !logHas(b.Result.LogRecords, "LOP_COMMIT_XACT") {
					t.Errorf("the bundle's log records do not show the commit: %+v", b.Result.LogRecords)
				}
			} else if err != nil || !b.Result.RolledBack {
				t.Fatalf("nested transaction: %v (rolled back %v)", err, b != nil && b.Result.RolledBack)
			}
			if changed := checksum(t, db) != before; changed != c.permanent {
				t.Errorf("data changed: %v, want %v", changed, c.permanent)
			}
			if s := sessions(t, db); len(s) != 0 {
				t.Errorf("sessions left: %v", s)
			}
			waitNoOpenTransactions(t, db)
		})
	}
}

// TestSetOptionsCannotStopCleanup: with the classifier out of the way, the
// SET options a batch can leave on its connection (NOEXEC, FMTONLY and
// PARSEONLY make later statements compile without running; ROWCOUNT and
// TEXTSIZE cut results) neither leave the session behind nor keep the
// transaction from being verified and rolled back, nor cut the log records
// or the events read back.
func TestSetOptionsCannotStopCleanup(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	base, err := tr.Trace(context.Background(), Options{SQL: updateSQL})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"SET NOEXEC ON", "SET FMTONLY ON", "SET PARSEONLY ON", "SET ROWCOUNT 1", "SET TEXTSIZE 16"} {
		t.Run(opt, func(t *testing.T) {
			b, err := tr.Trace(context.Background(), Options{SQL: opt + "; " + updateSQL, skipClassifier: true})
			if err != nil {
				t.Fatal(err)
			}
			if !b.Result.RolledBack {
				t.Error("QueryReplay's transaction was not verified rolled back")
			}
			if s := sessions(t, db); len(s) != 0 {
				t.Fatalf("sessions left: %v", s)
			}
			if after := checksum(t, db); after != before {
				t.Fatal("data changed")
			}
			if opt == "SET ROWCOUNT 1" || opt == "SET TEXTSIZE 16" {
				// the batch ran: its log records and events are all there
				if len(b.Result.LogRecords) != len(base.Result.LogRecords) || b.Result.BadRows != 0 || b.Result.Events < base.Result.Events {
					t.Errorf("%d log records (want %d), %d events (want %d), %d bad rows", len(b.Result.LogRecords), len(base.Result.LogRecords), b.Result.Events, base.Result.Events, b.Result.BadRows)
				}
			}
		})
	}
	waitNoOpenTransactions(t, db)
}

// killedSPID finds the KILL the tracer sent.
func killedSPID(log *stmtLog) (int, int) {
	for i, s := range log.texts() {
		var n int
		if j := strings.Index(s, "KILL "); j >= 0 {
			if _, err := fmt.Sscanf(s[j:], "KILL %d", &n); err == nil {
				return n, i
			}
		}
	}
	return 0, -1
}

func indexOf(log *stmtLog, sub string) int {
	return slices.IndexFunc(log.texts(), func(s string) bool { return strings.Contains(s, sub) })
}

// TestDeadlineStopsSessionAtOnceAndKills: a batch that outlives its
// timeout has the session stopped at once, then the traced session KILLed
// from the control connection; the trace ends promptly with a clear error,
// the data is unchanged and nothing is left.
func TestDeadlineStopsSessionAtOnceAndKills(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	srv.running.Faults().Delay("VALUES (100001", time.Minute)
	start := time.Now()
	_, err := tr.Trace(context.Background(), Options{SQL: updateSQL, Timeout: 500 * time.Millisecond})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the trace took %s past a 500ms timeout", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "outlived its timeout of 500ms") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("error %v: want it to say the batch outlived its timeout and was killed", err)
	}
	spid, kill := killedSPID(log)
	stop := indexOf(log, "STATE = STOP")
	if spid == 0 || stop < 0 || stop > kill {
		t.Fatalf("want STOP and then KILL of the traced session: stop at %d, kill of %d at %d", stop, spid, kill)
	}
	if slices.Contains(srv.running.Faults().SPIDs(), spid) {
		t.Errorf("the traced session %d is still connected", spid)
	}
	assertNothingLeft(t, db, before)
}

// TestLostTracedConnectionStopsSession: when the traced connection is lost
// mid-batch, the session is stopped at once from the control connection.
func TestLostTracedConnectionStopsSession(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	srv.running.Faults().DropConnection("VALUES (100001")
	_, err := tr.Trace(context.Background(), Options{SQL: updateSQL})
	if err == nil || !strings.Contains(err.Error(), "traced connection was lost") {
		t.Fatalf("error %v", err)
	}
	stop, drop := indexOf(log, "STATE = STOP"), indexOf(log, "DROP EVENT SESSION")
	if stop < 0 || stop > drop {
		t.Errorf("the session was not stopped at once: STOP at %d, DROP at %d", stop, drop)
	}
	assertNothingLeft(t, db, before)
}

// identityOf reads a connection's session id and login time.
func identityOf(t *testing.T, c *sql.Conn) SessionOwner {
	t.Helper()
	var o SessionOwner
	if err := c.QueryRowContext(context.Background(), sqlSessionIdentity).Scan(&o.SPID, &o.LoginTime); err != nil {
		t.Fatal(err)
	}
	return o
}

func createSession(t *testing.T, db *sql.DB, name string, start bool) {
	t.Helper()
	s := SessionSpec{Name: name, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}
	if _, err := db.Exec(s.CreateDDL()); err != nil {
		t.Fatal(err)
	}
	if start {
		if _, err := db.Exec(s.StartDDL()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSweepByOwner: the sweep drops a session as soon as its owner is
// gone, whatever its age; keeps one whose owner lives, whatever the grace;
// uses the grace only for sessions that name no owner, or when the login
// cannot see other sessions; and never touches the exporter's or another
// tool's sessions.
func TestSweepByOwner(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	ctx := context.Background()
	ownerConn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ownerConn.Close()
	owner := identityOf(t, ownerConn)
	alive, err := NewOwnedSessionName(owner)
	if err != nil {
		t.Fatal(err)
	}
	gone, _ := NewOwnedSessionName(SessionOwner{SPID: 999, LoginTime: time.Now()})
	reused, _ := NewOwnedSessionName(SessionOwner{SPID: owner.SPID, LoginTime: owner.LoginTime.Add(-time.Hour)}) // the id now serves another connection
	oldUnowned := orphanName(t, time.Now().Add(-2*time.Hour))
	youngUnowned := orphanName(t, time.Now())
	const exporter, foreign = "queryreplay_exporter_prod", "QueryReplay_1558c1fe10524e4f1558c1fe10524e4f"
	for _, n := range []string{alive, gone, reused, oldUnowned, youngUnowned, exporter, foreign} {
		createSession(t, db, n, n != youngUnowned)
	}
	// A login without VIEW SERVER STATE cannot tell owners apart: it goes
	// by age only, and so tries the old unowned session alone (and, lacking
	// ALTER ANY EVENT SESSION too, fails to drop it).
	reader, _, _ := newTracer(t, standin.DSN("reader", "Reader-Pass1", srv.running.Addr, "QueryReplayDemo"), Policy{})
	rep, err := reader.Sweep(ctx, time.Hour)
	if !rep.ByAgeOnly || len(rep.Dropped) != 0 || err == nil || !strings.Contains(err.Error(), oldUnowned) || strings.Contains(err.Error(), gone) {
		t.Fatalf("reader's sweep: %+v, %v; want only %s tried, by age", rep, err, oldUnowned)
	}
	rep, err = tr.Sweep(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rep.Dropped)
	want := []string{gone, reused, oldUnowned}
	slices.Sort(want)
	if rep.ByAgeOnly || !slices.Equal(rep.Dropped, want) {
		t.Fatalf("sweep dropped %v, want the sessions whose owner is gone: %v", rep.Dropped, want)
	}
	left := sessions(t, db)
	slices.Sort(left)
	keep := []string{alive, exporter, youngUnowned}
	slices.Sort(keep)
	if !slices.Equal(left, keep) {
		t.Fatalf("left %v, want %v", left, keep)
	}
	// the owner goes: its session goes with the next sweep, grace or not
	ownerConn.Close()
	waitOwnerGone(t, db, alive)
	if n, err := tr.SweepOrphans(ctx, 24*time.Hour); err != nil || n != 1 {
		t.Fatalf("after the owner left: SweepOrphans = %d, %v; want 1", n, err)
	}
	var others int
	db.QueryRow("SELECT COUNT(*) FROM sys.server_event_sessions WHERE name IN (N'" + exporter + "', N'" + foreign + "')").Scan(&others)
	if others != 2 {
		t.Fatal("the sweep dropped the exporter's or another tool's session")
	}
}

// --- network faults ---

// tcpProxy forwards 127.0.0.1 connections to the stand-in and can stop
// forwarding: a connection whose client bytes contain freezeOn, every
// existing connection (freezeAll), and new connections after freezeAll —
// accepting bytes and never answering, as a broken proxy or a dead network
// path does.
type tcpProxy struct {
	ln         net.Listener
	target     string
	mu         sync.Mutex
	freezeOn   []byte
	allOnMatch bool // the match freezes every connection, and new ones
	frozen     bool
	conns      []*proxied
	// after: a connection whose client bytes contain one of these texts
	// forwards them, then stops forwarding both ways (the server runs the
	// request and its reply is lost); afterHits counts the matches.
	after     [][]byte
	afterHits []int
}

type proxied struct {
	client, server net.Conn
	mu             sync.Mutex
	frozen         bool
}

func (p *proxied) isFrozen() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.frozen }
func (p *proxied) freeze()        { p.mu.Lock(); p.frozen = true; p.mu.Unlock() }

func startProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pc := &proxied{client: c, server: s}
		p.mu.Lock()
		p.conns = append(p.conns, pc)
		if p.frozen {
			pc.freeze()
		}
		p.mu.Unlock()
		go p.pipe(pc, c, s, true)
		go p.pipe(pc, s, c, false)
	}
}

func (p *tcpProxy) pipe(pc *proxied, from, to net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			match := fromClient && len(p.freezeOn) > 0 && bytes.Contains(buf[:n], p.freezeOn)
			all := p.allOnMatch
			after := fromClient && p.matchAfter(buf[:n])
			p.mu.Unlock()
			switch {
			case match && all:
				p.freezeAll()
			case match:
				pc.freeze() // swallow this request and everything after it
			}
			if !pc.isFrozen() {
				if _, err := to.Write(buf[:n]); err != nil {
					return
				}
			}
			if after {
				pc.freeze()
			}
		}
		if err != nil {
			return
		}
	}
}

// matchAfter counts and reports a match of an after rule (p.mu held).
func (p *tcpProxy) matchAfter(b []byte) bool {
	hit := false
	for i, a := range p.after {
		if bytes.Contains(b, a) {
			p.afterHits[i]++
			hit = true
		}
	}
	return hit
}

// freezeAfterText adds an after rule for text; the returned function
// tells how many connections it froze.
func (p *tcpProxy) freezeAfterText(text string) func() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := len(p.after)
	p.after = append(p.after, utf16LE(text))
	p.afterHits = append(p.afterHits, 0)
	return func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.afterHits[i]
	}
}

// utf16LE is text as TDS carries it.
func utf16LE(text string) []byte {
	var b bytes.Buffer
	for _, u := range utf16.Encode([]rune(text)) {
		b.WriteByte(byte(u))
		b.WriteByte(byte(u >> 8))
	}
	return b.Bytes()
}

// freezeOnText freezes the connection that sends text (as TDS carries it:
// UTF-16LE).
func (p *tcpProxy) freezeOnText(text string) {
	p.mu.Lock()
	p.freezeOn = utf16LE(text)
	p.mu.Unlock()
}

func (p *tcpProxy) freezeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
	for _, c := range p.conns {
		c.freeze()
	}
}

func (p *tcpProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.client.Close()
		c.server.Close()
	}
}

// dsnVia points a stand-in DSN at addr.
func dsnVia(t *testing.T, dsn, addr string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

func proxiedTracer(t *testing.T, dsn string) (*Tracer, *stmtLog) {
	o, err := NewDSNOpener(dsn)
	if err != nil {
		t.Fatal(err)
	}
	log := &stmtLog{}
	return New(&recOpener{open: o, log: log}, Policy{}, nil), log
}

// shorten sets the package's wait limits for a test and restores them.
func shorten(t *testing.T, idle, abort time.Duration) {
	ci, at := controlIdle, abortTimeout
	controlIdle, abortTimeout = idle, abort
	t.Cleanup(func() { controlIdle, abortTimeout = ci, at })
}

// TestSilentTracedConnectionEndsWithinTimeout: behind a proxy that stops
// forwarding the traced connection once the batch is sent, the trace ends
// at its timeout with a clear error; the control connection stops the
// session, KILLs the traced session and drops the session: nothing is left
// and no data changed.
func TestSilentTracedConnectionEndsWithinTimeout(t *testing.T) {
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	p := startProxy(t, srv.running.Addr)
	p.freezeOnText("VALUES (100001")
	tr, log := proxiedTracer(t, dsnVia(t, srv.dsn, p.ln.Addr().String()))
	start := time.Now()
	_, err := tr.Trace(context.Background(), Options{SQL: updateSQL, Timeout: 2 * time.Second})
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Errorf("the trace took %s; its timeout is 2s", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "outlived its timeout of 2s") {
		t.Fatalf("error %v", err)
	}
	if spid, _ := killedSPID(log); spid == 0 || slices.Contains(srv.running.Faults().SPIDs(), spid) {
		t.Errorf("the traced session (%d) was not killed", spid)
	}
	assertNothingLeft(t, db, before)
}

// TestSilentNetworkEverywhereIsBounded: when the proxy stops forwarding
// everything — the control connection and new connections too — the trace
// still ends within its timeout plus the documented budgets, says that the
// session may be left and how it will go; once the network path is gone the
// next sweep drops it at once.
func TestSilentNetworkEverywhereIsBounded(t *testing.T) {
	shorten(t, 2*time.Second, 2*time.Second)
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	p := startProxy(t, srv.running.Addr)
	p.freezeOnText("VALUES (100001")
	p.allOnMatch = true
	tr, _ := proxiedTracer(t, dsnVia(t, srv.dsn, p.ln.Addr().String()))
	start := time.Now()
	_, err := tr.Trace(context.Background(), Options{SQL: updateSQL, Timeout: time.Second, cleanupBudget: 2 * time.Second})
	if elapsed := time.Since(start); elapsed > 9*time.Second {
		t.Errorf("the trace took %s: timeout 1s, abort 2s, cleanup 2s", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "outlived its timeout") || !strings.Contains(err.Error(), "sweep") {
		t.Fatalf("error %v: want the timeout, and how the session left behind will go", err)
	}
	p.close() // the path is gone: the server ends both sessions
	direct, _, _ := newTracer(t, srv.dsn, Policy{})
	// each sweep drops what the server already counts as ownerless; the
	// server ends the proxied sessions a moment after the close
	testenv.Poll(5*time.Second, func() bool {
		if _, err := direct.SweepOrphans(context.Background(), time.Hour); err != nil {
			t.Fatal(err)
		}
		return len(sessions(t, db)) == 0
	})
	assertNothingLeft(t, db, before)
}

// --- secrets ---

// TestNoSecretInLogsErrorsBundlesOrProgress: a password full of the
// characters that break redaction never appears in a log line, an error, a
// bundle or a progress report — on success and on every kind of failure.
func TestNoSecretInLogsErrorsBundlesOrProgress(t *testing.T) {
	const pw = "Zq7@Wx9;Sup3r}Secret%41"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{User: "sa", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	good := run.DSN
	var out bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	check := func(what, text string) {
		t.Helper()
		for _, s := range append(segment.FindAllString(pw, -1), pw, url.QueryEscape(pw), url.PathEscape(pw)) {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q:\n%s", what, s, text)
			}
		}
	}
	var progress bytes.Buffer
	trace := func(dsn string) (*bundle.Bundle, error) {
		o, err := NewDSNOpener(dsn)
		if err != nil {
			return nil, err
		}
		tr := New(o, Policy{}, logger)
		return tr.Trace(context.Background(), Options{SQL: updateSQL, Timeout: 3 * time.Second,
			Progress: func(p Progress) { fmt.Fprintf(&progress, "%+v\n", p) }})
	}
	b, err := trace(good)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := bundle.Write(&js, b); err != nil {
		t.Fatal(err)
	}
	check("the bundle", js.String())
	for name, dsn := range map[string]string{
		"wrong password":   standin.DSN("sa", pw+"x", run.Addr, "QueryReplayDemo"),
		"malformed":        "sqlserver://sa:" + pw + "@127.0.0.1:1?database=a&database=b",
		"unreachable":      "sqlserver://sa:" + url.QueryEscape(pw) + "@127.0.0.1:1?dial+timeout=1",
		"ado":              "server=127.0.0.1,1;user id=sa;password={" + pw + "};dial timeout=1",
		"odbc":             "odbc:server=127.0.0.1,1;uid=sa;pwd={" + strings.ReplaceAll(pw, "}", "}}") + "};dial timeout=1",
		"ado unterminated": "server=127.0.0.1,1;user id=sa;password=\"" + pw,
	} {
		_, err := trace(dsn)
		if err == nil {
			t.Errorf("%s: the trace succeeded", name)
			continue
		}
		check(name+" error", err.Error())
		check(name+" redacted DSN", RedactDSN(dsn))
	}
	check("the log", out.String())
	check("the progress reports", progress.String())
	if !strings.Contains(out.String(), "level=") {
		t.Log("no log lines were written")
	}
}

// TestConnectorOpener: connections from caller-built connectors carry the
// network guard too, and trace.
func TestConnectorOpener(t *testing.T) {
	srv := startStandin(t)
	o := ConnectorOpener{New: func() (*mssql.Connector, error) { return mssql.NewConnector(srv.dsn) }}
	c, err := o.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := c.(*guardedSQLConn); !ok || g.guard == nil {
		t.Fatalf("connection %T is not guarded", c)
	}
	discard(c)
	b, err := New(o, Policy{}, nil).Trace(context.Background(), Options{SQL: selectSQL})
	if err != nil || !b.Result.RolledBack || b.Result.Events == 0 {
		t.Fatalf("trace: %v", err)
	}
}

// TestCleanupUsesItsWholeBudget: when the control connection is lost at
// DROP and the server refuses the next logins for several seconds, the
// cleanup keeps retrying with backoff until it drops the session — it does
// not give up after a second and a half of a 30-second budget.
func TestCleanupUsesItsWholeBudget(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	f := srv.running.Faults()
	f.DropConnection("DROP EVENT SESSION") // the control connection's DROP
	f.DropConnection("DROP EVENT SESSION") // the watchdog connection's, in the cleanup
	// the stand-in drops the next logins; the backoff (50 ms doubling to
	// 2 s) spends about 6 s on seven of them
	start := time.Now()
	_, err := tr.Trace(context.Background(), Options{SQL: selectSQL, cleanupBudget: 20 * time.Second,
		Progress: func(p Progress) {
			if p.Step == "stopping" {
				f.DropLogins(7)
			}
		}})
	if err == nil || strings.Contains(err.Error(), "the next trace's sweep") {
		t.Fatalf("error %v: want the lost connection, and the session dropped by the cleanup", err)
	}
	if took := time.Since(start); took < 3*time.Second {
		t.Errorf("the cleanup took %s: it should have had to retry for several seconds", took)
	}
	assertNothingLeft(t, db, before)
}

// TestLogRecordsAreTheTracesOwn: fn_dblog returns the whole active log; a
// bundle holds only the records of the trace's own transaction, never those
// another session writes meanwhile.
func TestLogRecordsAreTheTracesOwn(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	// the injected delay is what makes the other session's write land
	// inside the trace's transaction, not a wait
	srv.running.Faults().Delay("VALUES (100001", 300*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		// while the traced batch is held: once the trace's transaction is
		// open, the batch it runs in is next and the Delay holds it
		testenv.Poll(20*time.Second, func() bool {
			var n int
			return db.QueryRow("SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE open_transaction_count > 0").Scan(&n) == nil && n > 0
		})
		_, err := db.Exec("UPDATE dbo.Customers SET Name = Name WHERE CustomerID = 77")
		done <- err
	}()
	b, err := tr.Trace(context.Background(), Options{SQL: updateSQL})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(b.Result.LogRecords) == 0 {
		t.Fatal("no log records")
	}
	for _, r := range b.Result.LogRecords {
		if r.TransactionID != b.Result.LogRecords[0].TransactionID {
			t.Fatalf("a record of another transaction is in the bundle: %+v (the trace's: %s)", r, b.Result.LogRecords[0].TransactionID)
		}
	}
	if !logHas(b.Result.LogRecords, "LOP_BEGIN_XACT") || !logHas(b.Result.LogRecords, "LOP_INSERT_ROWS") {
		t.Errorf("the trace's own records are incomplete: %+v", b.Result.LogRecords)
	}
	assertNothingLeft(t, db, before)
}
