package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/internal/viewertest"
)

// bigBundle writes the stand-in's synthetic trace of 40,000 pages (five
// events a page: 200,000 events) as a gzip bundle, the way `queryreplay
// trace -o x.json.gz` writes one, and returns the gzip bytes, the plain
// JSON and the event count.
func bigBundle(t *testing.T) (gz, plain []byte, events int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.json.gz")
	n, err := viewertest.GenerateBundle(path, 40_000, 3)
	if err != nil {
		t.Fatal(err)
	}
	gz, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err = io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// the plain JSON must be over gRPC's default 16 MiB for this test to
	// say anything about the receive limit
	if len(plain) <= 16<<20 || n < 200_000 {
		t.Fatalf("generated bundle: %d events, %d bytes of JSON; want ≥ 200,000 and > 16 MiB", n, len(plain))
	}
	return gz, plain, n
}

func uploadOverGRPC(ctx context.Context, t *testing.T, h interface {
	CallResource(context.Context, *backend.CallResourceRequest) (*backend.CallResourceResponse, error)
}, pctx backend.PluginContext, body []byte, contentType string) *backend.CallResourceResponse {
	t.Helper()
	res, err := h.CallResource(ctx, &backend.CallResourceRequest{PluginContext: pctx, Method: "POST", Path: "traces", URL: "traces",
		Headers: map[string][]string{"Content-Type": {contentType}}, Body: body})
	if err != nil {
		t.Fatalf("upload of %d bytes (%s) over gRPC: %v", len(body), contentType, err)
	}
	return res
}

// TestBinaryUploadsBigBundlesOverGRPC: a 200,000-event bundle uploads
// through the real binary over go-plugin gRPC both as the gzip file the CLI
// writes and as plain JSON (over the SDK's default 16 MiB receive limit),
// and its frames are then served from the store.
func TestBinaryUploadsBigBundlesOverGRPC(t *testing.T) {
	gz, plain, events := bigBundle(t)
	h := startHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pctx := pluginContext(fmt.Sprintf(`{"host":"127.0.0.1","user":"sa","traceStore":{"directory":%q}}`, t.TempDir()),
		map[string]string{"password": "x"})
	pctx.User = &backend.User{Login: "admin", Role: "Admin"}
	for _, c := range []struct {
		name, contentType string
		body              []byte
	}{{"gzip as written", "application/gzip", gz}, {"plain JSON", "application/json", plain}} {
		t.Run(c.name, func(t *testing.T) {
			res := uploadOverGRPC(ctx, t, h, pctx, c.body, c.contentType)
			if res.Status != 201 {
				t.Fatalf("upload: status %d: %s", res.Status, res.Body)
			}
			var up struct {
				TraceID string `json:"traceId"`
			}
			if err := json.Unmarshal(res.Body, &up); err != nil || len(up.TraceID) != 32 {
				t.Fatalf("upload answer %s: %v", res.Body, err)
			}
			resp, err := h.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pctx, Queries: []backend.DataQuery{
				{RefID: "B", QueryType: "bundle", MaxDataPoints: 1000, JSON: []byte(`{"queryType":"bundle","traceId":"` + up.TraceID + `"}`)},
			}})
			if err != nil {
				t.Fatal(err)
			}
			r := resp.Responses["B"]
			if r.Error != nil {
				t.Fatalf("frames of the uploaded trace: %v", r.Error)
			}
			tf := findFrame(r.Frames, "trace")
			if tf == nil {
				t.Fatalf("no trace frame among %d frames", len(r.Frames))
			}
			ev, _ := tf.FieldByName("events")
			if ev == nil || ev.At(0) != int64(events) {
				t.Fatalf("trace frame events = %v, want %d", ev.At(0), events)
			}
			read := findFrame(r.Frames, "lane_read")
			if read == nil || read.Rows() == 0 || read.Rows() > 1000 {
				t.Fatalf("read lane of the uploaded trace: %v", read)
			}
		})
	}
}

// TestBinaryUploadOverItsLimitIs413: the bound a person sets
// (traceStore.maxBundleMB) is the one that refuses, with the knob named,
// not gRPC's transport limit.
func TestBinaryUploadOverItsLimitIs413(t *testing.T) {
	_, plain, _ := bigBundle(t)
	h := startHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const mb = 20
	pctx := pluginContext(fmt.Sprintf(`{"host":"127.0.0.1","user":"sa","traceStore":{"directory":%q,"maxBundleMB":%d}}`, t.TempDir(), mb),
		map[string]string{"password": "x"})
	pctx.User = &backend.User{Login: "admin", Role: "Admin"}
	res := uploadOverGRPC(ctx, t, h, pctx, plain, "application/json")
	if res.Status != 413 || !strings.Contains(string(res.Body), "maxBundleMB") {
		t.Fatalf("upload of %d MB at a limit of %d MB: status %d: %s", len(plain)>>20, mb, res.Status, res.Body)
	}
}
