package standin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bsqldb runs FreeTDS's bsqldb (Debian package freetds-bin) against the
// stand-in: an independent TDS client. Its exit status is the severity of
// the last error.
func bsqldb(t *testing.T, r *Running, user, password, script string) (string, int) {
	t.Helper()
	path, err := exec.LookPath("bsqldb")
	if err != nil {
		if allowSkip() {
			t.Skip("bsqldb not installed (apt-get install -y freetds-bin)")
		}
		t.Fatal("bsqldb not installed: apt-get install -y freetds-bin (or set QUERYREPLAY_ALLOW_SKIP=1)")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "q.sql")
	if err := os.WriteFile(in, []byte(script+"\ngo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), path, "-S", r.Addr, "-U", user, "-P", password, "-D", demoDBName, "-i", in)
	cmd.Env = append(os.Environ(), "TDSVER=7.4", "FREETDSCONF=/dev/null", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// scenarioSQL returns a scenario's text. bsqldb cannot print datetime2
// ("type 42 not supported"), so the FreeTDS test uses a scenario without
// date columns.
func scenarioSQL(t *testing.T, name string) string {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s.SQL
		}
	}
	t.Fatalf("no scenario %s", name)
	return ""
}

func TestFreeTDSClient(t *testing.T) {
	r, _ := startStandin(t, Options{})
	pw := r.Server.opts.Password

	out, code := bsqldb(t, r, "sa", pw, "SELECT @@SPID AS spid, DB_NAME() AS db")
	if code != 0 || !strings.Contains(out, demoDBName) {
		t.Fatalf("login/select: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, `CREATE EVENT SESSION ft ON SERVER ADD EVENT sqlserver.sql_batch_starting(ACTION(package0.event_sequence)), ADD EVENT sqlserver.lock_acquired ADD TARGET package0.event_file(SET filename = N'ft.xel')`)
	if code != 0 {
		t.Fatalf("create session: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "SELECT name FROM sys.server_event_sessions")
	if code != 0 || !strings.Contains(out, "ft") {
		t.Fatalf("list sessions: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "ALTER EVENT SESSION ft ON SERVER STATE = START\ngo\n"+scenarioSQL(t, "hash_aggregate")+"\ngo\nALTER EVENT SESSION ft ON SERVER STATE = STOP")
	if code != 0 {
		t.Fatalf("run scenario: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "SELECT COUNT(*) AS n FROM sys.fn_xe_file_target_read_file('ft*.xel', NULL, NULL, NULL) WHERE object_name = 'lock_acquired'")
	if code != 0 || strings.Contains(out, "\n0\n") {
		t.Fatalf("read back: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "DROP EVENT SESSION ft ON SERVER")
	if code != 0 {
		t.Fatalf("drop: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "DROP EVENT SESSION ft ON SERVER")
	if code != 16 || !strings.Contains(out, "Cannot drop the event session 'ft'") {
		t.Fatalf("drop twice: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "CREATE EVENT SESSION bad ON SERVER ADD EVENT sqlserver.no_such_event")
	if code != 16 || !strings.Contains(out, "25623") && !strings.Contains(out, "is invalid, or the object could not be found") {
		t.Fatalf("bad DDL: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", pw, "SELECT * FROM dbo.Nope")
	if code != 16 || !strings.Contains(out, "Invalid object name 'dbo.Nope'") {
		t.Fatalf("unknown table: exit %d\n%s", code, out)
	}
	out, code = bsqldb(t, r, "sa", "wrong-password", "SELECT 1")
	if code == 0 || !strings.Contains(out, "Login failed") {
		t.Fatalf("wrong password: exit %d\n%s", code, out)
	}
}
