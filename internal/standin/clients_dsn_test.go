package standin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// loginCounter is a slog.Handler that counts the "tds login" records of
// one login name: the stand-in's own count of who logged in to it.
type loginCounter struct {
	user string
	mu   *sync.Mutex
	n    *int
}

func (c loginCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c loginCounter) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c loginCounter) WithGroup(string) slog.Handler            { return c }
func (c loginCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "tds login" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "user" && a.Value.String() == c.user {
			c.mu.Lock()
			*c.n++
			c.mu.Unlock()
		}
		return true
	})
	return nil
}

func (c loginCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.n
}

// TestClientSuitesFollowTestDSN proves QUERYREPLAY_TEST_DSN is the one
// switch for all three client suites: it points the DSN at a second
// stand-in (a real TDS server on 127.0.0.1) with a login name and password
// only that instance knows, runs each suite, and checks that instance
// counted the suite's logins and that the stand-in-only cases said they
// were skipped.
func TestClientSuitesFollowTestDSN(t *testing.T) {
	var buf [12]byte
	if _, err := rand.Read(buf[:]); err != nil {
		t.Fatal(err)
	}
	password := "Probe-" + hex.EncodeToString(buf[:])
	logins := loginCounter{user: "suite_probe", mu: &sync.Mutex{}, n: new(int)}
	other, _ := startStandin(t, Options{User: "suite_probe", Password: password, Logger: slog.New(logins)})
	dsn := fmt.Sprintf("sqlserver://%s@%s?database=%s&encrypt=true&certificate=%s",
		url.UserPassword("suite_probe", password).String(), other.Addr, demoDBName, url.QueryEscape(other.CAFile))
	t.Setenv(testDSNVar, dsn)

	target := startSuiteTarget(t)
	if !target.Real || target.Running != nil || target.User != "suite_probe" || target.Password != password || target.CAFile != other.CAFile {
		t.Fatalf("target from the DSN: real %v, user %q, CA %q", target.Real, target.User, target.CAFile)
	}
	suites := []struct {
		name string
		run  func(t *testing.T) string
	}{
		{"go-mssqldb", func(t *testing.T) string { TestGoMssqldbSuite(t); return "" }},
		{"tedious", func(t *testing.T) string { return runTediousSuite(t, startSuiteTarget(t)) }},
		{"FreeTDS", func(t *testing.T) string { TestFreeTDSSuite(t); return "" }},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			before := logins.count()
			out := s.run(t)
			if got := logins.count() - before; got == 0 {
				t.Errorf("the %s suite did not log in to the server in %s", s.name, testDSNVar)
			}
			if s.name == "tedious" && !strings.Contains(out, "skip demo schema types: stand-in only") {
				t.Errorf("the stand-in-only cases did not say they were skipped:\n%s", out)
			}
		})
	}

	ft := newFreeTDSClient(t, target)
	cmd := ft.command(context.Background(), ft.main, "q.sql")
	if strings.Contains(strings.Join(cmd.Args, " "), password) {
		t.Errorf("the password is on bsqldb's command line: %q", cmd.Args)
	}
}

// TestParseSuiteDSN checks the DSN forms the suites accept and that errors
// never quote the password.
func TestParseSuiteDSN(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	gen, err := tds.GenerateCertificate([]string{"db.example"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, gen.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dsn                  string
		host, port, db, enc  string
		trust                bool
		ca, hostInCert, user string
	}{
		{dsn: "sqlserver://u:pw@db.example:1444?database=master&encrypt=true&certificate=" + url.QueryEscape(ca) + "&hostnameincertificate=sql.example",
			host: "db.example", port: "1444", db: "master", enc: "true", ca: ca, hostInCert: "sql.example", user: "u"},
		{dsn: "sqlserver://u:pw@db.example?database=x&encrypt=disable", host: "db.example", port: "1433", db: "x", enc: "disable", user: "u"},
		{dsn: "server=db.example,1500;user id=u;password=pw;database=d;encrypt=strict;TrustServerCertificate=true",
			host: "db.example", port: "1500", db: "d", enc: "strict", user: "u"},
		{dsn: "sqlserver://u:pw@db.example?database=d&encrypt=false&trustservercertificate=true", host: "db.example", port: "1433", db: "d", enc: "false", trust: true, user: "u"},
	} {
		got, err := parseSuiteDSN(tc.dsn)
		if err != nil {
			t.Errorf("%s: %v", tc.dsn, err)
			continue
		}
		if got.Host != tc.host || got.Port != tc.port || got.Database != tc.db || got.Encrypt != tc.enc || got.TrustServerCertificate != tc.trust ||
			got.CAFile != tc.ca || got.HostInCertificate != tc.hostInCert || got.User != tc.user || got.Password != "pw" || !got.Real {
			t.Errorf("%s: got %+v", tc.dsn, *got)
		}
	}
	for _, dsn := range []string{"sqlserver://db.example?database=d", "sqlserver://u:Secret-pw@db.example/inst?database=d", "sqlserver://u:Secret-pw@db.example?encrypt=sometimes"} {
		_, err := parseSuiteDSN(dsn)
		if err == nil {
			t.Errorf("%s: accepted", dsn)
		} else if strings.Contains(err.Error(), "Secret-pw") {
			t.Errorf("error quotes the password: %v", err)
		}
	}
}
