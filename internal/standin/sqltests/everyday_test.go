// Package sqltests runs everyday T-SQL against the SQL Server stand-in
// through the real go-mssqldb driver and checks the results against
// values computed here, in Go, from the demo generator's rows; then traces
// each query with pkg/tracer and checks the timeline has a plan and lanes.
// It lives outside internal/standin because that package must not import
// the tracer's parsers (pkg/xe, pkg/showplan).
package sqltests

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

func startStandin(t *testing.T) (*standin.Running, *sql.DB) {
	t.Helper()
	return startStandinWith(t, standin.Options{})
}

// startStandinWith starts a stand-in with opts (its event files readable
// as .xel) and opens a database handle on it.
func startStandinWith(t *testing.T, opts standin.Options) (*standin.Running, *sql.DB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.XELEncoder = xe.EncodeXMLAsXEL
	run, err := standin.Start(ctx, "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	db, err := sql.Open("sqlserver", run.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return run, db
}

// lastResult runs a batch and returns the rows of its last result set.
func lastResult(ctx context.Context, db *sql.DB, q string) ([][]any, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var last [][]any
	for {
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		var set [][]any
		for rows.Next() {
			vals, err := scanRow(rows, len(cols))
			if err != nil {
				return nil, err
			}
			set = append(set, vals)
		}
		if len(cols) > 0 {
			last = set
		}
		if !rows.NextResultSet() {
			break
		}
	}
	return last, rows.Err()
}

// scanRow scans the current row of rows, which has width columns.
func scanRow(rows *sql.Rows, width int) ([]any, error) {
	vals := make([]any, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, rows.Scan(ptrs...)
}

// statisticsXMLConn opens one connection of db with SET STATISTICS XML ON,
// so that every query run on it also returns its actual plan.
func statisticsXMLConn(ctx context.Context, t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, "SET STATISTICS XML ON"); err != nil {
		t.Fatal(err)
	}
	return conn
}

func compareRows(t *testing.T, got, want [][]any, ordered bool) {
	t.Helper()
	if !ordered {
		sortRows(got)
		sortRows(want)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d\n got: %v\nwant: %v", len(got), len(want), head(got), head(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d: %d columns, want %d: %v / %v", i, len(got[i]), len(want[i]), got[i], want[i])
		}
		for j := range got[i] {
			if !sameValue(got[i][j], want[i][j]) {
				t.Fatalf("row %d column %d: got %v (%T), want %v (%T)\n got row: %v\nwant row: %v", i, j, got[i][j], got[i][j], want[i][j], want[i][j], got[i], want[i])
			}
		}
	}
}

func head(rows [][]any) [][]any {
	if len(rows) > 5 {
		return rows[:5]
	}
	return rows
}

// TestEverydayQueries runs every query of the table and compares its
// result with the one computed from the generator's rows.
func TestEverydayQueries(t *testing.T) {
	if len(everydayQueries) < 40 {
		t.Fatalf("%d everyday queries, want at least 40", len(everydayQueries))
	}
	_, db := startStandin(t)
	d := loadDemo()
	for _, q := range everydayQueries {
		t.Run(q.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			got, err := lastResult(ctx, db, q.sql)
			if q.wantErr != 0 {
				var me mssql.Error
				if !errors.As(err, &me) || me.Number != q.wantErr {
					t.Fatalf("want Msg %d, got %v", q.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			compareRows(t, got, q.want(d), q.ordered)
		})
	}
}

// TestEverydayQueriesTrace traces every query with the real tracer (cold
// buffer pool, every event group) and checks that the timeline has the
// plan's operators and events on its lanes.
func TestEverydayQueriesTrace(t *testing.T) {
	_, db := startStandin(t)
	tr := tracer.New(tracer.DBOpener{DB: db}, tracer.Policy{AllowClearBufferPool: true}, slog.New(slog.DiscardHandler))
	for _, q := range everydayQueries {
		if q.wantErr != 0 {
			continue
		}
		t.Run(q.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			sqlText := q.sql
			if q.trace != "" {
				sqlText = q.trace
			}
			b, err := tr.Trace(ctx, tracer.Options{SQL: sqlText, ClearBufferPool: true, Events: bundle.AllEventGroups()})
			if err != nil {
				t.Fatal(err)
			}
			if b.Trace == nil || len(b.Trace.Operators) == 0 {
				t.Fatalf("no plan operators on the timeline: %+v", b.Trace)
			}
			if len(b.Trace.Lanes.Plan) == 0 {
				t.Fatal("empty plan lane")
			}
			// a query over the demo tables, on a cold buffer pool, reads pages
			// and takes locks
			lanes := b.Trace.Summary.Lanes
			if strings.Contains(sqlText, "dbo.") && (lanes["read"] == 0 || lanes["lock"] == 0) {
				t.Fatalf("lanes %v: want page reads and locks", lanes)
			}
			if b.Result.Batches != 1 {
				t.Fatalf("%d traced batches", b.Result.Batches)
			}
		})
	}
}
