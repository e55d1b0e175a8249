package standin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// TestFreeTDSSuite drives the stand-in (or the server in
// QUERYREPLAY_TEST_DSN) with FreeTDS's bsqldb (Debian freetds-bin, GnuTLS):
// TLS off, login-only ("request", FreeTDS's default), required with the CA
// pinned and with a wrong CA; batches with several result sets; T-SQL
// transactions and savepoints; errors with numbers, states and lines; info
// messages; large values. FreeTDS 1.3 has no TDS 8.0 (strict) support and
// bsqldb sends no RPCs, so those are covered by the go-mssqldb and tedious
// suites.
func TestFreeTDSSuite(t *testing.T) {
	runFreeTDSSuite(t, startSuiteTarget(t))
}

// freetdsClient runs bsqldb against a suiteTarget through a freetds.conf
// written for it: host, port and TLS settings live in the file, the
// password reaches bsqldb on its standard input.
type freetdsClient struct {
	bsqldb, dir, conf string
	target            *suiteTarget
	// main is the freetds.conf section the ordinary cases use.
	main string
}

func newFreeTDSClient(t *testing.T, target *suiteTarget) *freetdsClient {
	t.Helper()
	c := &freetdsClient{bsqldb: testenv.RequireTool(t, "bsqldb", "freetds-bin"), dir: t.TempDir(), target: target}
	wrongCA := filepath.Join(c.dir, "wrong-ca.pem")
	other, err := tds.GenerateCertificate([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrongCA, other.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{"wrong_ca": "encryption = require\n\tca file = " + wrongCA}
	if target.Real {
		c.main = "dsn"
		sections["dsn"] = freetdsTLS(t, target)
	} else {
		c.main = "require"
		sections["off"] = "encryption = off"
		sections["request"] = "encryption = request"
		sections["require"] = "encryption = require\n\tca file = " + target.CAFile + "\n\tcheck certificate hostname = yes"
	}
	var b strings.Builder
	for name, settings := range sections {
		fmt.Fprintf(&b, "[%s]\n\thost = %s\n\tport = %s\n\ttds version = 7.4\n\t%s\n", name, target.Host, target.Port, settings)
	}
	c.conf = filepath.Join(c.dir, "freetds.conf")
	if err := os.WriteFile(c.conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// freetdsTLS maps the DSN's TLS settings onto freetds.conf's. FreeTDS 1.3
// has no strict mode (encrypt=strict becomes require) and no
// hostnameincertificate (the certificate is checked against host, or not
// at all when the DSN names another host).
func freetdsTLS(t *testing.T, target *suiteTarget) string {
	mode := map[string]string{"disable": "off", "false": "request", "true": "require", "strict": "require"}[target.Encrypt]
	if target.Encrypt == "strict" {
		t.Log("FreeTDS 1.3 has no TDS 8.0: encrypt=strict runs as encryption = require")
	}
	settings := "encryption = " + mode
	switch {
	case mode == "off" || target.TrustServerCertificate:
	case target.CAFile != "":
		settings += "\n\tca file = " + target.CAFile
	default:
		settings += "\n\tca file = system"
	}
	if mode != "off" && !target.TrustServerCertificate {
		check := "yes"
		if target.HostInCertificate != "" && target.HostInCertificate != target.Host {
			check = "no"
			t.Logf("FreeTDS cannot check for hostnameincertificate=%s: certificate hostname check off", target.HostInCertificate)
		}
		settings += "\n\tcheck certificate hostname = " + check
	}
	return settings
}

// command is bsqldb logging in to section and running the script file.
// The password is not among its arguments: bsqldb reads it from standard
// input when -P is absent (it prompts on /dev/tty, which a new session
// does not have).
func (c *freetdsClient) command(ctx context.Context, section, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bsqldb, "-S", section, "-U", c.target.User, "-D", c.target.Database, "-i", script)
	cmd.Env = childEnv("FREETDSCONF="+c.conf, "HOME="+c.dir)
	cmd.Stdin = strings.NewReader(c.target.Password + "\n")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// run runs script against section; it returns the output and bsqldb's
// exit status (the severity of the last error).
func (c *freetdsClient) run(t *testing.T, section, script string) (string, int) {
	t.Helper()
	in := filepath.Join(c.dir, "q.sql")
	if err := os.WriteFile(in, []byte(script+"\ngo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.command(ctx, section, in).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func runFreeTDSSuite(t *testing.T, target *suiteTarget) {
	c := newFreeTDSClient(t, target)
	t.Run("TLS modes", func(t *testing.T) {
		if target.Real {
			out, code := c.run(t, c.main, "SELECT encrypt_option FROM sys.dm_exec_connections WHERE session_id = @@SPID")
			if code != 0 || target.Encrypt == "true" && !strings.Contains(out, "TRUE") {
				t.Fatalf("login as the DSN says (encrypt=%s): exit %d\n%s", target.Encrypt, code, out)
			}
			t.Skip("stand-in only: TLS off and login-only encryption; a real server's allowed modes are its configuration (the DSN's mode logged in)")
		}
		for server, enc := range map[string]string{"off": "FALSE", "request": "FALSE", "require": "TRUE"} {
			out, code := c.run(t, server, "SELECT encrypt_option FROM sys.dm_exec_connections WHERE session_id = @@SPID")
			if code != 0 || !strings.Contains(out, enc) {
				t.Errorf("%s: exit %d, want encrypt_option %s:\n%s", server, code, enc, out)
			}
		}
	})
	t.Run("certificate from another CA refused", func(t *testing.T) {
		if target.Encrypt == "disable" {
			t.Skip("the DSN says encrypt=disable")
		}
		if out, code := c.run(t, "wrong_ca", "SELECT 1"); code == 0 {
			t.Errorf("a certificate from another CA was accepted:\n%s", out)
		}
	})
	t.Run("several result sets", func(t *testing.T) {
		out, code := c.run(t, c.main, "SELECT 1 AS a\nSELECT N'two' AS b, 3 AS c")
		if code != 0 || !strings.Contains(out, "two") || strings.Count(out, "rows affected") != 2 {
			t.Errorf("two result sets: exit %d\n%s", code, out)
		}
	})
	t.Run("transaction and savepoint", func(t *testing.T) {
		out, code := c.run(t, c.main, `CREATE TABLE #sp (id int PRIMARY KEY, v int)
INSERT INTO #sp (id, v) VALUES (2, 0)
BEGIN TRAN named_tx
UPDATE #sp SET v = 1 WHERE id = 2
SAVE TRAN sp1
UPDATE #sp SET v = 2 WHERE id = 2
ROLLBACK TRAN sp1
SELECT @@TRANCOUNT AS trancount, v FROM #sp WHERE id = 2
ROLLBACK TRAN named_tx
SELECT @@TRANCOUNT AS after_rollback, v FROM #sp WHERE id = 2`)
		if code != 0 || !regexpFields(out, "1", "1") || !regexpFields(out, "0", "0") {
			t.Errorf("savepoint round: exit %d\n%s", code, out)
		}
	})
	t.Run("errors and messages", func(t *testing.T) {
		out, code := c.run(t, c.main, "PRINT N'hello from PRINT'\nSELECT 1 AS x\nSELECT 1/0")
		if code != 16 || !strings.Contains(out, "hello from PRINT") || !strings.Contains(out, "Msg 8134, Level 16, State 1") || !strings.Contains(out, "Line 3") {
			t.Errorf("error and info: exit %d (want 16)\n%s", code, out)
		}
	})
	t.Run("large value", func(t *testing.T) {
		// an 18 KB batch (several packets) declaring a 9,000-character
		// nvarchar(max); bsqldb cannot print (max) columns faithfully (it
		// shows them as truncated hex), so the server measures the value
		out, code := c.run(t, c.main, "DECLARE @s nvarchar(max) = N'"+strings.Repeat("x", 9000)+"'\nSELECT LEN(@s) AS n, DATALENGTH(@s) AS bytes")
		if code != 0 || !regexpFields(out, "9000", "18000") {
			t.Errorf("large value: exit %d\n%.500s", code, out)
		}
	})
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
