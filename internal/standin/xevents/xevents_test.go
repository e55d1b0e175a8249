package xevents

import (
	"cmp"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// instance is a server as a session sees it: which actions it knows,
// whether it accepts an event_file path, where relative files go.
type instance struct {
	actions map[string]bool
	files   bool
	logDir  string
}

func (i instance) HasAction(name string) bool            { return i.actions[strings.ToLower(name)] }
func (i instance) LogDirOrDefault() string               { return i.logDir }
func (i instance) EventFileAllowed(filename string) bool { return i.files }
func (i instance) ProductName() string                   { return "Test Product" }
func (i instance) DatabaseScopedUnavailable(kind, name string) bool {
	return kind == "event" && name == "sqlserver.lock_acquired"
}

// values orders int64 and string values and records that it was asked.
type values struct{ compared, matched *int }

func (v values) Compare(a, b any) (int, error) {
	*v.compared++
	x, y := a.(int64), b.(int64)
	return cmp.Compare(x, y), nil
}
func (v values) String(x any) string { s, _ := x.(string); return s }
func (v values) Like(s, p string) bool {
	*v.matched++
	return strings.HasPrefix(s, strings.TrimSuffix(p, "%"))
}

func createSession(t *testing.T, ddl string) *sqlfront.CreateEventSessionStmt {
	t.Helper()
	stmts, err := sqlfront.ParseBatch(ddl)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	st, ok := stmts[0].(*sqlfront.CreateEventSessionStmt)
	if !ok {
		t.Fatalf("parsed %T", stmts[0])
	}
	return st
}

const traceDDL = `CREATE EVENT SESSION s ON SERVER
ADD EVENT sqlserver.sql_statement_completed (ACTION (sqlserver.session_id, sqlserver.sql_text) WHERE duration > 10)
ADD TARGET package0.event_file (SET filename = N'trace.xel')`

// A session is validated against the instance it runs on, through the
// Instance interface only: an action the instance lacks is Msg 25623, a
// file it refuses is Msg 25602 naming its product, and relative files go
// to its log directory.
func TestSessionAsksItsInstance(t *testing.T) {
	all := map[string]bool{"session_id": true, "sql_text": true}
	sess, err := SessionFromDDL(createSession(t, traceDDL), instance{actions: all, files: true, logDir: `D:\Log`})
	if err != nil {
		t.Fatalf("valid session refused: %v", err)
	}
	if len(sess.Targets) != 1 || sess.Targets[0].LogDir != `D:\Log` || sess.Targets[0].Filename != "trace.xel" {
		t.Fatalf("target %+v", sess.Targets)
	}
	_, err = SessionFromDDL(createSession(t, traceDDL), instance{actions: map[string]bool{"session_id": true}, files: true})
	if err == nil || err.Number != 25623 || !strings.Contains(err.Message, "sql_text") {
		t.Errorf("action the instance lacks: %v, want Msg 25623 naming sql_text", err)
	}
	_, err = SessionFromDDL(createSession(t, traceDDL), instance{actions: all})
	if err == nil || err.Number != 25602 || !strings.Contains(err.Message, "Test Product") {
		t.Errorf("file the instance refuses: %v, want Msg 25602 naming the product", err)
	}
}

// A predicate compares through the server's Values, on event fields and
// on actions, and combines leaves with AND/OR/NOT.
func TestPredicateComparesThroughValues(t *testing.T) {
	all := map[string]bool{"session_id": true, "sql_text": true}
	ddl := `CREATE EVENT SESSION s ON SERVER
ADD EVENT sqlserver.sql_statement_completed (WHERE duration > 10 AND NOT sqlserver.session_id = 60 AND sqlserver.sql_text LIKE N'SELECT%')`
	sess, err := SessionFromDDL(createSession(t, ddl), instance{actions: all})
	if err != nil {
		t.Fatal(err)
	}
	pred := sess.Events[0].Pred
	var compared, matched int
	vals := values{&compared, &matched}
	for _, tc := range []struct {
		duration int64
		spid     int
		sql      string
		want     bool
	}{
		{20, 57, "SELECT 1", true},
		{10, 57, "SELECT 1", false},
		{20, 60, "SELECT 1", false},
		{20, 57, "UPDATE t SET a = 1", false},
	} {
		ev := &EventData{Name: "sql_statement_completed", Pkg: "sqlserver", Fields: []Field{FUint("duration", "uint64", tc.duration)}}
		if got := EvalPred(pred, &EventCtx{SPID: tc.spid, SQLText: tc.sql}, ev, vals); got != tc.want {
			t.Errorf("duration %d, session %d, %q: matched %v, want %v", tc.duration, tc.spid, tc.sql, got, tc.want)
		}
	}
	if compared == 0 || matched == 0 {
		t.Errorf("Values asked %d comparisons and %d LIKE matches; the predicate must use the server's semantics", compared, matched)
	}
}
