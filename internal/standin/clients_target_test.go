package standin

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// testDSNVar is the one switch that points every client suite (go-mssqldb,
// tedious, FreeTDS) at a real server instead of the stand-in; see
// docs/standin.md §6.
const testDSNVar = "QUERYREPLAY_TEST_DSN"

// suiteTarget is where the tedious and FreeTDS suites log in: a stand-in
// started for the test, or the server QUERYREPLAY_TEST_DSN names. The
// password travels to the clients only through their environment or
// standard input, never on a command line or in a log line.
type suiteTarget struct {
	Host, Port               string
	User, Password, Database string
	// Encrypt is the DSN's encrypt value as go-mssqldb reads it:
	// "disable" (no TLS at all), "false" (login packet only), "true"
	// (whole connection) or "strict" (TDS 8.0).
	Encrypt string
	// TrustServerCertificate skips certificate verification.
	TrustServerCertificate bool
	// CAFile pins the CA that issued the server certificate ("" = the
	// system roots); HostInCertificate is the name the certificate must
	// carry ("" = Host).
	CAFile, HostInCertificate string
	// Real is true when the target came from QUERYREPLAY_TEST_DSN: the
	// cases only the stand-in guarantees (its demo database, its private
	// CA, its logins) are skipped with a message.
	Real bool
	// Running is the stand-in (nil when Real).
	Running *Running
}

// startSuiteTarget parses QUERYREPLAY_TEST_DSN, or starts a stand-in when
// it is unset.
func startSuiteTarget(t *testing.T) *suiteTarget {
	t.Helper()
	if dsn := os.Getenv(testDSNVar); dsn != "" {
		target, err := parseSuiteDSN(dsn)
		if err != nil {
			t.Fatalf("%s: %v", testDSNVar, err)
		}
		t.Logf("running against the server in %s (%s:%s, database %q, encrypt=%s); stand-in-only cases are skipped",
			testDSNVar, target.Host, target.Port, target.Database, target.Encrypt)
		return target
	}
	r, _ := startStandin(t, Options{})
	host, port, _ := net.SplitHostPort(r.Addr)
	return &suiteTarget{Host: host, Port: port, User: r.Server.opts.User, Password: r.Server.opts.Password,
		Database: demoDBName, Encrypt: "true", CAFile: r.CAFile, Running: r}
}

// parseSuiteDSN reads a go-mssqldb DSN (URL, ADO or ODBC form) with
// go-mssqldb's own parser, so the suites understand exactly what the Go
// suite's driver does. Errors never quote the DSN (it holds a password).
func parseSuiteDSN(dsn string) (*suiteTarget, error) {
	cfg, err := msdsn.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("not a go-mssqldb connection string: %w", err)
	}
	if cfg.Host == "" || cfg.User == "" {
		return nil, fmt.Errorf("the connection string needs a host and a SQL login (user id); the suites log in with SQL authentication")
	}
	if cfg.Instance != "" && cfg.Port == 0 {
		return nil, fmt.Errorf("named instance %q without a port: give the instance's TCP port (the suites do not ask SQL Browser)", cfg.Instance)
	}
	port := cfg.Port
	if port == 0 {
		port = 1433
	}
	encrypt := map[msdsn.Encryption]string{msdsn.EncryptionDisabled: "disable", msdsn.EncryptionOff: "false",
		msdsn.EncryptionRequired: "true", msdsn.EncryptionStrict: "strict"}[cfg.Encryption]
	return &suiteTarget{
		Host: cfg.Host, Port: strconv.FormatUint(port, 10), User: cfg.User, Password: cfg.Password, Database: cfg.Database,
		Encrypt: encrypt, TrustServerCertificate: cfg.TrustServerCertificate && cfg.Encryption != msdsn.EncryptionStrict,
		CAFile: cfg.Parameters[msdsn.Certificate], HostInCertificate: cfg.Parameters[msdsn.HostNameInCertificate], Real: true,
	}, nil
}

// childEnv is the environment of a client process: ours without the DSN
// (the child gets only the fields it needs) plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, testDSNVar+"=") && !strings.HasPrefix(kv, "QR_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
