package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/pluginhost"
	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// TestBinaryTraceTruncationOverGRPC: a trace capped by options.maxEvents,
// run through the real binary over go-plugin gRPC, arrives with the
// truncation in the trace frame (field and meta.custom) and its warning
// notice (docs/frames.md §3.1), after the frames' trip through Arrow.
func TestBinaryTraceTruncationOverGRPC(t *testing.T) {
	h, pctx := startHostOnStandin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const limit = 30
	q := `{"queryType":"trace","run":"` + runRequest() + `","sql":"SELECT c.Name, o.OrderID FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID",` +
		fmt.Sprintf(`"options":{"maxEvents":%d}}`, limit)
	resp, err := h.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pctx, Queries: []backend.DataQuery{
		{RefID: "T", QueryType: "trace", MaxDataPoints: 1000, JSON: []byte(q)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tr := resp.Responses["T"]
	if tr.Error != nil {
		t.Fatalf("trace over gRPC: %v", tr.Error)
	}
	tf := findFrame(tr.Frames, "trace")
	if tf == nil || tf.Rows() != 1 {
		t.Fatalf("no one-row trace frame among %d frames", len(tr.Frames))
	}
	truncated, _ := tf.FieldByName("truncated")
	events, _ := tf.FieldByName("events")
	if truncated == nil || events == nil {
		t.Fatal("the trace frame lacks truncated or events")
	}
	if v, _ := truncated.At(0).(bool); !v {
		t.Errorf("truncated field = %v at a cap of %d events", truncated.At(0), limit)
	}
	if v, _ := events.At(0).(int64); v != limit {
		t.Errorf("events = %v, want the cap %d", events.At(0), limit)
	}
	var meta map[string]any
	b, _ := json.Marshal(tf.Meta.Custom)
	_ = json.Unmarshal(b, &meta)
	if meta["truncated"] != true {
		t.Errorf("meta.custom.truncated = %v", meta["truncated"])
	}
	want := fmt.Sprintf("truncated at %d events (maxEvents)", limit)
	found := false
	for _, n := range tf.Meta.Notices {
		if strings.Contains(n.Text, want) && n.Severity == data.NoticeSeverityWarning {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning notice saying %q among %v", want, tf.Meta.Notices)
	}
}

// startStandin serves the stand-in on loopback until the test ends.
func startStandin(t *testing.T) (host, port string) {
	t.Helper()
	sctx, stop := context.WithCancel(context.Background())
	srv, err := standin.Start(sctx, "127.0.0.1:0", standin.Options{XELEncoder: xe.EncodeXMLAsXEL})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); stop() })
	host, port, _ = net.SplitHostPort(srv.Addr)
	return host, port
}

// startHostOnStandin starts a stand-in and the plugin binary, and returns
// the host with a plugin context whose settings reach the stand-in (a
// trace store of the test's own).
func startHostOnStandin(t *testing.T) (*pluginhost.Host, backend.PluginContext) {
	t.Helper()
	host, port := startStandin(t)
	h := startHost(t)
	pctx := pluginContext(fmt.Sprintf(`{"host":%q,"port":%s,"user":"sa","database":"QueryReplayDemo","encrypt":"disable","traceStore":{"directory":%q}}`,
		host, port, t.TempDir()), map[string]string{"password": "QueryReplay-Standin1"})
	return h, pctx
}
