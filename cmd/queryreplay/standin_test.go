package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
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

func TestStandinListen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &testenv.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"standin", "--listen", "127.0.0.1:0"}, &env{stdout: out, stderr: io.Discard, stdin: strings.NewReader("")})
	}()
	var dsn string
	for i := 0; i < 200 && dsn == ""; i++ {
		if s := out.String(); strings.HasSuffix(s, "\n") {
			dsn = strings.TrimSpace(s)
		}
		time.Sleep(10 * time.Millisecond)
	}
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

func TestStandinBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"standin", "--password", ""}, &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}); code != 2 {
		t.Fatalf("empty password: exit %d", code)
	}
	if code := run(context.Background(), []string{"standin", "--listen", "not-an-address"}, &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}); code != 1 {
		t.Fatalf("bad address: exit %d (%s)", code, errOut.String())
	}
}
