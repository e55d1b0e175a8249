package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// holderText is how the findings name the lock_blocking scenario's blocker.
const holderText = "Held by session 999 (login demo_blocker, host QRSTANDIN, program QueryReplay demo blocker; sleeping: idle in an open transaction)"

// queryreplay trace on a batch blocked by another session (set up with
// standin.PrepareScenario before each trace) prints the blocking finding with the
// session that held the lock; the bundle keeps it, so queryreplay findings
// (text and --json) names it too. With --blocker-interval 0 nothing is
// sampled and the finding says the holder is not in the trace.
func TestTraceNamesBlocker(t *testing.T) {
	srv := startTraceStandin(t)
	sql := scenario(t, "lock_blocking").SQL
	path := filepath.Join(t.TempDir(), "blocked.json.gz")
	release := prepared(t, srv, "lock_blocking")
	code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", sql, "-q", "-o", path)
	release()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Blocked for ") || !strings.Contains(flat(out), holderText) {
		t.Errorf("trace output does not name the holder:\n%s", out)
	}
	b, err := bundle.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Result.Blocking) != 1 || b.Result.Blocking[0].SessionID != 999 || b.Result.Blocking[0].Statement != "" {
		t.Fatalf("bundle blocking %+v", b.Result.Blocking)
	}

	code, out, errs = runCLI(t, "findings", path)
	if code != 0 || !strings.Contains(flat(out), holderText) {
		t.Errorf("findings: exit %d %s\n%s", code, errs, out)
	}
	code, out, _ = runCLI(t, "findings", "--json", path)
	var rep struct {
		Findings []struct {
			Rule    string `json:"rule"`
			Holders []struct {
				SessionID int    `json:"sessionId"`
				Login     string `json:"login"`
				Program   string `json:"program"`
			} `json:"holders"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("--json: exit %d %v", code, err)
	}
	named := false
	for _, f := range rep.Findings {
		if f.Rule == "blocking" && len(f.Holders) == 1 && f.Holders[0].SessionID == 999 && f.Holders[0].Login == "demo_blocker" {
			named = true
		}
	}
	if !named {
		t.Errorf("--json blocking finding has no holder: %s", out)
	}

	// the statement only when asked for
	path = filepath.Join(t.TempDir(), "with-sql.json.gz")
	release = prepared(t, srv, "lock_blocking")
	code, out, errs = runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", sql, "-q", "-o", path, "--blocker-statements")
	release()
	if code != 0 {
		t.Fatalf("--blocker-statements: exit %d\n%s\n%s", code, out, errs)
	} else if !strings.Contains(flat(out), "its last batch: UPDATE dbo.Orders SET Status = N'Hold' WHERE OrderID = 500") {
		t.Errorf("--blocker-statements: output lacks the blocker's batch:\n%s", out)
	}

	// sampling off
	release = prepared(t, srv, "lock_blocking")
	code, out, errs = runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", sql, "-q", "--blocker-interval", "0")
	release()
	if code != 0 {
		t.Fatalf("--blocker-interval 0: exit %d\n%s\n%s", code, out, errs)
	} else if strings.Contains(flat(out), "Held by session") || !strings.Contains(flat(out), "The holder is not in this trace") {
		t.Errorf("--blocker-interval 0 still names a holder:\n%s", out)
	}
}

// flat joins the text's words with single spaces: the findings text wraps.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
