// Package fakesql is a driver-level fake SQL server for tests of code that
// reads views the stand-in does not have (Query Store): a test's Answer
// function gets each query and its named arguments and returns rows, and
// every query is recorded. It matches nothing by itself — the test decides
// by what a query reads, never by its exact text. Test-only: no command
// links it (internal/releasecheck TestLayers).
package fakesql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"sync"
	"testing"
)

// Server answers queries through Answer and records them.
type Server struct {
	// Answer returns the rows of a query (nil: no row) or an error.
	Answer func(query string, args map[string]any) ([][]any, error)
	// NamedOnly refuses positional arguments (code that names every one).
	NamedOnly bool

	mu   sync.Mutex
	seen []Query
}

// Query is one query the server received.
type Query struct {
	Text string
	Args map[string]any
}

// Seen returns the queries received so far, in order.
func (s *Server) Seen() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Query(nil), s.seen...)
}

// Open returns a *sql.DB whose connections go to s, closed when the test
// ends.
func Open(t testing.TB, s *Server) *sql.DB {
	t.Helper()
	registerOnce.Do(func() { sql.Register(driverName, registry{}) })
	servers.Store(t.Name(), s)
	db, err := sql.Open(driverName, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); servers.Delete(t.Name()) })
	return db
}

const driverName = "queryreplay-fakesql"

var (
	registerOnce sync.Once
	servers      sync.Map // test name → *Server
)

type registry struct{}

func (registry) Open(name string) (driver.Conn, error) {
	s, ok := servers.Load(name)
	if !ok {
		return nil, errors.New("fakesql: no server " + name)
	}
	return conn{s.(*Server)}, nil
}

type conn struct{ s *Server }

func (c conn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fakesql: Prepare is not supported")
}
func (c conn) Close() error { return nil }
func (c conn) Begin() (driver.Tx, error) {
	return nil, errors.New("fakesql: transactions are not supported")
}

func (c conn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	named := map[string]any{}
	for _, a := range args {
		if a.Name == "" && c.s.NamedOnly {
			return nil, errors.New("fakesql: positional argument where every argument is named")
		}
		named[a.Name] = a.Value
	}
	c.s.mu.Lock()
	c.s.seen = append(c.s.seen, Query{query, named})
	c.s.mu.Unlock()
	rows, err := c.s.Answer(query, named)
	if err != nil {
		return nil, err
	}
	return &result{rows: rows}, nil
}

type result struct {
	rows [][]any
	i    int
}

func (r *result) Columns() []string {
	if len(r.rows) == 0 {
		return []string{"c"}
	}
	return make([]string, len(r.rows[0]))
}

func (r *result) Close() error { return nil }

func (r *result) Next(dest []driver.Value) error {
	if r.i >= len(r.rows) {
		return io.EOF
	}
	for i, v := range r.rows[r.i] {
		dest[i] = v
	}
	r.i++
	return nil
}
