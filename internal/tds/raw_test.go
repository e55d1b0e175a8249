package tds

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// Protocol-level tests with a hand-rolled client, for what go-mssqldb cannot
// be made to send: malformed input, idle ATTENTION, raw headers.

type rawClient struct {
	t  testing.TB
	nc net.Conn
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	// a safety net so a broken server cannot hang the test run
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawClient{t: t, nc: nc}
}

// send writes payload as one message, split into packets of at most size bytes.
func (c *rawClient) send(typ packetType, status byte, payload []byte, size int) {
	c.t.Helper()
	if _, err := c.nc.Write(packetize(typ, status, payload, size)); err != nil {
		c.t.Fatalf("send %s: %v", typ, err)
	}
}

func packetize(typ packetType, status byte, payload []byte, size int) []byte {
	var out []byte
	for first := true; first || len(payload) > 0; first = false {
		n := min(len(payload), size-packetHeaderSize)
		st := status &^ statusEOM
		if n == len(payload) {
			st |= statusEOM
		}
		hdr := []byte{byte(typ), st, 0, 0, 0, 0, 1, 0}
		binary.BigEndian.PutUint16(hdr[2:], uint16(packetHeaderSize+n))
		out = append(append(out, hdr...), payload[:n]...)
		payload = payload[n:]
	}
	return out
}

type rawReply struct {
	payload []byte
	spids   []uint16
	sizes   []int
}

func (c *rawClient) read() (rawReply, error) {
	var r rawReply
	for {
		hdr := make([]byte, packetHeaderSize)
		if _, err := io.ReadFull(c.nc, hdr); err != nil {
			return r, err
		}
		n := int(binary.BigEndian.Uint16(hdr[2:]))
		body := make([]byte, n-packetHeaderSize)
		if _, err := io.ReadFull(c.nc, body); err != nil {
			return r, err
		}
		r.payload = append(r.payload, body...)
		r.spids = append(r.spids, binary.BigEndian.Uint16(hdr[4:]))
		r.sizes = append(r.sizes, n)
		if hdr[1] != 0 {
			return r, nil
		}
	}
}

func (c *rawClient) mustRead() rawReply {
	c.t.Helper()
	r, err := c.read()
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return r
}

// expectClosed checks that the server closes the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	for {
		_, err := c.read()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") {
				c.t.Fatalf("want the server to close the connection, got %v", err)
			}
			return
		}
	}
}

func ucs2(s string) []byte { return appendUTF16(nil, s) }

// buildLogin7 encodes a LOGIN7 message the way clients do.
func buildLogin7(user, password, database string, packetSize uint32) []byte {
	fixed := make([]byte, login7FixedSize)
	le := binary.LittleEndian
	le.PutUint32(fixed[4:], 0x74000004)
	le.PutUint32(fixed[8:], packetSize)
	le.PutUint32(fixed[16:], 4242)
	mangled := ucs2(password)
	for i, b := range mangled {
		b = b<<4 | b>>4
		mangled[i] = b ^ 0xA5
	}
	fields := []struct {
		at   int
		data []byte
	}{
		{36, ucs2("rawhost")}, {40, ucs2(user)}, {44, mangled}, {48, ucs2("rawclient")}, {52, ucs2("server")},
		{60, ucs2("raw-test")}, {64, nil}, {68, ucs2(database)},
	}
	var data []byte
	for _, f := range fields {
		le.PutUint16(fixed[f.at:], uint16(login7FixedSize+len(data)))
		le.PutUint16(fixed[f.at+2:], uint16(len(f.data)/2))
		data = append(data, f.data...)
	}
	out := append(fixed, data...)
	le.PutUint32(out[0:], uint32(len(out)))
	return out
}

func buildPrelogin() []byte {
	// VERSION and ENCRYPTION (off) only
	return []byte{0, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xFF, 9, 0, 0, 0, 0, 0, encryptOff}
}

// allHeaders is ALL_HEADERS with a transaction descriptor header.
func allHeaders(tx uint64) []byte {
	b := appendU32(nil, 22)
	b = appendU32(b, 18)
	b = appendU16(b, 2)
	b = appendU64(b, tx)
	return appendU32(b, 1)
}

func batchPayload(sql string) []byte { return append(allHeaders(0), ucs2(sql)...) }

func (c *rawClient) login(packetSize uint32) rawReply {
	c.t.Helper()
	c.send(packetPrelogin, statusEOM, buildPrelogin(), 4096)
	pre := c.mustRead()
	opts, err := preloginOptions(pre.payload)
	if err != nil || !bytes.Equal(opts[preloginEncryption], []byte{encryptNotSup}) {
		c.t.Fatalf("PRELOGIN reply %x: %v; want ENCRYPTION NOT_SUP", pre.payload, err)
	}
	c.send(packetLogin7, statusEOM, buildLogin7("sa", testPassword, "appdb", packetSize), 4096)
	r := c.mustRead()
	if !bytes.Contains(r.payload, []byte{tokenLoginAck}) || doneStatus(r.payload)&doneError != 0 {
		c.t.Fatalf("login failed: % x", r.payload)
	}
	return r
}

