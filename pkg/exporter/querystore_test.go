package exporter

import (
	"github.com/queryreplay/queryreplay/internal/fakesql"

	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// A top query the plan cache no longer holds gets its statement from the
// Query Store of the database it was seen in (three-part names through
// QUOTENAME), capped like plan-cache text; one whose database has no such
// query, or whose Query Store cannot be read, stays without text and
// counts no poll error.
func TestTopQueryTextFromQueryStore(t *testing.T) {
	long := "SELECT o.OrderID FROM dbo.Orders AS o WHERE o.CustomerID = @c AND o.Note = N'" + strings.Repeat("q", 5000) + "'"
	srv := &fakesql.Server{Answer: func(q string, args map[string]any) ([][]any, error) {
		switch {
		case strings.Contains(q, "sys.dm_exec_query_stats"):
			return nil, nil // evicted
		case strings.Contains(q, tsql.QuoteName("Sales]East")+".sys.query_store_query"):
			if h, _ := args["hash"].([]byte); len(h) == 8 && h[7] == 0x01 {
				return [][]any{{"(@c int)" + long, nil}}, nil
			}
			return nil, nil
		case strings.Contains(q, "[Locked].sys.query_store_query"):
			return nil, errors.New("The server principal is not able to access the database")
		}
		return nil, errors.New("unexpected query " + q)
	}}
	db := fakesql.Open(t, srv)
	e := newTestExporter(t, testConfig(t, oneTarget(""), map[string]string{"standin": "sqlserver://sa@127.0.0.1:1"}))
	tg := e.targets[0]
	tg.db = db
	now := time.Now()
	tg.top.noteSpill(0x01, "Sales]East", 3, 8, now)
	tg.top.noteSpill(0x02, "Sales]East", 2, 8, now)
	tg.top.noteSpill(0x03, "Locked", 1, 8, now)
	if err := tg.lookupTop(context.Background()); err != nil {
		t.Fatal(err)
	}
	max := tg.global.TopQueries.MaxStatementBytes
	for _, q := range tg.top.top() {
		switch q.QueryHash {
		case 0x01:
			if q.Statement != long[:max] || !q.Truncated {
				t.Errorf("0x01: statement %d bytes, truncated %v; want the Query Store text without declarations, capped at %d", len(q.Statement), q.Truncated, max)
			}
		default:
			if q.Statement != "" {
				t.Errorf("%x: statement %q", q.QueryHash, q.Statement)
			}
		}
	}
	if n := tg.st.pollErrors[stepNames]; n != 0 {
		t.Errorf("%d poll errors", n)
	}
}
