package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

func TestStandinListScenarios(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"standin", "--list-scenarios"}, &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var s struct{ Name, SQL, Description string }
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if s.Name == "" || s.SQL == "" || s.Description == "" {
			t.Fatalf("incomplete scenario: %+v", s)
		}
		names[s.Name] = true
	}
	for _, want := range []string{"clustered_index_scan", "seek_key_lookup", "hash_join", "merge_join", "sort_spill", "hash_aggregate", "parallel_aggregate", "update_orders", "insert_order", "delete_orderlines"} {
		if !names[want] {
			t.Errorf("scenario %s missing", want)
		}
	}
}

// startStandinCommand runs "queryreplay standin" with args and returns the
// lines it printed (the DSNs) once it printed want of them.
func startStandinCommand(t *testing.T, want int, args ...string) ([]string, context.CancelFunc, chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &testenv.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"standin", "--listen", "127.0.0.1:0"}, args...), &env{stdout: out, stderr: io.Discard, stdin: strings.NewReader("")})
	}()
	var lines []string
	testenv.Poll(10*time.Second, func() bool {
		if s := out.String(); strings.Count(s, "\n") >= want {
			lines = strings.Split(strings.TrimSpace(s), "\n")
		}
		return len(lines) >= want
	})
	if len(lines) < want {
		cancel()
		t.Fatalf("standin printed %q, want %d lines", out.String(), want)
	}
	return lines, cancel, done
}

func TestStandinListen(t *testing.T) {
	lines, cancel, done := startStandinCommand(t, 2)
	dsn := lines[0]
	if !strings.HasPrefix(dsn, "sqlserver://sa:") || !strings.Contains(dsn, "database=QueryReplayDemo") || !strings.Contains(dsn, "encrypt=disable") {
		t.Fatalf("DSN line: %q", dsn)
	}
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM dbo.Customers").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("query through the printed DSN: %d %v", n, err)
	}
	db.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("standin did not stop on cancel")
	}
}

// TestStandinPersonaAndTLS: --persona picks the product, --encryption
// required forces TLS, --tls-ca-out writes the CA the second DSN pins.
func TestStandinPersonaAndTLS(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	lines, cancel, done := startStandinCommand(t, 2, "--persona", "sql2022", "--encryption", "required", "--tls-ca-out", ca)
	defer func() { cancel(); <-done }()
	if pem, err := os.ReadFile(ca); err != nil || !bytes.Contains(pem, []byte("BEGIN CERTIFICATE")) {
		t.Fatalf("CA file: %v %q", err, pem)
	}
	if !strings.Contains(lines[1], "encrypt=true") || !strings.Contains(lines[1], "certificate=") {
		t.Fatalf("TLS DSN line: %q", lines[1])
	}
	db, err := sql.Open("sqlserver", lines[1])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version string
	var edition int
	if err := db.QueryRow("SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), CAST(SERVERPROPERTY('EngineEdition') AS int)").Scan(&version, &edition); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "16.") || edition != 3 {
		t.Fatalf("persona sql2022 answered %s, edition %d", version, edition)
	}
	// Force Encryption: the unencrypted DSN is told ENCRYPT_REQ and fails the certificate check
	plain, _ := sql.Open("sqlserver", lines[0]+"&disableretry=true")
	defer plain.Close()
	if err := plain.Ping(); err == nil {
		t.Fatal("encrypt=disable connected to a server that requires encryption")
	}
}

func TestStandinBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"standin", "--password", ""}, &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}); code != 2 {
		t.Fatalf("empty password: exit %d", code)
	}
	for _, args := range [][]string{{"--persona", "sql2000"}, {"--tls-cert", "x.pem"}, {"--encryption", "off", "--tls-ca-out", "ca.pem"}, {"--encryption", "sometimes"}} {
		errOut.Reset()
		code := run(context.Background(), append([]string{"standin", "--listen", "127.0.0.1:0"}, args...), &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")})
		if code == 0 || errOut.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming the problem", args, code, errOut.String())
		}
	}
	if code := run(context.Background(), []string{"standin", "--listen", "not-an-address"}, &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}); code != 1 {
		t.Fatalf("bad address: exit %d (%s)", code, errOut.String())
	}
}