// doneStatus is the status of the DONE token that ends a reply.
func doneStatus(payload []byte) uint16 {
	if len(payload) < 13 {
		return 0xFFFF
	}
	return binary.LittleEndian.Uint16(payload[len(payload)-12:])
}

func TestRawSPIDInHeadersAndPacketSize(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	a := dialRaw(t, addr)
	loginReply := a.login(512)
	b := dialRaw(t, addr)
	b.login(4096)
	a.send(packetSQLBatch, statusEOM, batchPayload("select rows 300"), 512)
	ra := a.mustRead()
	b.send(packetSQLBatch, statusEOM, batchPayload("select @@spid"), 4096)
	rb := b.mustRead()
	for _, s := range append(loginReply.spids, ra.spids...) {
		if s != 51 {
			t.Fatalf("first connection's packets carry SPID %d, want 51", s)
		}
	}
	for _, s := range rb.spids {
		if s != 52 {
			t.Fatalf("second connection's packets carry SPID %d, want 52", s)
		}
	}
	for _, n := range ra.sizes {
		if n > 512 {
			t.Fatalf("packet of %d bytes with a negotiated size of 512", n)
		}
	}
	if len(ra.sizes) < 10 {
		t.Errorf("300 rows fit in %d packets of 512 bytes?", len(ra.sizes))
	}
	// The ROW with @@spid: token 0xD1 then smallint 52.
	if !bytes.Contains(rb.payload, []byte{tokenRow, 52, 0}) {
		t.Errorf("@@spid row missing in % x", rb.payload)
	}
	if !bytes.Contains(loginReply.payload, append([]byte{tokenEnvChange}, mustEnv(envPacketSize, "512", "512")...)) {
		t.Errorf("login reply lacks ENVCHANGE packet size 512: % x", loginReply.payload)
	}
}

func mustEnv(typ byte, nv, ov string) []byte {
	b, _ := appendEnvChangeString(nil, typ, nv, ov)
	return b[1:]
}

// appendTMName appends a TM request name as clients send it: a byte count
// and UTF-16LE (B_VARBYTE, MS-TDS 2.2.6.9).
func appendTMName(b []byte, name string) []byte {
	u := ucs2(name)
	return append(append(b, byte(len(u))), u...)
}

// TestRawNamedTransactionByteCount reproduces tedious'
// beginTransaction(cb, 'name'): the name's length is a byte count
// (issue 14: "name needs 20 bytes, 10 left" killed the connection).
func TestRawNamedTransactionByteCount(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	c := dialRaw(t, addr)
	c.login(4096)
	// the bytes tedious 19 writes: isolation 2 (READ COMMITTED), 20, "tran_named"
	begin := appendTMName(append(allHeaders(0), 5, 0, 2), "tran_named")
	if begin[len(begin)-21] != 20 {
		t.Fatalf("test builds the wrong length byte %d", begin[len(begin)-21])
	}
	c.send(packetTransMgr, statusEOM, begin, 4096)
	r := c.mustRead()
	if !bytes.Contains(r.payload, []byte{tokenEnvChange, 11, 0, envBeginTran, 8}) {
		t.Fatalf("named BEGIN: no ENVCHANGE 8 in % x", r.payload)
	}
	tm := h.snapshotTM()
	if len(tm) != 1 || tm[0].Name != "tran_named" || tm[0].Isolation != IsolationReadCommitted {
		t.Fatalf("handler saw %+v, want begin tran_named READ COMMITTED", tm)
	}
	// an odd byte count is malformed: the connection closes
	c.send(packetTransMgr, statusEOM, append(allHeaders(0), 5, 0, 0, 3, 'a', 0, 'b'), 4096)
	c.expectClosed()
}

func TestRawIdleAttention(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	c := dialRaw(t, addr)
	c.login(4096)
	c.send(packetAttention, statusEOM, nil, 4096)
	r := c.mustRead()
	if !bytes.Equal(r.payload, appendDone(nil, tokenDone, doneAttn, CmdNone, 0)) {
		t.Fatalf("idle ATTENTION answered with % x, want DONE(ATTN)", r.payload)
	}
	c.send(packetSQLBatch, statusEOM, batchPayload("select 1"), 4096)
	if r := c.mustRead(); doneStatus(r.payload) != doneCount {
		t.Fatalf("select 1 after attention ends with status %#x", doneStatus(r.payload))
	}
}

