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
	code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", "SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Customers AS b WHERE b.CustomerID <= 1200",
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

// The tracer sends an update after each read of the events (about four a
// second): the view draws at most one a second while the batch runs, keeps
// counting the waits of those it did not draw, and always draws the last.
func TestLiveViewDrawsAboutOnceASecond(t *testing.T) {
	var buf bytes.Buffer
	v := newLiveView(&buf)
	at := time.Unix(1000, 0)
	v.now = func() time.Time { return at }
	wait := tracer.LiveEvent{Lane: "wait", Name: "wait_info", Detail: "PAGEIOLATCH_SH", DurationUs: 1000}
	draws := 0
	for i := 1; i <= 9; i++ { // 2.25 s of updates, a quarter second apart
		before := buf.Len()
		v.update(tracer.LiveUpdate{Seq: i, Running: true, Elapsed: time.Duration(i) * 250 * time.Millisecond, Events: []tracer.LiveEvent{wait}})
		if buf.Len() > before {
			draws++
		}
		at = at.Add(250 * time.Millisecond)
	}
	if draws != 3 { // at 0 s, 1 s and 2 s
		t.Fatalf("%d draws in 2.25 s of updates, want 3:\n%s", draws, buf.String())
	}
	buf.Reset()
	v.update(tracer.LiveUpdate{Seq: 10, Running: false, Elapsed: 2300 * time.Millisecond, Events: []tracer.LiveEvent{wait}})
	if out := buf.String(); !strings.Contains(out, "batch ended") || !strings.Contains(out, "PAGEIOLATCH_SH ×10 (10.0 ms)") {
		t.Fatalf("the last update, 50 ms after a draw, was not drawn with every wait counted:\n%s", out)
	}
}
