package tds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testHandler is a small scripted SQL "engine" for protocol tests. It knows a
// handful of fixed batch texts; anything else is an error 2812/102-like.
type testHandler struct {
	mu       sync.Mutex
	tm       []TransactionRequest
	rpcs     []*RPCCall
	batches  []*Batch
	logins   []*LoginRequest
	closed   int
	running  chan struct{} // receives when a "waitfor" batch starts
	canceled chan error    // receives context.Cause when "waitfor" ends
}

func newTestHandler() *testHandler {
	return &testHandler{running: make(chan struct{}, 16), canceled: make(chan error, 16)}
}

const testPassword = "Secret1"

func (h *testHandler) Login(ctx context.Context, s *Session, req *LoginRequest) (*LoginResult, error) {
	h.mu.Lock()
	h.logins = append(h.logins, req)
	h.mu.Unlock()
	switch {
	case req.User != "sa":
		return nil, &LoginError{State: 5, Reason: "Could not find a login matching the name provided."}
	case req.Password != testPassword:
		return nil, &LoginError{State: 8, Reason: "Password did not match that for the login provided."}
	case req.Database == "nodb":
		return nil, &Error{Number: 4060, Severity: 11, State: 1, Line: 1, Message: `Cannot open database "nodb" requested by the login. The login failed.`}
	}
	return &LoginResult{Session: &testSession{h: h, s: s}}, nil
}

func (h *testHandler) snapshotTM() []TransactionRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]TransactionRequest(nil), h.tm...)
}

func (h *testHandler) lastRPC() *RPCCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rpcs) == 0 {
		return nil
	}
	return h.rpcs[len(h.rpcs)-1]
}

type testSession struct {
	h *testHandler
	s *Session
}

// typeColumns is one column of every supported type; typeRow holds a value
// for each, in order.
var typeColumns = []Column{
	{Name: "i", TypeInfo: TypeInfo{Type: TypeInt}},
	{Name: "big", TypeInfo: TypeInfo{Type: TypeBigInt}},
	{Name: "small", TypeInfo: TypeInfo{Type: TypeSmallInt}},
	{Name: "tiny", TypeInfo: TypeInfo{Type: TypeTinyInt}},
	{Name: "b", TypeInfo: TypeInfo{Type: TypeBit}},
	{Name: "f", TypeInfo: TypeInfo{Type: TypeFloat}},
	{Name: "r", TypeInfo: TypeInfo{Type: TypeReal}},
	{Name: "dec", TypeInfo: TypeInfo{Type: TypeDecimal, Precision: 18, Scale: 4}},
	{Name: "nv", TypeInfo: TypeInfo{Type: TypeNVarChar, Length: 50}},
	{Name: "nvmax", TypeInfo: TypeInfo{Type: TypeNVarChar, Length: Max}},
	{Name: "v", TypeInfo: TypeInfo{Type: TypeVarChar, Length: 30}},
	{Name: "vmax", TypeInfo: TypeInfo{Type: TypeVarChar, Length: Max}},
	{Name: "x", TypeInfo: TypeInfo{Type: TypeXML}},
	{Name: "dt2", TypeInfo: TypeInfo{Type: TypeDateTime2, Scale: 7}},
	{Name: "dto", TypeInfo: TypeInfo{Type: TypeDateTimeOffset, Scale: 7}},
	{Name: "d", TypeInfo: TypeInfo{Type: TypeDate}},
	{Name: "dt", TypeInfo: TypeInfo{Type: TypeDateTime}},
	{Name: "g", TypeInfo: TypeInfo{Type: TypeUniqueIdentifier}},
	{Name: "vb", TypeInfo: TypeInfo{Type: TypeVarBinary, Length: 16}},
	{Name: "vbmax", TypeInfo: TypeInfo{Type: TypeVarBinary, Length: Max}},
}

var (
	testTime   = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	testZone   = time.FixedZone("", -(5*60+30)*60)
	testUUID   = UUID{0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	longText   = strings.Repeat("long text ☃ ", 1000)
	typeValues = []any{
		int32(-2147483648), int64(1) << 40, int16(-32768), uint8(255), true, 3.25, float32(1.5),
		"-12345678901234.5678", "héllo ☃", longText, "café", strings.Repeat("v", 9000),
		`<event name="x"><data>1</data></event>`, testTime, time.Date(2024, 5, 6, 7, 8, 9, 123456700, testZone),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 997000000, time.UTC),
		testUUID, []byte{0xDE, 0xAD, 0xBE, 0xEF}, make([]byte, 10000),
	}
)

