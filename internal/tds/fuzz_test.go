package tds

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fuzz targets for every decoder of client input, seeded with real client
// traffic recorded into testdata/seeds by TestCaptureSeeds -update.

var update = flag.Bool("update", false, "re-record testdata/seeds from go-mssqldb and FreeTDS traffic")

const seedDir = "testdata/seeds"

// seeds returns the recorded files whose names start with prefix.
func seeds(f *testing.F, prefix string) [][]byte {
	f.Helper()
	names, err := filepath.Glob(filepath.Join(seedDir, prefix+"*"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no seed files %s/%s* (run go test -run TestCaptureSeeds -update): %v", seedDir, prefix, err)
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func FuzzReadMessage(f *testing.F) {
	for _, s := range seeds(f, "stream-") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			m, err := readMessage(r, 1<<16)
			if err != nil {
				return
			}
			if len(m.payload) > 1<<16 {
				t.Fatalf("message of %d bytes passed the 65536-byte limit", len(m.payload))
			}
		}
	})
}

func FuzzPrelogin(f *testing.F) {
	for _, s := range seeds(f, "prelogin-") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		opts, err := preloginOptions(p)
		if err != nil {
			return
		}
		for tok, v := range opts {
			if len(v) > len(p) {
				t.Fatalf("option %d longer than the message", tok)
			}
		}
	})
}

func FuzzLogin7(f *testing.F) {
	for _, s := range seeds(f, "login7-") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		req, err := decodeLogin7(p)
		if err != nil {
			return
		}
		if len(req.User) > len(p) || len(req.Password) > 3*len(p) {
			t.Fatal("decoded strings longer than the message")
		}
	})
}

func FuzzBatch(f *testing.F) {
	for _, s := range seeds(f, "batch-") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		decodeBatch(p)
	})
}

func FuzzTransMgr(f *testing.F) {
	for _, s := range seeds(f, "tm-") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		decodeTransMgr(p)
	})
}

// FuzzRPC decodes RPC requests; every decoded parameter must re-encode as a
// result column of its own type and decode to the same value.
func FuzzRPC(f *testing.F) {
	for _, s := range seeds(f, "rpc-") {
		f.Add(s)
	}
	f.Add(syntheticRPC(f))
	f.Fuzz(func(t *testing.T, p []byte) {
		call, err := decodeRPC(p)
		if err != nil {
			return
		}
		call.ExecuteSQL()
		for _, prm := range call.Params {
			if prm.Type.Type == 0 || prm.Value == nil {
				continue
			}
			codec, err := newColumnCodec(prm.Type, false)
			if err != nil {
				continue // e.g. nvarchar(0) from the wire: not a valid column type
			}
			b, err := codec.appendValue(append([]byte(nil), codec.typeInfo...), prm.Value)
			if err != nil {
				continue // e.g. a decimal with more digits than its precision
			}
			r := &reader{b: b}
			wt, err := decodeTypeInfo(r)
			if err != nil {
				t.Fatalf("re-encoded %v does not decode: %v", prm.Type, err)
			}
			v, err := wt.decodeValue(r)
			if err != nil {
				t.Fatalf("re-encoded %v value does not decode: %v", prm.Type, err)
			}
			if fmt.Sprint(v) != fmt.Sprint(prm.Value) && !floatNaN(v) {
				t.Fatalf("%v: %v re-encodes as %v", prm.Type, prm.Value, v)
			}
		}
	})
}

