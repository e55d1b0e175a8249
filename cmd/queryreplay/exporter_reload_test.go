package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/exporter"
)

// waitLog waits for a log line, failing when the exporter exits first.
func waitLog(t *testing.T, r *runningExporter, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(r.stderr.String(), want) {
		select {
		case <-r.done:
			t.Fatalf("exporter exited %d before logging %q: %s", r.code, want, r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the logs: %s", want, r.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SIGHUP and POST /-/reload re-read the configuration: the exporter keeps
// running with its session, a refused configuration leaves the running
// one, and the metrics path is the one given.
func TestExporterReloadsOnSIGHUPAndPost(t *testing.T) {
	srv := startExporterStandin(t)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "exporter.yml")
	write := func(text string) {
		if err := os.WriteFile(cfgFile, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("RELOAD_DSN", srv.DSN)
	write("targets:\n  - name: a\n    dsn_env: RELOAD_DSN\n")
	r := startExporterCommand(t, "--config.file", cfgFile, "--web.telemetry-path", "/qr/metrics")
	c := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + r.addr
	waitReady(t, c, base)
	if code, body := get(t, c, base+"/qr/metrics", "", ""); code != http.StatusOK || !strings.Contains(body, `queryreplay_up{target="a"} 1`) {
		t.Fatalf("/qr/metrics: %d %.200s", code, body)
	}
	write("global:\n  poll_interval: 2s\ntargets:\n  - name: a\n    dsn_env: RELOAD_DSN\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, r, "configuration reloaded")
	if n := sessions(t, srv.DSN); n != 1 {
		t.Fatalf("%d exporter sessions after SIGHUP, want 1", n)
	}
	post := func() int {
		resp, err := c.Post(base+exporter.ReloadPath, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(); code != http.StatusOK {
		t.Errorf("POST /-/reload: %d", code)
	}
	write("targets:\n  - name: a-b\n")
	if code := post(); code != http.StatusInternalServerError {
		t.Errorf("POST /-/reload of a bad configuration: %d, want 500", code)
	}
	if code, body := get(t, c, base+"/qr/metrics", "", ""); code != http.StatusOK || !strings.Contains(body, `queryreplay_up{target="a"}`) {
		t.Errorf("after a refused reload: %d %.200s", code, body)
	}
	r.cancel()
	select {
	case <-r.done:
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the exporter did not stop")
	}
	if n := sessions(t, srv.DSN); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

// --config.check runs the checks a start runs: a probe that writes fails
// it, as it would fail the start.
func TestExporterConfigCheckRefusesAWritingProbe(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "probe.yml")
	text := "targets:\n  - name: a\n    dsn_env: SOME_DSN\nprobes:\n  - name: p\n    target: a\n    sql: DELETE FROM dbo.Orders WHERE OrderID = 0\n"
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOME_DSN", "sqlserver://sa@127.0.0.1:1")
	code, _, errOut := runCLI(t, "exporter", "--config.file", f, "--config.check")
	if code != 2 || !strings.Contains(errOut, "probes[0].sql") {
		t.Errorf("--config.check with a DELETE probe: exit %d, %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "exporter", "--dsn", "sqlserver://sa@h:99999", "--config.check")
	if code != 2 || !strings.Contains(errOut, "--dsn") {
		t.Errorf("--config.check with a DSN that does not parse: exit %d, %s", code, errOut)
	}
}

// --web.systemd-socket serves only the sockets systemd passes: with none it
// is a start error, never a TCP listener.
func TestExporterSystemdSocketWithoutSockets(t *testing.T) {
	srv := startExporterStandin(t)
	t.Setenv("LISTEN_FDS", "")
	t.Setenv("LISTEN_PID", "")
	stderr := &testenv.SyncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, []string{"exporter", "--dsn", srv.DSN, "--web.systemd-socket", "--web.listen-address", "127.0.0.1:0"},
		&env{stdout: &strings.Builder{}, stderr: stderr, stdin: strings.NewReader("")})
	if code == 0 || strings.Contains(stderr.String(), "Listening on") && strings.Contains(stderr.String(), "127.0.0.1") {
		t.Errorf("--web.systemd-socket without sockets: exit %d, %s", code, stderr.String())
	}
	if n := sessions(t, srv.DSN); n != 0 {
		t.Errorf("%d sessions left after the failed start", n)
	}
}