func (t *testSession) Batch(ctx context.Context, b *Batch, w ResultWriter) error {
	t.h.mu.Lock()
	t.h.batches = append(t.h.batches, b)
	t.h.mu.Unlock()
	sql := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(b.SQL)), ";")
	switch {
	case sql == "select 1":
		if err := w.Columns(Column{TypeInfo: TypeInfo{Type: TypeInt}, NotNull: true}); err != nil {
			return err
		}
		return w.Row(1)
	case sql == "select @@spid":
		if err := w.Columns(Column{TypeInfo: TypeInfo{Type: TypeSmallInt}, NotNull: true}); err != nil {
			return err
		}
		return w.Row(t.s.SPID)
	case sql == "select encryption":
		w.Columns(Column{Name: "encryption", TypeInfo: TypeInfo{Type: TypeNVarChar, Length: 20}})
		return w.Row(t.s.Encryption.String())
	case sql == "select db_name()":
		if err := w.Columns(Column{TypeInfo: TypeInfo{Type: TypeNVarChar, Length: 128}}); err != nil {
			return err
		}
		return w.Row(t.s.Database())
	case sql == "select types":
		if err := w.Columns(typeColumns...); err != nil {
			return err
		}
		if err := w.Row(typeValues...); err != nil {
			return err
		}
		return w.Row(make([]any, len(typeColumns))...) // all NULL
	case strings.HasPrefix(sql, "select type "): // select type N: column N of typeColumns, a value row and a NULL row
		n, err := strconv.Atoi(strings.TrimPrefix(sql, "select type "))
		if err != nil || n < 0 || n >= len(typeColumns) {
			return &Error{Number: 50000, Severity: 16, State: 1, Line: 1, Message: "no such type column"}
		}
		if err := w.Columns(typeColumns[n]); err != nil {
			return err
		}
		v := typeValues[n]
		if s, ok := v.(string); ok && len(s) > 100 {
			v = s[:100]
		}
		if b, ok := v.([]byte); ok && len(b) > 100 {
			v = b[:100]
		}
		if err := w.Row(v); err != nil {
			return err
		}
		return w.Row(nil)
	case strings.HasPrefix(sql, "select rows "): // select rows N: N rows of 3 columns
		n, _ := strconv.Atoi(strings.TrimPrefix(sql, "select rows "))
		if err := w.Columns(
			Column{Name: "n", TypeInfo: TypeInfo{Type: TypeInt}, NotNull: true},
			Column{Name: "s", TypeInfo: TypeInfo{Type: TypeNVarChar, Length: 100}},
			Column{Name: "blob", TypeInfo: TypeInfo{Type: TypeVarBinary, Length: Max}},
		); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := w.Row(i, fmt.Sprintf("row %d", i), []byte(strings.Repeat("x", i%700))); err != nil {
				return err
			}
		}
		return w.Done(Done{Command: CmdSelect, RowCount: int64(n)})
	case sql == "select multi":
		// two result sets and an update count; RowsAffected = 1+2+3
		w.Columns(Column{Name: "a", TypeInfo: TypeInfo{Type: TypeInt}})
		w.Row(1)
		w.Columns(Column{Name: "b", TypeInfo: TypeInfo{Type: TypeNVarChar, Length: 5}})
		w.Row("x")
		w.Row(nil)
		w.Done(Done{Command: CmdSelect, RowCount: 2})
		return w.Done(Done{Command: CmdUpdate, RowCount: 3})
	case strings.HasPrefix(sql, "update "):
		n, _ := strconv.Atoi(strings.TrimPrefix(sql, "update "))
		return w.Done(Done{Command: CmdUpdate, RowCount: int64(n)})
	case sql == "raise error":
		return &Error{Number: 50000, Severity: 16, State: 3, Line: 7, Message: "boom from test", Proc: "usp_boom"}
	case sql == "error then rows":
		// a statement error that does not end the batch, then a result
		w.Error(&Error{Number: 8134, Severity: 16, State: 1, Line: 1, Message: "Divide by zero error encountered."})
		w.Done(Done{Command: CmdSelect, RowCount: NoCount})
		w.Columns(Column{Name: "after", TypeInfo: TypeInfo{Type: TypeInt}})
		return w.Row(2)
	case sql == "print info":
		if err := w.Info(&Error{Number: 0, State: 1, Line: 1, Message: "hello notice"}); err != nil {
			return err
		}
		w.Columns(Column{Name: "v", TypeInfo: TypeInfo{Type: TypeInt}})
		return w.Row(5)
	case sql == "raise fatal":
		return &Error{Number: 9001, Severity: 21, State: 1, Line: 1, Message: "The log for database is not available."}
	case sql == "waitfor delay":
		t.h.running <- struct{}{}
		<-ctx.Done()
		t.h.canceled <- context.Cause(ctx)
		return ctx.Err()
	case sql == "rows then wait": // partial output flushed, then a wait
		w.Columns(Column{Name: "n", TypeInfo: TypeInfo{Type: TypeInt}})
		for i := 0; i < 1000; i++ {
			w.Row(i)
		}
		w.Flush()
		t.h.running <- struct{}{}
		<-ctx.Done()
		t.h.canceled <- context.Cause(ctx)
		return ctx.Err()
	case sql == "stream forever":
		return streamUntilCancelled(t.h, w)
	case sql == "drop connection":
		w.Columns(Column{Name: "n", TypeInfo: TypeInfo{Type: TypeInt}})
		w.Row(1)
		w.Flush()
		return fmt.Errorf("simulated network failure: %w", ErrDropConnection)
	case sql == "go error":
		return errors.New("plain Go error")
	case strings.HasPrefix(sql, "use "):
		return w.SetDatabase(strings.TrimPrefix(sql, "use "))
	case sql == "begin tran":
		_, err := w.BeginTransaction()
		return err
	case sql == "commit tran":
		return w.CommitTransaction()
	case sql == "rollback tran":
		return w.RollbackTransaction()
	case sql == "select tran":
		w.Columns(Column{Name: "descriptor", TypeInfo: TypeInfo{Type: TypeBigInt}})
		return w.Row(int64(t.s.Transaction()))
	case sql == "panic":
		panic("test handler panic")
	case sql == "bad row":
		w.Columns(Column{Name: "n", TypeInfo: TypeInfo{Type: TypeTinyInt}})
		return w.Row(300)
	}
	return &Error{Number: 2812, Severity: 16, State: 62, Line: 1, Message: fmt.Sprintf("Could not find stored procedure '%s'.", sql)}
}

