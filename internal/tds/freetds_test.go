package tds

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// FreeTDS (Debian package freetds-bin) is an independent TDS implementation;
// these tests check that its clients accept the server too.

// runFreeTDS runs a FreeTDS client with TDS 7.4 and without any user or
// system freetds.conf, returning combined output and the exit code.
func runFreeTDS(t *testing.T, stdin string, path string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // safety net only
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "TDSVER=7.4", "HOME="+home, "FREETDSCONF="+filepath.Join(home, "none.conf"), "LANG=C.UTF-8")
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	}
	t.Fatalf("run %s: %v\n%s", path, err, out.String())
	return "", -1
}

func TestFreeTDSBsqldb(t *testing.T) {
	bsqldb := testenv.RequireTool(t, "bsqldb", "freetds-bin")
	_, addr := startServer(t, newTestHandler())
	script := filepath.Join(t.TempDir(), "q.sql")
	batches := "select @@spid\ngo\nselect rows 3\ngo\nselect type 7\ngo\nselect type 8\ngo\nselect type 16\ngo\nselect type 18\ngo\nraise error\ngo\n"
	if err := os.WriteFile(script, []byte(batches), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runFreeTDS(t, "", bsqldb, "-S", addr, "-U", "sa", "-P", testPassword, "-D", "appdb", "-i", script)
	// bsqldb exits with the severity of the error that stopped it.
	if code != 16 {
		t.Errorf("bsqldb exit code %d, want 16 (severity of the error)\n%s", code, out)
	}
	for _, want := range []string{
		"row 2", "3 rows affected", // rows and the DONE count
		"-12345678901234.5678", // decimal(18,4)
		"héllo ☃",              // nvarchar
		"Dec 31 1999 11:59:59:997PM", "0xdeadbeef", "NULL",
		"Msg 50000, Level 16, State 3", "Procedure 'usp_boom', Line 7", "boom from test", "Server 'QUERYREPLAY'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bsqldb output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+51\s*$`).MatchString(out) {
		t.Errorf("bsqldb output lacks @@spid 51:\n%s", out)
	}
}

func TestFreeTDSLoginFailure(t *testing.T) {
	bsqldb := testenv.RequireTool(t, "bsqldb", "freetds-bin")
	_, addr := startServer(t, newTestHandler())
	script := filepath.Join(t.TempDir(), "q.sql")
	os.WriteFile(script, []byte("select 1\ngo\n"), 0o644)
	out, code := runFreeTDS(t, "", bsqldb, "-S", addr, "-U", "sa", "-P", "wrong", "-i", script)
	if code != 14 {
		t.Errorf("bsqldb exit code %d, want 14\n%s", code, out)
	}
	for _, want := range []string{"Msg 18456, Level 14, State 1", "Login failed for user 'sa'."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// tsql talks libtds directly and shows the types bsqldb's DB-Library refuses
// (date, datetime2, datetimeoffset, uniqueidentifier) and nvarchar(max) as text.
func TestFreeTDSTsqlTypes(t *testing.T) {
	tsql := testenv.RequireTool(t, "tsql", "freetds-bin")
	_, addr := startServer(t, newTestHandler())
	host, port, _ := net.SplitHostPort(addr)
	in := "select type 9\ngo\nselect type 13\ngo\nselect type 14\ngo\nselect type 17\ngo\nselect type 12\ngo\n"
	out, code := runFreeTDS(t, in, tsql, "-H", host, "-p", port, "-U", "sa", "-P", testPassword, "-D", "appdb", "-o", "fhq")
	if code != 0 {
		t.Fatalf("tsql exit code %d\n%s", code, out)
	}
	for _, want := range []string{
		"long text ☃ long text ☃",              // nvarchar(max) as PLP
		"May  6 2024 07:08AM",                  // datetime2 and datetimeoffset (local clock reading)
		"6F9619FF-8B86-D011-B42D-00C04FC964FF", // uniqueidentifier byte order
		`<event name="x"><data>1</data></event>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tsql output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "May  6 2024 07:08AM"); n != 2 {
		t.Errorf("datetime2 and datetimeoffset should both print May  6 2024 07:08AM; found %d\n%s", n, out)
	}
}