// syntheticRPC is an sp_executesql call with one parameter of every column
// type, including those go-mssqldb never sends (decimal, xml, char...).
func syntheticRPC(tb testing.TB) []byte {
	p := append(allHeaders(0), 0xFF, 0xFF, byte(ProcIDExecuteSQL), 0, 0, 0)
	for i, col := range typeColumns {
		codec, err := newColumnCodec(col.TypeInfo, false)
		if err != nil {
			tb.Fatal(err)
		}
		p, _ = appendBVarChar(p, "@"+col.Name)
		p = append(p, 0)
		p = append(p, codec.typeInfo...)
		if p, err = codec.appendValue(p, typeValues[i]); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

func floatNaN(v any) bool {
	f, ok := v.(float64)
	return ok && f != f
}

// FuzzConnection feeds arbitrary bytes to a logged-in server connection: it
// must answer or close, never panic or hang.
func FuzzConnection(f *testing.F) {
	for _, s := range seeds(f, "stream-") {
		f.Add(afterLogin(s)) // the fuzz function logs in itself
	}
	f.Add(packetize(packetSQLBatch, statusEOM, batchPayload("select types"), 4096))
	f.Add(packetize(packetRPC, statusEOM, syntheticRPC(f), 512))
	srv := &Server{Handler: newTestHandler(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv.mu.Lock()
	srv.initLocked()
	srv.mu.Unlock()
	login := append(packetize(packetPrelogin, statusEOM, buildPrelogin(), 4096),
		packetize(packetLogin7, statusEOM, buildLogin7("sa", testPassword, "appdb", 4096), 4096)...)
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		c, ok := srv.newConn(server)
		if !ok {
			t.Fatal("server refused the connection")
		}
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, client)
		client.Write(login)
		client.Write(data)
		client.Close()
		<-done
	})
}

// afterLogin strips the PRELOGIN and LOGIN7 messages from a client stream.
func afterLogin(stream []byte) []byte {
	r := bytes.NewReader(stream)
	for i := 0; i < 2; i++ {
		if _, err := readMessage(r, 1<<20); err != nil {
			return stream
		}
	}
	return stream[len(stream)-r.Len():]
}

// TestCaptureSeeds records real client messages as fuzz seeds. It runs only
// with -update.
func TestCaptureSeeds(t *testing.T) {
	if !*update {
		t.Skip("run with -update to re-record testdata/seeds")
	}
	rec := &messageCapture{}
	h := newTestHandler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go srv.Serve(captureListener{ln, rec})
	defer srv.Close()
	addr := ln.Addr().String()

	db := openDB(t, addr, "packet size=512")
	ctx := context.Background()
	db.SetMaxOpenConns(1)
	var v any
	db.QueryRowContext(ctx, "select types").Scan(new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any),
		new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any))
	db.QueryRowContext(ctx, "select echo", int64(-5), int32(7), int16(3), uint8(9), true, 1.5, float32(2.5), "héllo",
		strings.Repeat("x", 5000), []byte{1, 2}, time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600)), nil,
		sql.NullString{}).Scan(&v)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	tx.ExecContext(ctx, "update via rpc", 1)
	tx.Commit()
	tx, _ = db.BeginTx(ctx, nil)
	tx.Rollback()
	var rs any
	db.QueryRowContext(ctx, "dbo.MyProc").Scan(&rs)
	db.Close()

	if tsql, err := exec.LookPath("tsql"); err == nil {
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(tsql, "-H", host, "-p", port, "-U", "sa", "-P", testPassword, "-o", "q")
		cmd.Env = append(os.Environ(), "TDSVER=7.4")
		cmd.Stdin = strings.NewReader("select 1\ngo\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tsql: %v\n%s", err, out)
		}
	}
	waitForConnections(t, srv, 0) // every connection's reads have landed
	if err := os.RemoveAll(seedDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	counts := map[string]int{}
	for i, stream := range rec.streams {
		os.WriteFile(filepath.Join(seedDir, fmt.Sprintf("stream-%02d.bin", i)), stream.Bytes(), 0o644)
		r := bytes.NewReader(stream.Bytes())
		for {
			m, err := readMessage(r, 1<<24)
			if err != nil {
				break
			}
			kind := map[packetType]string{packetPrelogin: "prelogin", packetLogin7: "login7", packetSQLBatch: "batch",
				packetRPC: "rpc", packetTransMgr: "tm"}[m.typ]
			if kind == "" {
				continue
			}
			name := fmt.Sprintf("%s-%02d-%02d.bin", kind, i, counts[kind])
			counts[kind]++
			if err := os.WriteFile(filepath.Join(seedDir, name), m.payload, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("recorded %d streams: %v", len(rec.streams), counts)
}

type messageCapture struct {
	mu      sync.Mutex
	streams []*bytes.Buffer
}

type captureConn struct {
	net.Conn
	rec *messageCapture
	buf *bytes.Buffer
}

func (c captureConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.rec.mu.Lock()
	c.buf.Write(p[:n])
	c.rec.mu.Unlock()
	return n, err
}

type captureListener struct {
	net.Listener
	rec *messageCapture
}

func (l captureListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	buf := &bytes.Buffer{}
	l.rec.mu.Lock()
	l.rec.streams = append(l.rec.streams, buf)
	l.rec.mu.Unlock()
	return captureConn{nc, l.rec, buf}, nil
}
