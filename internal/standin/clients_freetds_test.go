package standin

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// TestFreeTDSSuite drives the stand-in with FreeTDS's bsqldb (Debian
// freetds-bin, GnuTLS): TLS off, login-only ("request", FreeTDS's
// default), required with the CA pinned and with a wrong CA; batches with
// several result sets; T-SQL transactions and savepoints; errors with
// numbers, states and lines; info messages; large values. FreeTDS 1.3 has
// no TDS 8.0 (strict) support and bsqldb sends no RPCs, so those are
// covered by the go-mssqldb and tedious suites.
func TestFreeTDSSuite(t *testing.T) {
	bsqldb := testenv.RequireTool(t, "bsqldb", "freetds-bin")
	r, _ := startStandin(t, Options{})
	host, port, _ := net.SplitHostPort(r.Addr)
	dir := t.TempDir()
	wrongCA := filepath.Join(dir, "wrong-ca.pem")
	other, err := tds.GenerateCertificate([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrongCA, other.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "freetds.conf")
	var b strings.Builder
	for name, settings := range map[string]string{
		"off":      "encryption = off",
		"request":  "encryption = request",
		"require":  "encryption = require\n\tca file = " + r.CAFile + "\n\tcheck certificate hostname = yes",
		"wrong_ca": "encryption = require\n\tca file = " + wrongCA,
	} {
		fmt.Fprintf(&b, "[%s]\n\thost = %s\n\tport = %s\n\ttds version = 7.4\n\t%s\n", name, host, port, settings)
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runSQL := func(server, script string) (string, int) {
		t.Helper()
		in := filepath.Join(dir, "q.sql")
		if err := os.WriteFile(in, []byte(script+"\ngo\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bsqldb, "-S", server, "-U", r.Server.opts.User, "-P", r.Server.opts.Password, "-D", demoDBName, "-i", in)
		cmd.Env = append(os.Environ(), "FREETDSCONF="+conf, "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	want := map[string]string{"off": "FALSE", "request": "FALSE", "require": "TRUE"}
	for server, enc := range want {
		out, code := runSQL(server, "SELECT encrypt_option FROM sys.dm_exec_connections WHERE session_id = @@SPID")
		if code != 0 || !strings.Contains(out, enc) {
			t.Errorf("%s: exit %d, want encrypt_option %s:\n%s", server, code, enc, out)
		}
	}
	if out, code := runSQL("wrong_ca", "SELECT 1"); code == 0 {
		t.Errorf("a certificate from another CA was accepted:\n%s", out)
	}

	out, code := runSQL("require", "SELECT 1 AS a\nSELECT N'two' AS b, 3 AS c")
	if code != 0 || !strings.Contains(out, "two") || strings.Count(out, "rows affected") != 2 {
		t.Errorf("two result sets: exit %d\n%s", code, out)
	}
	out, code = runSQL("require", `BEGIN TRAN named_tx
UPDATE dbo.Products SET ListPrice = 1 WHERE ProductID = 2
SAVE TRAN sp1
UPDATE dbo.Products SET ListPrice = 2 WHERE ProductID = 2
ROLLBACK TRAN sp1
SELECT @@TRANCOUNT AS trancount, ListPrice FROM dbo.Products WHERE ProductID = 2
ROLLBACK TRAN named_tx
SELECT @@TRANCOUNT AS after_rollback`)
	if code != 0 || !strings.Contains(out, "1\t1") && !regexpFields(out, "1", "1") {
		t.Errorf("savepoint round: exit %d\n%s", code, out)
	}
	out, code = runSQL("require", "PRINT N'hello from PRINT'\nSELECT 1 AS x\nSELECT 1/0")
	if code != 16 || !strings.Contains(out, "hello from PRINT") || !strings.Contains(out, "Msg 8134, Level 16, State 1") || !strings.Contains(out, "Line 3") {
		t.Errorf("error and info: exit %d (want 16)\n%s", code, out)
	}
	// an 18 KB batch (several packets) declaring a 9,000-character
	// nvarchar(max); bsqldb cannot print (max) columns faithfully (it shows
	// them as truncated hex), so the server measures the value instead
	out, code = runSQL("require", "DECLARE @s nvarchar(max) = N'"+strings.Repeat("x", 9000)+"'\nSELECT LEN(@s) AS n, DATALENGTH(@s) AS bytes")
	if code != 0 || !regexpFields(out, "9000", "18000") {
		t.Errorf("large value: exit %d\n%.500s", code, out)
	}
}

// regexpFields reports whether some output line has exactly the given
// whitespace-separated fields.
func regexpFields(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
