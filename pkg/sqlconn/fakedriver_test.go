package sqlconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// fakeServer answers the lookup's queries at the driver level: each query
// is matched by the view it reads, never by its exact text, and every
// query and its arguments are recorded.
type fakeServer struct {
	mu sync.Mutex
	// answer returns the rows for a query (nil: no row) or an error.
	answer func(query string, args map[string]any) ([][]any, error)
	seen   []seenQuery
}

type seenQuery struct {
	query string
	args  map[string]any
}

func (f *fakeServer) Open(string) (driver.Conn, error) { return &fakeConn{f}, nil }

type fakeConn struct{ f *fakeServer }

func (c *fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not supported") }
func (c *fakeConn) Close() error                        { return nil }
func (c *fakeConn) Begin() (driver.Tx, error)           { return nil, errors.New("not supported") }

func (c *fakeConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	named := map[string]any{}
	for _, a := range args {
		if a.Name == "" {
			return nil, errors.New("positional argument: the lookup names every argument")
		}
		named[a.Name] = a.Value
	}
	c.f.mu.Lock()
	c.f.seen = append(c.f.seen, seenQuery{query, named})
	c.f.mu.Unlock()
	rows, err := c.f.answer(query, named)
	if err != nil {
		return nil, err
	}
	return &fakeRows{rows: rows}, nil
}

type fakeRows struct {
	rows [][]any
	i    int
}

func (r *fakeRows) Columns() []string {
	if len(r.rows) == 0 {
		return []string{"c"}
	}
	return make([]string, len(r.rows[0]))
}
func (r *fakeRows) Close() error { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if r.i >= len(r.rows) {
		return io.EOF
	}
	for i, v := range r.rows[r.i] {
		dest[i] = v
	}
	r.i++
	return nil
}

var registerOnce sync.Once
var fakes sync.Map // dsn → *fakeServer

type fakeDriver struct{}

func (fakeDriver) Open(dsn string) (driver.Conn, error) {
	f, ok := fakes.Load(dsn)
	if !ok {
		return nil, errors.New("no fake server " + dsn)
	}
	return f.(*fakeServer).Open(dsn)
}

func openFake(t *testing.T, f *fakeServer) *sql.DB {
	t.Helper()
	registerOnce.Do(func() { sql.Register("sqlconn-fake", fakeDriver{}) })
	fakes.Store(t.Name(), f)
	db, err := sql.Open("sqlconn-fake", t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); fakes.Delete(t.Name()) })
	return db
}

// reads reports whether a query reads a catalog view or function.
func reads(query, view string) bool { return strings.Contains(query, view) }
