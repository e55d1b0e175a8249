// Package testsql holds the SQL queries several packages' tests run against
// the stand-in (or a real server) to check what a run left behind.
//
// Test-only: production code must not import it. It imports nothing of
// QueryReplay's, so any package's tests can use it without a cycle.
package testsql

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
)

// EventSessions lists the server's event sessions whose names start with
// prefix ("" for all), from sys.server_event_sessions
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-server-event-sessions-transact-sql).
// The prefix is compared case-sensitively, as session names are made.
func EventSessions(t testing.TB, db *sql.DB, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, "SELECT name FROM sys.server_event_sessions")
	if err != nil {
		t.Fatalf("list event sessions: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatalf("list event sessions: %v", err)
		}
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("list event sessions: %v", err)
	}
	return out
}
