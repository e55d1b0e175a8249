package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/pluginhost"
)

// pluginBinary is the executable under test: GPX_BINARY when set (CI points
// it at dist/datasource/gpx_queryreplay_linux_amd64), else a fresh build of
// this package into a temporary directory.
var pluginBinary string

func TestMain(m *testing.M) {
	code := func() int {
		if p := os.Getenv("GPX_BINARY"); p != "" {
			pluginBinary = p
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "gpx")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		pluginBinary = filepath.Join(dir, "gpx_queryreplay")
		build := exec.Command("go", "build", "-o", pluginBinary, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			os.Stderr.WriteString("build gpx_queryreplay: " + err.Error() + "\n")
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

func startHost(t testing.TB) *pluginhost.Host {
	t.Helper()
	var logs bytes.Buffer
	h, err := pluginhost.Start(pluginBinary, pluginhost.Options{
		Env: []string{"GF_VERSION=12.4.0", "GF_PLUGIN_VERSION=0.1.0"},
		Log: &logs,
	})
	if err != nil {
		t.Fatalf("launch %s over go-plugin gRPC: %v", pluginBinary, err)
	}
	t.Cleanup(func() {
		h.Close()
		if t.Failed() {
			t.Logf("plugin log:\n%s", logs.String())
		}
	})
	return h
}

// instanceSeq gives every settings variant its own datasource instance:
// Grafana caches instances per datasource and its Updated time.
var instanceSeq int64

// pluginContext is a request of an org Editor (the default minTraceRole)
// on a new instance with these settings.
func pluginContext(jsonData string, secure map[string]string) backend.PluginContext {
	instanceSeq++
	return backend.PluginContext{
		OrgID:    1,
		PluginID: "queryreplay-sqlserver-datasource",
		User:     &backend.User{Login: "editor", Name: "Editor", Role: "Editor"},
		DataSourceInstanceSettings: &backend.DataSourceInstanceSettings{
			ID: instanceSeq, UID: fmt.Sprintf("qr%d", instanceSeq), Name: "QueryReplay",
			JSONData:                []byte(jsonData),
			DecryptedSecureJSONData: secure,
			Updated:                 time.Unix(1700000000+instanceSeq, 0),
		},
	}
}

func TestBinaryCheckHealthOverGRPC(t *testing.T) {
	h := startHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("missing settings", func(t *testing.T) {
		res, err := h.CheckHealth(ctx, pluginContext(`{}`, nil))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != backend.HealthStatusError {
			t.Fatalf("status = %v, want error", res.Status)
		}
		for _, want := range []string{"host is missing", "user is missing", "password is missing"} {
			if !strings.Contains(res.Message, want) {
				t.Errorf("message %q does not say %q", res.Message, want)
			}
		}
	})
	t.Run("unreachable server", func(t *testing.T) {
		// Port 1 on loopback refuses at once; the check must say so, not hang.
		res, err := h.CheckHealth(ctx, pluginContext(
			`{"host":"127.0.0.1","port":1,"user":"sa","encrypt":"disable","connectTimeoutSeconds":5}`,
			map[string]string{"password": "not-logged"}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != backend.HealthStatusError || !strings.Contains(res.Message, "cannot connect to SQL Server at sa@127.0.0.1:1") {
			t.Fatalf("got %v %q", res.Status, res.Message)
		}
		if strings.Contains(res.Message, "not-logged") {
			t.Fatalf("health message leaks the password: %q", res.Message)
		}
	})
}

func TestBinaryQueryDataOverGRPC(t *testing.T) {
	h := startHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx := pluginContext(`{"host":"127.0.0.1","user":"sa"}`, map[string]string{"password": "x"})
	now := time.Now()
	req := &backend.QueryDataRequest{PluginContext: pctx, Queries: []backend.DataQuery{
		{RefID: "A", JSON: []byte(`{"sql":"SELECT 1","run":"` + runRequest() + `"}`), TimeRange: backend.TimeRange{From: now.Add(-time.Hour), To: now}},
		{RefID: "B", JSON: []byte(`{"run":"` + runRequest() + `"}`), TimeRange: backend.TimeRange{From: now.Add(-time.Hour), To: now}},
	}}
	resp, err := h.QueryData(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"A", "B"} {
		r, ok := resp.Responses[ref]
		if !ok {
			t.Fatalf("no response for %s", ref)
		}
		// the saved settings are unusable (no port to reach, no database): every query says why
		if r.Error == nil || !strings.Contains(r.Error.Error(), "query "+ref) {
			t.Errorf("%s: error = %v, want a per-query error", ref, r.Error)
		}
	}
}

// TestBinaryTraceAndViewOverGRPC runs a trace end to end through the real
// binary against the stand-in, then re-slices it with a view and lists it
// through CallResource.
func TestBinaryTraceAndViewOverGRPC(t *testing.T) {
	h, pctx := startHostOnStandin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const sql = "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'"
	resp, err := h.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pctx, Queries: []backend.DataQuery{
		{RefID: "T", QueryType: "trace", MaxDataPoints: 1000, JSON: []byte(`{"queryType":"trace","run":"` + runRequest() + `","sql":"` + sql + `"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tr := resp.Responses["T"]
	if tr.Error != nil {
		t.Fatalf("trace over gRPC: %v", tr.Error)
	}
	if len(tr.Frames) < 10 || tr.Frames[0].Name != "trace" {
		t.Fatalf("trace returned %d frames", len(tr.Frames))
	}
	var meta map[string]any
	b, _ := json.Marshal(tr.Frames[0].Meta.Custom)
	_ = json.Unmarshal(b, &meta)
	id, _ := meta["traceId"].(string)
	if len(id) != 32 || meta["persona"] != "box" {
		t.Fatalf("trace meta = %v", meta)
	}
	lock := findFrame(tr.Frames, "lane_lock")
	if lock == nil || lock.Rows() == 0 {
		t.Fatal("no locks came back over gRPC")
	}

	resp, err = h.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pctx, Queries: []backend.DataQuery{
		{RefID: "V", QueryType: "view", MaxDataPoints: 3, JSON: []byte(`{"queryType":"view","traceId":"` + id + `"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	v := resp.Responses["V"]
	if v.Error != nil {
		t.Fatalf("view over gRPC: %v", v.Error)
	}
	vl := findFrame(v.Frames, "lane_lock")
	if vl == nil || vl.Rows() > 3 || vl.Rows() == 0 {
		t.Fatalf("view lock lane: %v", vl)
	}
	b, _ = json.Marshal(vl.Meta.Custom)
	if !strings.Contains(string(b), `"binned":true`) {
		t.Errorf("view lane meta = %s", b)
	}

	res, err := h.CallResource(ctx, &backend.CallResourceRequest{PluginContext: pctx, Method: "GET", Path: "traces", URL: "traces"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || !strings.Contains(string(res.Body), id) {
		t.Fatalf("traces resource: %d %s", res.Status, res.Body)
	}
	health, err := h.CheckHealth(ctx, pctx)
	if err != nil || health.Status != backend.HealthStatusOk {
		t.Fatalf("health: %v %+v", err, health)
	}
}

var runSeq atomic.Int64

// runRequest is a fresh run request as the query editor's Execute makes
// one (unix milliseconds, a dash, hex digits; docs/frames.md §1).
func runRequest() string {
	return fmt.Sprintf("%d-%032x", time.Now().UnixMilli(), 0xc0ffee0000+runSeq.Add(1))
}

func findFrame(fs data.Frames, name string) *data.Frame {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func TestBinaryMissingFailsClearly(t *testing.T) {
	_, err := pluginhost.Start(filepath.Join(t.TempDir(), "absent"), pluginhost.Options{})
	if err == nil || !strings.Contains(err.Error(), "plugin binary") {
		t.Fatalf("err = %v, want a clear missing-binary error", err)
	}
}

func TestBinaryBrokenHandshakeFails(t *testing.T) {
	// A program that prints a handshake line of the wrong protocol version
	// must be rejected by the host, as Grafana would.
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake.sh")
	script := "#!/bin/sh\necho '1|99|tcp|127.0.0.1:1|grpc'\nsleep 5\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := pluginhost.Start(fake, pluginhost.Options{StartTimeout: 3 * time.Second})
	if err == nil {
		t.Fatal("a wrong handshake was accepted")
	}
	t.Logf("rejected as expected: %v", err)
}
