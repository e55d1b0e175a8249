package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"

	"github.com/queryreplay/queryreplay/internal/pluginhost"
	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testsql"
	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// liveSQL runs about 5 s on a stand-in paced to the wall clock
// (standin.Options.PaceToWallClock), long enough for several live frames
// on a quiet machine as on a loaded one.
const liveSQL = "SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Orders AS b WHERE b.OrderID <= 3000"

// onPacedStandin is onStandin with a stand-in whose queries take the wall
// time their events say, and the test's own view of it.
func onPacedStandin(t testing.TB) (*pluginhost.Host, *sql.DB, backend.PluginContext) {
	t.Helper()
	return onPacedStandinWith(t, "")
}

// onPacedStandinWith is onPacedStandin with more datasource settings
// (JSON members, each with a leading comma).
func onPacedStandinWith(t testing.TB, settings string) (*pluginhost.Host, *sql.DB, backend.PluginContext) {
	t.Helper()
	sctx, stop := context.WithCancel(context.Background())
	srv, err := standin.Start(sctx, "127.0.0.1:0", standin.Options{XELEncoder: xe.EncodeXMLAsXEL, PaceToWallClock: true})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	db, err := sql.Open("sqlserver", srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); srv.Close(); stop() })
	host, port, _ := net.SplitHostPort(srv.Addr)
	pctx := pluginContext(fmt.Sprintf(`{"host":%q,"port":%s,"user":"sa","database":"QueryReplayDemo","encrypt":"disable","traceStore":{"directory":%q}%s}`,
		host, port, t.TempDir(), settings), map[string]string{"password": "QueryReplay-Standin1"})
	return startHost(t), db, pctx
}

var liveRuns int64

// startLive sends a live trace query and returns its channel path (the
// part after ds/<uid>/, what Grafana hands the plugin).
func startLive(t testing.TB, h *pluginhost.Host, pctx backend.PluginContext, sql string) string {
	t.Helper()
	return startLiveWith(t, h, pctx, sql, "{}")
}

// startLiveWith is startLive with the query's options object.
func startLiveWith(t testing.TB, h *pluginhost.Host, pctx backend.PluginContext, sql, options string) string {
	t.Helper()
	liveRuns++
	run := fmt.Sprintf("%d-%016x", time.Now().UnixMilli(), 0x11e0000+liveRuns)
	r := queryOnce(t, h, pctx, "trace", fmt.Sprintf(`{"queryType":"trace","sql":%q,"live":true,"run":%q,"options":%s}`, sql, run, options))
	if r.Error != nil || len(r.Frames) != 1 || r.Frames[0].Meta == nil {
		t.Fatalf("live query: %v %v", r.Error, r.Frames)
	}
	prefix := "ds/" + pctx.DataSourceInstanceSettings.UID + "/"
	ch := r.Frames[0].Meta.Channel
	if !strings.HasPrefix(ch, prefix+"trace/") {
		t.Fatalf("channel %q, want %strace/<id>", ch, prefix)
	}
	return strings.TrimPrefix(ch, prefix)
}

func liveStatus(t testing.TB, packet []byte) frames.LiveStatus {
	t.Helper()
	var f data.Frame
	if err := json.Unmarshal(packet, &f); err != nil {
		t.Fatalf("a stream packet is not a frame: %v", err)
	}
	var c struct {
		Live frames.LiveStatus `json:"live"`
	}
	b, _ := json.Marshal(f.Meta.Custom)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Live
}

// A live trace through the real plugin binary over gRPC, as Grafana Live
// drives it: SubscribeStream with the user, RunStream sends live frames
// while the query runs and ends with the stored trace.
func TestBinaryLiveStreamOverGRPC(t *testing.T) {
	h, db, pctx := onPacedStandin(t)
	path := startLive(t, h, pctx, liveSQL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		pctx backend.PluginContext
		want pluginv2.SubscribeStreamResponse_Status
	}{
		{pctx, pluginv2.SubscribeStreamResponse_OK},
		{as(pctx, "someone", "Editor"), pluginv2.SubscribeStreamResponse_PERMISSION_DENIED},
		{as(pctx, "editor", "Viewer"), pluginv2.SubscribeStreamResponse_PERMISSION_DENIED},
	} {
		if got, err := h.SubscribeStream(ctx, c.pctx, path); err != nil || got != c.want {
			t.Errorf("subscribe as %+v: %v %v, want %v", c.pctx.User, got, err, c.want)
		}
	}
	var running []frames.LiveStatus
	var last frames.LiveStatus
	err := h.RunStream(ctx, pctx, path, func(p []byte) {
		st := liveStatus(t, p)
		if st.Running && !st.Done && st.Seq > 0 {
			running = append(running, st)
		}
		last = st
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(running) < 2 {
		t.Fatalf("%d live frames while the query ran, want at least 2", len(running))
	}
	if !last.Done || len(last.TraceID) != 32 || last.Error != "" {
		t.Fatalf("the stream ended with %+v", last)
	}
	if r := queryOnce(t, h, pctx, "bundle", fmt.Sprintf(`{"queryType":"bundle","traceId":%q}`, last.TraceID)); r.Error != nil {
		t.Fatalf("the finished trace: %v", r.Error)
	}
	if s := testsql.EventSessions(t, db, tracer.SessionPrefix); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// Cancelling the stream mid-trace (Grafana cancels RunStream when the last
// subscriber leaves) stops the query and leaves no event session.
func TestBinaryLiveStreamCancelLeavesNoSession(t *testing.T) {
	h, db, pctx := onPacedStandin(t)
	path := startLive(t, h, pctx, liveSQL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sctx, leave := context.WithCancel(ctx)
	var during []string
	err := h.RunStream(sctx, pctx, path, func(p []byte) {
		if st := liveStatus(t, p); st.Running && st.Seq > 0 && during == nil {
			during = testsql.EventSessions(t, db, tracer.SessionPrefix)
			leave()
		}
	})
	if err == nil {
		t.Fatal("the stream ended by itself: the trace finished before it was cancelled")
	}
	if len(during) == 0 {
		t.Fatal("no event session while the trace ran: the cancel was not mid-trace")
	}
	// the plugin drops the session after the client has gone: wait for
	// it, bounded
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for s := testsql.EventSessions(t, db, tracer.SessionPrefix); len(s) > 0; s = testsql.EventSessions(t, db, tracer.SessionPrefix) {
		if time.Now().After(deadline) {
			t.Fatalf("sessions left 30 s after the cancel: %v", s)
		}
		<-tick.C
	}
}