func (t *testSession) RPC(ctx context.Context, call *RPCCall, w ResultWriter) error {
	t.h.mu.Lock()
	t.h.rpcs = append(t.h.rpcs, call)
	t.h.mu.Unlock()
	x, ok := call.ExecuteSQL()
	if !ok {
		// procedure by name: one row with the name, return status 7
		w.Columns(Column{Name: "proc", TypeInfo: TypeInfo{Type: TypeNVarChar, Length: 128}})
		w.Row(call.ProcName)
		return w.ReturnStatus(7)
	}
	switch x.Statement {
	case "select echo":
		// one column per argument, typed like the argument: a round trip
		cols := make([]Column, len(x.Args))
		vals := make([]any, len(x.Args))
		for i, a := range x.Args {
			ti := a.Type
			if ti.Type == 0 { // typeless NULL
				ti = TypeInfo{Type: TypeInt}
			}
			cols[i] = Column{Name: strings.TrimPrefix(a.Name, "@"), TypeInfo: ti}
			vals[i] = a.Value
		}
		if err := w.Columns(cols...); err != nil {
			return err
		}
		return w.Row(vals...)
	case "set output":
		for _, a := range x.Args {
			if a.Output {
				if err := w.ReturnValue(Param{Name: a.Name, Type: TypeInfo{Type: TypeBigInt}, Value: int64(42)}); err != nil {
					return err
				}
			}
		}
		return nil
	case "update via rpc":
		return w.Done(Done{Command: CmdUpdate, RowCount: 4})
	case "raise error via rpc":
		return &Error{Number: 547, Severity: 16, State: 0, Line: 2, Message: "The INSERT statement conflicted with the FOREIGN KEY constraint."}
	}
	return t.Batch(ctx, &Batch{SQL: x.Statement, Transaction: call.Transaction}, w)
}