// TestRawAttentionAcknowledgedInItsOwnMessage: after ATTENTION the
// cancelled response ends (a DONE without MORE closes its message) and the
// acknowledgement, DONE with ATTN, is a message of its own. tedious looks for
// it only in the next message (issue 14: its cancel timed out when the
// acknowledgement shared the reply's message).
func TestRawAttentionAcknowledgedInItsOwnMessage(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	c := dialRaw(t, addr)
	c.login(4096)
	ack := appendDone(nil, tokenDone, doneAttn, CmdNone, 0)
	for _, batch := range []string{"rows then wait", "waitfor delay"} {
		c.send(packetSQLBatch, statusEOM, batchPayload(batch), 4096)
		<-h.running
		c.send(packetAttention, statusEOM, nil, 4096)
		<-h.canceled
		first := c.mustRead()
		if bytes.Contains(first.payload, ack[:3]) {
			t.Fatalf("%s: the cancelled response carries the acknowledgement: % x", batch, first.payload[max(0, len(first.payload)-40):])
		}
		last := first.payload[len(first.payload)-13:]
		if last[0] != tokenDone || binary.LittleEndian.Uint16(last[1:])&doneMore != 0 {
			t.Fatalf("%s: cancelled response does not end with a final DONE: % x", batch, last)
		}
		if second := c.mustRead(); !bytes.Equal(second.payload, ack) {
			t.Fatalf("%s: acknowledgement message is % x, want DONE(ATTN) alone", batch, second.payload)
		}
	}
	c.send(packetSQLBatch, statusEOM, batchPayload("select 1"), 4096)
	if r := c.mustRead(); doneStatus(r.payload) != doneCount {
		t.Fatalf("select 1 after cancel ends with status %#x", doneStatus(r.payload))
	}
}

func TestRawTransactionManagerErrors(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	c := dialRaw(t, addr)
	c.login(4096)
	commit := append(allHeaders(0), 7, 0, 0, 0) // COMMIT, empty name, flags 0
	c.send(packetTransMgr, statusEOM, commit, 4096)
	r := c.mustRead()
	if !bytes.Contains(r.payload, appendU32([]byte{}, 3902)) || doneStatus(r.payload)&doneError == 0 {
		t.Errorf("COMMIT without a transaction: % x; want error 3902", r.payload)
	}
	// BEGIN with a name the handler refuses: no ENVCHANGE, an error instead
	begin := appendTMName(append(allHeaders(0), 5, 0, 2), "refuse")
	c.send(packetTransMgr, statusEOM, begin, 4096)
	r = c.mustRead()
	if bytes.Contains(r.payload, []byte{tokenEnvChange}) || !bytes.Contains(r.payload, appendU32(nil, 3906)) {
		t.Errorf("refused BEGIN: % x", r.payload)
	}
	// savepoint round: BEGIN, SAVE, ROLLBACK to savepoint keeps the transaction
	begin = append(allHeaders(0), 5, 0, 0, 0)
	c.send(packetTransMgr, statusEOM, begin, 4096)
	r = c.mustRead()
	i := bytes.Index(r.payload, []byte{tokenEnvChange, 11, 0, envBeginTran, 8})
	if i < 0 {
		t.Fatalf("BEGIN reply lacks ENVCHANGE 8 with 8 bytes: % x", r.payload)
	}
	desc := binary.LittleEndian.Uint64(r.payload[i+5:])
	save := appendTMName(append(allHeaders(desc), 9, 0), "sp1")
	c.send(packetTransMgr, statusEOM, save, 4096)
	c.mustRead()
	rollbackTo := appendTMName(append(allHeaders(desc), 8, 0), "sp1")
	rollbackTo = append(rollbackTo, 0)
	c.send(packetTransMgr, statusEOM, rollbackTo, 4096)
	if r := c.mustRead(); bytes.Contains(r.payload, []byte{tokenEnvChange}) {
		t.Errorf("ROLLBACK to a savepoint ended the transaction: % x", r.payload)
	}
	c.send(packetSQLBatch, statusEOM, append(allHeaders(desc), ucs2("select tran")...), 4096)
	if r := c.mustRead(); !bytes.Contains(r.payload, appendU64([]byte{tokenRow, 8}, desc)) {
		t.Errorf("transaction %d not open after rollback to savepoint: % x", desc, r.payload)
	}
	var kinds []string
	for _, r := range h.snapshotTM() {
		kinds = append(kinds, r.Kind.String()+":"+r.Name)
	}
	// COMMIT without a transaction never reaches the handler
	if got := strings.Join(kinds, " "); got != "begin:refuse begin: save:sp1 rollback:sp1" {
		t.Errorf("handler saw %s", got)
	}
}

