package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// TestTraceCommandLive: --live prints the operators' progress while the
// batch runs (plain lines: the output is not a terminal), then the
// replay.
func TestTraceCommandLive(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{PaceToWallClock: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cancel() })
	code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", "SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Customers AS b WHERE b.CustomerID <= 600",
		"--live", "-q", "--no-locks", "--no-memory", "--no-splits", "--no-log", "--no-file-io")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	running := strings.Count(out, ", running, ")
	ended := strings.Index(out, ", batch ended, ")
	replay := strings.Index(out, "Rows: 1 in 1 result set(s)")
	if running < 2 || ended < 0 || replay < ended {
		t.Fatalf("want at least two running updates, then the end, then the replay; got %d running, end at %d, replay at %d:\n%s", running, ended, replay, out)
	}
	if !strings.Contains(out, "rows / estimate") || !strings.Contains(out, "Nested Loops") {
		t.Fatalf("no operator table:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("terminal escapes in plain output")
	}
}

// On a terminal each update redraws the previous one in place.
func TestLiveViewRedraws(t *testing.T) {
	var buf bytes.Buffer
	v := newLiveView(&buf)
	v.terminal = true
	u := tracer.LiveUpdate{Seq: 1, Running: true, Elapsed: time.Second, Operators: []tracer.OperatorProgress{
		{NodeID: 0, PhysicalOp: "Stream Aggregate", State: "running", Rows: 0, EstimateRows: 1, Threads: 1},
		{NodeID: 1, PhysicalOp: "Clustered Index Scan", Object: "dbo.Orders.PK_Orders", State: "running", Rows: 500, EstimateRows: 10000, LogicalReads: 12, Threads: 1},
	}, Events: []tracer.LiveEvent{{Lane: "wait", Name: "wait_info", Detail: "PAGEIOLATCH_SH", DurationUs: 2000}}}
	v.update(u)
	first := buf.String()
	if strings.Contains(first, "\x1b[") || !strings.Contains(first, "500 / 10000") || !strings.Contains(first, "PAGEIOLATCH_SH ×1 (2.0 ms)") {
		t.Fatalf("first draw:\n%q", first)
	}
	lines := strings.Count(first, "\n")
	buf.Reset()
	u.Seq, u.Running = 2, false
	v.update(u)
	if want := fmt.Sprintf("\x1b[%dA\x1b[J", lines); !strings.HasPrefix(buf.String(), want) || !strings.Contains(buf.String(), "batch ended") {
		t.Fatalf("redraw does not start with %q:\n%q", want, buf.String())
	}
}
