package tracer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Only an event or action of the session's own, and not its core, may be
// left out on a 25743/25744 refusal.
func TestUnavailableObject(t *testing.T) {
	spec := SessionSpec{Events: bundle.EventGroups{Locks: true}, CallStacks: true}
	for _, c := range []struct {
		err      error
		kind     string
		name     string
		wantSkip bool
	}{
		{mssql.Error{Number: 25743, Message: "The event 'sqlserver.lock_acquired' is not available for Azure SQL Database."}, "event", "sqlserver.lock_acquired", true},
		{mssql.Error{Number: 25743, Message: "The event 'SQLSERVER.LOCK_RELEASED' is not available."}, "event", "sqlserver.lock_released", true},
		{mssql.Error{Number: 25744, Message: "The action 'sqlos.task_address' is not available for Azure SQL Database."}, "action", "sqlos.task_address", true},
		{mssql.Error{Number: 25744, Message: "The action 'package0.callstack' is not available."}, "action", "package0.callstack", true},
		// the core of a trace is never left out
		{mssql.Error{Number: 25743, Message: "The event 'sqlserver.sql_batch_completed' is not available."}, "", "", false},
		{mssql.Error{Number: 25744, Message: "The action 'package0.event_sequence' is not available."}, "", "", false},
		// names the session does not carry, other errors, no name
		{mssql.Error{Number: 25743, Message: "The event 'sqlserver.logout' is not available."}, "", "", false},
		{mssql.Error{Number: 25623, Message: "The event name, 'sqlserver.lock_acquired', is invalid"}, "", "", false},
		{mssql.Error{Number: 25743, Message: "The event is not available."}, "", "", false},
		{errors.New("The event 'sqlserver.lock_acquired' is not available"), "", "", false},
		{nil, "", "", false},
	} {
		kind, name, ok := unavailableObject(c.err, spec)
		if ok != c.wantSkip || ok && (kind != c.kind || name != c.name) {
			t.Errorf("%v: %s %s %v, want %s %s %v", c.err, kind, name, ok, c.kind, c.name, c.wantSkip)
		}
	}
}

// Whatever a refusal says, the name it yields is one the session carries.
func FuzzUnavailableObject(f *testing.F) {
	for _, s := range []string{"The event 'sqlserver.lock_acquired' is not available", "'", "''", "x'sqlos.task_address'y", "'a'b'c'"} {
		f.Add(int32(25743), s)
		f.Add(int32(25744), s)
	}
	spec := SessionSpec{Events: bundle.AllEventGroups(), Modification: true, CallStacks: true}
	f.Fuzz(func(t *testing.T, num int32, msg string) {
		_, name, ok := unavailableObject(mssql.Error{Number: num, Message: msg}, spec)
		if ok && !slices.Contains(spec.EventNames(), name) && !slices.Contains(spec.actionNames(), name) {
			t.Fatalf("%q yields %q, not one of the session's", msg, name)
		}
		if ok && (slices.Contains(coreEvents, name) || slices.Contains(coreActions, name)) {
			t.Fatalf("%q yields the core %q", msg, name)
		}
	})
}

// Azure SQL Database refuses USE of another database (Msg 40508): the
// trace fails saying to connect to it instead.
func TestAzureUseOtherDatabase(t *testing.T) {
	srv := startStandinWith(t, standin.Options{Persona: "azure-sql-database"})
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	_, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Database: "master"})
	if err == nil || !strings.Contains(err.Error(), "40508") || !strings.Contains(err.Error(), "connection string") {
		t.Fatalf("USE master on Azure SQL Database: %v", err)
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Errorf("sessions left: %v", s)
	}
	if _, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Database: "QueryReplayDemo"}); err != nil {
		t.Errorf("USE of the connection's own database: %v", err)
	}
}

// On SQL Server 2016 the event files cannot be listed
// (sys.dm_os_enumerate_filesystem is 2017+): the tracer does not send it
// and reads the events as XML, saying why.
func TestNoEnumerateFilesystemOn2016(t *testing.T) {
	srv := startStandinWith(t, standin.Options{Persona: "sql2016", XELEncoder: xe.EncodeXMLAsXEL})
	tr, log, _ := newTracer(t, srv.dsn, Policy{})
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, TraceDirectory: `C:\Program Files\Microsoft SQL Server\MSSQL13.MSSQLSERVER\MSSQL\Log\`})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(log.texts(), func(q string) bool { return strings.Contains(q, "dm_os_enumerate_filesystem") }) {
		t.Error("sys.dm_os_enumerate_filesystem sent to SQL Server 2016")
	}
	if b.Run.ReadBack != "xml" || !strings.Contains(b.Run.ReadBackFallback, "2017") {
		t.Errorf("read back %q (%s), want xml saying 2017", b.Run.ReadBack, b.Run.ReadBackFallback)
	}
}

// The log is read once, from the log's end before the transaction; when
// the start-LSN form or sys.dm_db_log_stats is refused (fn_dblog is
// undocumented), the trace falls back to the filtered whole-log read and
// still has exactly its own records.
func TestLogReadFallbacks(t *testing.T) {
	for _, c := range []struct {
		name, fault string
		want        []string
	}{
		{"start LSN refused", "FROM fn_dblog(N'0x", []string{"dm_db_log_stats", "fn_dblog(N'0x", "fn_dblog(NULL, NULL) WHERE [Operation] = N'LOP_BEGIN_XACT'"}},
		{"no dm_db_log_stats", "dm_db_log_stats", []string{"dm_db_log_stats", "SELECT MAX([Current LSN]) FROM fn_dblog(NULL, NULL)", "fn_dblog(N'0x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startStandin(t)
			tr, log, db := newTracer(t, srv.dsn, Policy{})
			// a log that is not empty, so that its end is an LSN
			if _, err := db.Exec("BEGIN TRANSACTION; UPDATE dbo.Customers SET Name = Name WHERE CustomerID = 7; ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			before := checksum(t, db)
			srv.running.Faults().Error(c.fault, 9005, 16, "injected refusal")
			b, err := tr.Trace(context.Background(), Options{SQL: updateSQL})
			if err != nil {
				t.Fatal(err)
			}
			if !logHas(b.Result.LogRecords, "LOP_BEGIN_XACT") || !logHas(b.Result.LogRecords, "LOP_INSERT_ROWS") {
				t.Errorf("log records: %+v", b.Result.LogRecords)
			}
			all := strings.Join(log.texts(), "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("no statement contains %q in\n%s", w, all)
				}
			}
			assertNothingLeft(t, db, before)
		})
	}
}