func TestRawUnsupportedParameterKeepsConnection(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	c := dialRaw(t, addr)
	c.login(4096)
	rpc := append(allHeaders(0), 0xFF, 0xFF, 10, 0, 0, 0) // sp_executesql, flags 0
	rpc = append(rpc, 0, 0, tdsVariant, 0, 0, 0, 0)       // unnamed sql_variant
	c.send(packetRPC, statusEOM, rpc, 4096)
	r := c.mustRead()
	if !bytes.Contains(r.payload, appendU32([]byte{}, 8009)) || doneStatus(r.payload)&doneError == 0 {
		t.Errorf("unsupported parameter: % x; want error 8009", r.payload)
	}
	c.send(packetSQLBatch, statusEOM, batchPayload("select 1"), 4096)
	if r := c.mustRead(); doneStatus(r.payload) != doneCount {
		t.Errorf("connection unusable after error 8009: % x", r.payload)
	}
}

func TestRawMalformedInputClosesConnection(t *testing.T) {
	h := newTestHandler()
	logs := &testenv.SyncBuffer{}
	srv := &Server{Handler: h, Logger: slog.New(slog.NewTextHandler(logs, nil)), MaxMessageSize: 1 << 16}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	login7 := buildLogin7("sa", testPassword, "appdb", 4096)
	truncatedLogin := append([]byte(nil), login7...)
	binary.LittleEndian.PutUint16(truncatedLogin[40:], 2000) // user name offset past the end
	badRPC := append(allHeaders(0), 0xFF, 0xFF, 10, 0, 0, 0, 0, 0, tdsNVarChar, 0x10, 0)
	cases := []struct {
		name       string
		afterLogin bool
		raw        []byte
		wantLog    string
	}{
		{"header shorter than itself", false, []byte{byte(packetPrelogin), 1, 0, 4, 0, 0, 0, 0}, "shorter than the 8-byte header"},
		{"prelogin without terminator", false, packetize(packetPrelogin, 1, []byte{0, 0, 5, 0, 0}, 4096), "no terminator"},
		{"batch before login", false, packetize(packetSQLBatch, 1, batchPayload("select 1"), 4096), "expected a LOGIN7 message"},
		{"login7 field out of range", false, packetize(packetLogin7, 1, truncatedLogin, 4096), "UserName"},
		{"login7 too short", false, packetize(packetLogin7, 1, login7[:50], 4096), "shorter than its 94-byte fixed part"},
		{"unknown packet type", true, packetize(99, 1, []byte{1, 2, 3}, 4096), "unexpected packet type 99"},
		{"mixed packet types", true, append([]byte{byte(packetSQLBatch), 0, 0, 10, 0, 0, 1, 0, 1, 2}, packetize(packetRPC, 1, []byte{1}, 4096)...), "inside a SQLBatch message"},
		{"all headers too long", true, packetize(packetSQLBatch, 1, []byte{0xFF, 0, 0, 0, 1, 2}, 4096), "ALL_HEADERS length"},
		{"odd batch text", true, packetize(packetSQLBatch, 1, append(allHeaders(0), 'x'), 4096), "odd byte length"},
		{"truncated rpc parameter", true, packetize(packetRPC, 1, badRPC, 4096), "truncated"},
		{"oversized message", true, packetize(packetSQLBatch, 1, make([]byte, 70000), 4096), "exceeds the 65536-byte limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			if tc.afterLogin {
				c.login(4096)
			}
			if _, err := c.nc.Write(tc.raw); err != nil {
				t.Fatal(err)
			}
			c.expectClosed()
			// the reason is logged when the connection goroutine ends
			if !testenv.Poll(10*time.Second, func() bool { return strings.Contains(logs.String(), tc.wantLog) }) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, logs.String())
			}
		})
	}
	// the server still works
	c := dialRaw(t, addr)
	c.login(4096)
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("server logged a panic:\n%s", logs.String())
	}
}

func TestRawHandlerPanicClosesOnlyThatConnection(t *testing.T) {
	logs := &testenv.SyncBuffer{}
	srv := &Server{Handler: newTestHandler(), Logger: slog.New(slog.NewTextHandler(logs, nil))}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := dialRaw(t, ln.Addr().String())
	c.login(4096)
	c.send(packetSQLBatch, statusEOM, batchPayload("panic"), 4096)
	c.expectClosed()
	other := dialRaw(t, ln.Addr().String())
	other.login(4096)
	other.send(packetSQLBatch, statusEOM, batchPayload("select 1"), 4096)
	if r := other.mustRead(); doneStatus(r.payload) != doneCount {
		t.Errorf("server broken after a handler panic: % x", r.payload)
	}
}