func (t *testSession) Transaction(ctx context.Context, req *TransactionRequest, w ResultWriter) error {
	t.h.mu.Lock()
	t.h.tm = append(t.h.tm, *req)
	t.h.mu.Unlock()
	if req.Name == "refuse" {
		return &Error{Number: 3906, Severity: 16, State: 1, Line: 1, Message: "refused by test handler"}
	}
	return nil
}

func (t *testSession) Close() {
	t.h.mu.Lock()
	t.h.closed++
	t.h.mu.Unlock()
}

// startServer runs a Server with h on a loopback port and returns its
// address; the server is closed when the test ends.
func startServer(t testing.TB, h Handler) (*Server, string) {
	t.Helper()
	return startServerWith(t, h, nil)
}

// startServerWith starts a server after configure (if any) adjusted it.
func startServerWith(t testing.TB, h Handler, configure func(*Server)) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelDebug
	}
	lw := &testLogWriter{t: t}
	srv := &Server{Handler: h, Logger: slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: level}))}
	if configure != nil {
		configure(srv)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	t.Cleanup(func() {
		lw.stop()
		srv.Close()
		if err := <-errc; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return srv, ln.Addr().String()
}

// testLogWriter sends server logs to t.Log so they appear with the test,
// and drops them once the test is over (connection goroutines outlive it).
type testLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testLogWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

var _ io.Writer = (*testLogWriter)(nil)

// packetRecorder watches the packet headers on every connection of a server:
// the sizes the server sends and whether client messages span packets.
type packetRecorder struct {
	mu               sync.Mutex
	maxServer        int
	fullServer       int // server packets of exactly the largest size seen
	clientMultiCount int
}

func (r *packetRecorder) stats() (max, full int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxServer, r.fullServer
}

func (r *packetRecorder) clientMultiPacket() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clientMultiCount
}

// headerScanner follows a TDS byte stream and reports each packet header.
type headerScanner struct {
	hdr       []byte
	remaining int
	onHeader  func(typ, status byte, length int)
}

func (s *headerScanner) feed(p []byte) {
	for len(p) > 0 {
		if s.remaining > 0 {
			n := min(s.remaining, len(p))
			s.remaining -= n
			p = p[n:]
			continue
		}
		need := packetHeaderSize - len(s.hdr)
		n := min(need, len(p))
		s.hdr = append(s.hdr, p[:n]...)
		p = p[n:]
		if len(s.hdr) == packetHeaderSize {
			length := int(s.hdr[2])<<8 | int(s.hdr[3])
			s.onHeader(s.hdr[0], s.hdr[1], length)
			s.remaining = max(length-packetHeaderSize, 0)
			s.hdr = s.hdr[:0]
		}
	}
}

type recordingConn struct {
	net.Conn
	in, out *headerScanner
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.feed(p[:n])
	return n, err
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.out.feed(p)
	return c.Conn.Write(p)
}

type recordingListener struct {
	net.Listener
	rec *packetRecorder
}

func (l recordingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	r := l.rec
	inMessage := 0
	return &recordingConn{
		Conn: nc,
		in: &headerScanner{onHeader: func(typ, status byte, length int) {
			inMessage++
			if status&statusEOM != 0 {
				if inMessage > 1 {
					r.mu.Lock()
					r.clientMultiCount++
					r.mu.Unlock()
				}
				inMessage = 0
			}
		}},
		out: &headerScanner{onHeader: func(typ, status byte, length int) {
			r.mu.Lock()
			defer r.mu.Unlock()
			switch {
			case length > r.maxServer:
				r.maxServer, r.fullServer = length, 1
			case length == r.maxServer:
				r.fullServer++
			}
		}},
	}, nil
}

func startServerRecording(t testing.TB, h Handler, rec *packetRecorder) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	lw := &testLogWriter{t: t}
	srv := &Server{Handler: h, Logger: slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(recordingListener{ln, rec}) }()
	t.Cleanup(func() {
		lw.stop()
		srv.Close()
		<-errc
	})
	return srv, ln.Addr().String()
}

// streamUntilCancelled writes rows without looking at ctx, as a careless
// handler would; the writer must stop it once ATTENTION arrived.
func streamUntilCancelled(h *testHandler, w ResultWriter) error {
	if err := w.Columns(Column{Name: "n", TypeInfo: TypeInfo{Type: TypeInt}}); err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := w.Row(i); err != nil {
			h.canceled <- err
			return err
		}
		if i == 100 {
			w.Flush()
			h.running <- struct{}{}
		}
	}
}
