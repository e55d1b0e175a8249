package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/exporter"
)

func TestExporterUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("targets:\n  - name: a-b\n    dsn: sqlserver://sa:pw@h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yml")
	if err := os.WriteFile(good, []byte("targets:\n  - name: a\n    dsn_env: SOME_DSN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOME_DSN", "sqlserver://sa:Secret-1@127.0.0.1:1")
	t.Setenv("QUERYREPLAY_DSN", "")
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"exporter"}, 2, []string{"give --config.file or --dsn"}},
		{[]string{"exporter", "--config.file", good, "--dsn", "sqlserver://h"}, 2, []string{"not both"}},
		{[]string{"exporter", "--config.file", bad, "--config.check"}, 2, []string{"targets[0].name", "targets[0].dsn: holds a password"}},
		{[]string{"exporter", "--config.file", filepath.Join(dir, "nope.yml")}, 2, []string{"no such file"}},
		{[]string{"exporter", "--log.level", "loud", "--dsn", "sqlserver://h"}, 2, []string{"loud"}},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errOut, w)
			}
		}
		if strings.Contains(errOut, "Secret-1") || strings.Contains(errOut, ":pw@") {
			t.Errorf("%v: a password reached stderr: %s", c.args, errOut)
		}
	}
	code, out, errOut := runCLI(t, "exporter", "--config.file", good, "--config.check")
	if code != 0 || !strings.Contains(out, "configuration OK: 1 target(s)") {
		t.Errorf("--config.check: exit %d, %s %s", code, out, errOut)
	}
	// $QUERYREPLAY_DSN (set for trace, say) does not get in the way of a
	// configuration file
	t.Setenv("QUERYREPLAY_DSN", "sqlserver://sa:Secret-1@127.0.0.1:1")
	if code, out, errOut := runCLI(t, "exporter", "--config.file", good, "--config.check"); code != 0 || !strings.Contains(out, "1 target(s)") {
		t.Errorf("--config.file with $QUERYREPLAY_DSN set: exit %d, %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "exporter", "--help")
	for _, flag := range []string{"--web.listen-address", "--web.config.file", "--config.file", "--dsn", "--log.level", "--log.format", ":10617"} {
		if code != 0 || !strings.Contains(out, flag) {
			t.Errorf("help lacks %s", flag)
		}
	}
}

// runningExporter is "queryreplay exporter" started by a test.
type runningExporter struct {
	addr   string
	stderr *testenv.SyncBuffer
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned, with code set
	code   int
}

// listening finds exporter-toolkit's "Listening on" line, logfmt or JSON.
var listening = regexp.MustCompile(`"?msg"?[=:]"Listening on",?\s*"?address"?[=:]"?([0-9.:]+)`)

func startExporterCommand(t *testing.T, args ...string) *runningExporter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningExporter{stderr: &testenv.SyncBuffer{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		r.code = run(ctx, append([]string{"exporter", "--web.listen-address", "127.0.0.1:0"}, args...),
			&env{stdout: io.Discard, stderr: r.stderr, stdin: strings.NewReader("")})
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
		}
	})
	listened := testenv.Poll(20*time.Second, func() bool {
		if m := listening.FindStringSubmatch(r.stderr.String()); m != nil {
			r.addr = m[1]
			return true
		}
		select {
		case <-r.done:
			t.Fatalf("exporter exited %d: %s", r.code, r.stderr.String())
		default:
		}
		return false
	})
	if !listened {
		t.Fatalf("the exporter did not listen: %s", r.stderr.String())
	}
	return r
}

func get(t *testing.T, c *http.Client, url string, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The command serves the landing page, /metrics, health and readiness,
// never logs the DSN, and drops its session on a clean shutdown.
func TestExporterCommandServesAndCleansUp(t *testing.T) {
	srv := startExporterStandin(t)
	r := startExporterCommand(t, "--dsn", srv.DSN, "--log.format", "json")
	c := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + r.addr
	waitReady(t, c, base)
	// without --target.name the target is named after the DSN's host and port
	name, err := exporter.DefaultTargetName(srv.DSN)
	if err != nil || !strings.HasPrefix(name, "127_0_0_1_") {
		t.Fatalf("default name %q: %v", name, err)
	}
	for path, want := range map[string]string{
		"/":                     "QueryReplay exporter",
		exporter.HealthyPath:    "Healthy",
		exporter.ReadyPath:      "Ready",
		exporter.MetricsPath:    `queryreplay_up{target="` + name + `"} 1`,
		exporter.TopQueriesPath: `"target": "` + name + `"`,
		exporter.TargetsPath:    `"session": "queryreplay_exporter_` + name + `_`,
	} {
		code, body := get(t, c, base+path, "", "")
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q in %.300s", path, code, want, body)
		}
	}
	if sessions(t, srv.DSN) != 1 {
		t.Fatal("the exporter's session is not on the server")
	}
	r.cancel() // what SIGTERM does through main's signal context
	select {
	case <-r.done:
		if r.code != 0 {
			t.Fatalf("exit %d after a clean shutdown: %s", r.code, r.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the exporter did not stop")
	}
	if n := sessions(t, srv.DSN); n != 0 {
		t.Errorf("%d exporter sessions left after a clean shutdown", n)
	}
	logs := r.stderr.String()
	if strings.Contains(logs, "QueryReplay-Standin1") || strings.Contains(logs, srv.DSN) {
		t.Errorf("the logs show the DSN or its password:\n%s", logs)
	}
	if !strings.Contains(logs, `"msg":"session dropped"`) {
		t.Errorf("no session dropped line in the JSON logs:\n%s", logs)
	}
}

func startExporterStandin(t *testing.T) *standin.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = srv.Close()
	})
	return srv
}

func waitReady(t *testing.T, c *http.Client, base string) {
	t.Helper()
	var code int
	if !testenv.Poll(20*time.Second, func() bool {
		code, _ = get(t, c, base+exporter.ReadyPath, "", "")
		return code == http.StatusOK
	}) {
		t.Fatalf("not ready after 20 s (last status %d)", code)
	}
}

// sessions counts the exporter sessions defined on the server.
func sessions(t *testing.T, dsn string) int {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sys.server_event_sessions WHERE name LIKE N'queryreplay[_]exporter[_]%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// --web.config.file turns on TLS and basic auth (exporter-toolkit).
func TestExporterWebConfigTLSAndBasicAuth(t *testing.T) {
	srv := startExporterStandin(t)
	dir := t.TempDir()
	certFile, keyFile, pool := selfSignedCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yml")
	cfg := "tls_server_config:\n  cert_file: " + certFile + "\n  key_file: " + keyFile + "\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n"
	if err := os.WriteFile(web, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startExporterCommand(t, "--dsn", srv.DSN, "--web.config.file", web)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + r.addr
	if code, _ := get(t, c, base+exporter.MetricsPath, "", ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if code, _ := get(t, c, base+exporter.MetricsPath, "prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if code, body := get(t, c, base+exporter.MetricsPath, "prometheus", "scrape-pw"); code != http.StatusOK || !strings.Contains(body, "queryreplay_up") {
		t.Errorf("with credentials: %d %.200s", code, body)
	}
	if _, err := http.Get("http://" + r.addr + exporter.MetricsPath); err == nil {
		// plain HTTP to a TLS listener gets a 400 response, not metrics
		code, body := get(t, &http.Client{Timeout: 5 * time.Second}, "http://"+r.addr+exporter.MetricsPath, "prometheus", "scrape-pw")
		if strings.Contains(body, "queryreplay_up") {
			t.Errorf("plain HTTP served metrics: %d", code)
		}
	}
}

func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
