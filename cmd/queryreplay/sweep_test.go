package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/internal/testsql"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

func runSweepCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"sweep"}, args...), &env{stdout: &out, stderr: &errb, stdin: strings.NewReader("")})
	return code, out.String(), errb.String()
}

// traceSessions lists the tracer's sessions on the stand-in.
func traceSessions(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return testsql.EventSessions(t, db, tracer.SessionPrefix)
}

func TestSweepCommand(t *testing.T) {
	srv := startTraceStandin(t)
	db, err := tracer.OpenDSN(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gone, _ := tracer.NewOwnedSessionName(tracer.SessionOwner{SPID: 999, LoginTime: time.Now()})
	for _, name := range []string{gone, "queryreplay_exporter_prod"} {
		s := tracer.SessionSpec{Name: name, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}
		if _, err := db.Exec(s.CreateDDL()); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runSweepCmd(t, "--dsn", srv.DSN)
	if code != 0 || !strings.Contains(out, "dropped "+gone+"\n") || !strings.Contains(out, "1 session(s) dropped, 0 kept") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if s := traceSessions(t, db); len(s) != 1 || s[0] != "queryreplay_exporter_prod" {
		t.Fatalf("left %v: want only the exporter's session", s)
	}
	code, _, errs = runSweepCmd(t, "--dsn", "sqlserver://sa:pw@127.0.0.1:1?dial+timeout=1")
	if code != 1 || !strings.Contains(errs, "connect") {
		t.Fatalf("unreachable server: exit %d\n%s", code, errs)
	}
}

// buildCLI builds the queryreplay binary once for the tests that run it.
var buildCLI = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "queryreplay-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "queryreplay")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: out}
	}
	return bin, nil
})

// TestKillNineThenSweep: kill -9 of the real queryreplay binary in the
// middle of a trace leaves its session behind, filtered on a session id the
// server will hand to the next connection; the next `queryreplay sweep`,
// or the next trace, drops it within seconds (its owner connection is
// gone), whatever the grace period; the killed trace's modification is
// rolled back by the server.
func TestKillNineThenSweep(t *testing.T) {
	bin, err := buildCLI()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	for _, next := range []string{"sweep", "trace"} {
		t.Run(next, func(t *testing.T) {
			srv := startTraceStandin(t)
			db, err := tracer.OpenDSN(srv.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var before string
			db.QueryRow("SELECT CONCAT(COUNT(*), '/', SUM(Amount)) FROM dbo.Orders").Scan(&before)
			srv.Faults().Delay("WHERE OrderID = 7", time.Minute)
			cmd := exec.Command(bin, "trace", "-q", "--sql", "UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 7")
			cmd.Env = append(os.Environ(), "QUERYREPLAY_DSN="+srv.DSN)
			var childErr bytes.Buffer
			cmd.Stderr = &childErr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// kill it mid-trace: its session exists and it has begun the
			// transaction it sends the (held) batch in
			midTrace := testenv.Poll(20*time.Second, func() bool {
				if len(traceSessions(t, db)) == 0 {
					return false
				}
				var open int
				return db.QueryRow("SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE open_transaction_count > 0").Scan(&open) == nil && open > 0
			})
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if !midTrace {
				t.Fatalf("the trace never reached its held batch: sessions %v\n%s", traceSessions(t, db), childErr.String())
			}
			killed := time.Now()
			left := traceSessions(t, db)
			if len(left) != 1 {
				t.Fatalf("the killed trace should have left its session: %v\n%s", left, childErr.String())
			}
			var out, errs string
			var code int
			if next == "sweep" {
				code, out, errs = runSweepCmd(t, "--dsn", srv.DSN, "--grace", "24h")
			} else {
				code, out, errs = runTraceCmd(t, "", "--dsn", srv.DSN, "--orphan-grace", "24h", "--sql", "SELECT TOP 1 OrderID FROM dbo.Orders")
			}
			if code != 0 {
				t.Fatalf("%s after kill -9: exit %d\n%s\n%s", next, code, out, errs)
			}
			if s := traceSessions(t, db); len(s) != 0 {
				t.Fatalf("%s after kill -9 left %v", next, s)
			}
			if took := time.Since(killed); took > 5*time.Second {
				t.Errorf("the session was gone %s after kill -9, want within seconds", took)
			}
			if next == "sweep" && !strings.Contains(out, "dropped "+left[0]) {
				t.Errorf("sweep did not report %s:\n%s", left[0], out)
			}
			var after string
			db.QueryRow("SELECT CONCAT(COUNT(*), '/', SUM(Amount)) FROM dbo.Orders").Scan(&after)
			if after != before {
				t.Errorf("the killed trace's modification survived: %s, was %s", after, before)
			}
		})
	}
}
