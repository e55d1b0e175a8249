package viewer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// fakeDS records what the viewer hands it and answers with one frame per query.
type fakeDS struct {
	mu        sync.Mutex
	queries   []backend.DataQuery
	resources []*backend.CallResourceRequest
	fail      string
}

func (f *fakeDS) QueryData(_ context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := backend.NewQueryDataResponse()
	for _, q := range req.Queries {
		f.queries = append(f.queries, q)
		if q.RefID == f.fail {
			resp.Responses[q.RefID] = backend.ErrDataResponseWithSource(backend.StatusNotFound, backend.ErrorSourceDownstream, "trace not found")
			continue
		}
		fr := data.NewFrame("trace", data.NewField("traceId", nil, []string{"abc"}))
		resp.Responses[q.RefID] = backend.DataResponse{Frames: data.Frames{fr}}
	}
	return resp, nil
}

func (f *fakeDS) CallResource(_ context.Context, req *backend.CallResourceRequest, s backend.CallResourceResponseSender) error {
	f.mu.Lock()
	f.resources = append(f.resources, req)
	f.mu.Unlock()
	if req.Path == "traces" && req.Method == http.MethodPost {
		return s.Send(&backend.CallResourceResponse{Status: 200, Body: []byte(`{"traceId":"0190d5c2a0e87c3b9a51e2f4c6d8b0a1"}`)})
	}
	return s.Send(&backend.CallResourceResponse{Status: 201, Headers: map[string][]string{"X-Seen": {req.URL}}, Body: []byte("echo:" + string(req.Body))})
}

var assets = fstest.MapFS{"harness.js": {Data: []byte("console.log('harness')")}, "harness.css": {Data: []byte("body{}")}}

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Assets == nil {
		cfg.Assets = assets
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := v.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return v
}

// get and post call the viewer as its page does: with the token.
func get(t *testing.T, v *Server, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(TokenHeader, v.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func post(t *testing.T, v *Server, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(TokenHeader, v.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	if _, err := New(Config{Assets: assets}); err == nil || !strings.Contains(err.Error(), "Datasource") {
		t.Errorf("no datasource: %v", err)
	}
	if _, err := New(Config{Datasource: &fakeDS{}, Assets: fstest.MapFS{}}); err == nil || !strings.Contains(err.Error(), "build:harness") {
		t.Errorf("no bundle: %v", err)
	}
}

func TestStartRefusesNonLoopbackUnlessAllowed(t *testing.T) {
	v, err := New(Config{Datasource: &fakeDS{}, Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Start(context.Background(), "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("0.0.0.0: %v", err)
	}
	if err := checkLoopback("[::1]:0", false); err != nil {
		t.Errorf("::1: %v", err)
	}
	if err := checkLoopback("0.0.0.0:0", true); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

func TestPageCarriesDatasourceAndFirstQuery(t *testing.T) {
	v := start(t, Config{Datasource: &fakeDS{}, Query: map[string]any{"queryType": "trace", "sql": "SELECT 1 </script>"}})
	code, body := get(t, v, v.URL())
	if code != 200 || !strings.Contains(body, `src="/assets/harness.js"`) {
		t.Fatalf("page %d: %s", code, body)
	}
	if strings.Contains(body, "SELECT 1 </script>") || !strings.Contains(body, `\u003c/script\u003e`) {
		t.Errorf("query text not escaped inside the script: %s", body)
	}
	if !strings.Contains(body, `"uid":"queryreplay"`) || !strings.Contains(body, `"type":"queryreplay-sqlserver-datasource"`) {
		t.Errorf("datasource missing: %s", body)
	}
	_, body = get(t, v, v.URL()+"?traceId=0190d5c2a0e87c3b9a51e2f4c6d8b0a1")
	if !strings.Contains(body, `"queryType":"bundle"`) {
		t.Errorf("traceId in the URL should open that bundle: %s", body)
	}
	code, js := get(t, v, v.URL()+"assets/harness.js")
	if code != 200 || js != "console.log('harness')" {
		t.Errorf("asset %d %q", code, js)
	}
	if code, _ := get(t, v, v.URL()+"assets/missing.js"); code != 404 {
		t.Errorf("missing asset %d", code)
	}
}

func TestQueryConvertsAsGrafanaDoes(t *testing.T) {
	ds := &fakeDS{fail: "B"}
	v := start(t, Config{Datasource: ds})
	body := `{"from":"1764590400000","to":"1764594000000","queries":[
	 {"refId":"A","datasource":{"uid":"queryreplay","type":"queryreplay-sqlserver-datasource"},"queryType":"view","traceId":"t","maxDataPoints":1500,"intervalMs":20},
	 {"refId":"B","queryType":"bundle","traceId":"missing"}]}`
	code, b := post(t, v, v.URL()+"api/ds/query", body)
	if code != http.StatusBadRequest {
		t.Errorf("status %d with a failed query, want 400 (Grafana's default)", code)
	}
	var resp struct {
		Results map[string]struct {
			Status int               `json:"status"`
			Error  string            `json:"error"`
			Source string            `json:"errorSource"`
			Frames []json.RawMessage `json:"frames"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if len(resp.Results["A"].Frames) != 1 || resp.Results["B"].Error != "trace not found" || resp.Results["B"].Status != 404 || resp.Results["B"].Source != "downstream" {
		t.Errorf("results: %s", b)
	}
	q := ds.queries[0]
	if q.RefID != "A" && len(ds.queries) > 1 {
		q = ds.queries[1]
	}
	if q.QueryType != "view" || q.MaxDataPoints != 1500 || q.Interval.Milliseconds() != 20 || q.TimeRange.From.UnixMilli() != 1764590400000 {
		t.Errorf("query: %+v", q)
	}
	if !strings.Contains(string(q.JSON), `"traceId":"t"`) {
		t.Errorf("raw query JSON not passed on: %s", q.JSON)
	}
	if code, b := post(t, v, v.URL()+"api/ds/query", `{"queries":[{"refId":"A","datasource":{"uid":"other"}}]}`); code != 400 || !bytes.Contains(b, []byte("not found")) {
		t.Errorf("other datasource: %d %s", code, b)
	}
	if code, _ := post(t, v, v.URL()+"api/ds/query", `{"queries":[]}`); code != 400 {
		t.Errorf("no queries: %d", code)
	}
}

func TestResourcesAreForwarded(t *testing.T) {
	ds := &fakeDS{}
	v := start(t, Config{Datasource: ds})
	code, b := post(t, v, v.URL()+"api/datasources/uid/queryreplay/resources/traces/x?y=1", "hello")
	// the fake answers 200 only for POST traces; this is POST traces/x
	if code != 201 || string(b) != "echo:hello" {
		t.Errorf("resource: %d %s", code, b)
	}
	r := ds.resources[len(ds.resources)-1]
	if r.Path != "traces/x" || r.URL != "traces/x?y=1" || r.Method != "POST" {
		t.Errorf("forwarded %+v", r)
	}
	if code, _ := get(t, v, v.URL()+"api/datasources/uid/nope/resources/databases"); code != 404 {
		t.Errorf("unknown uid: %d", code)
	}
	if code, _ := get(t, v, v.URL()+"api/datasources/uid/queryreplay/health"); code != 404 {
		t.Errorf("health without a CheckHealth handler: %d", code)
	}
}

func TestBundlesAreUploadedAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	if err := os.WriteFile(path, []byte(`{"format":"queryreplay-bundle"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ds := &fakeDS{}
	v := start(t, Config{Datasource: ds, Bundles: []string{path}})
	if ids := v.TraceIDs(); len(ids) != 1 || ids[0] != "0190d5c2a0e87c3b9a51e2f4c6d8b0a1" {
		t.Fatalf("ids %v", ids)
	}
	if string(ds.resources[0].Body) != `{"format":"queryreplay-bundle"}` {
		t.Errorf("uploaded %q", ds.resources[0].Body)
	}
	_, body := get(t, v, v.URL())
	if !strings.Contains(body, `"traceId":"0190d5c2a0e87c3b9a51e2f4c6d8b0a1"`) {
		t.Errorf("page should open the uploaded bundle: %s", body)
	}
	bad, _ := New(Config{Datasource: ds, Assets: assets, Bundles: []string{filepath.Join(dir, "none.json")}})
	if err := bad.Start(context.Background(), "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "read bundle") {
		t.Errorf("missing bundle: %v", err)
	}
}

func TestPageQueryFromTheURL(t *testing.T) {
	v := start(t, Config{Datasource: &fakeDS{}})
	_, body := get(t, v, v.URL()+`?query=%7B%22queryType%22%3A%22trace%22%2C%22sql%22%3A%22SELECT%202%22%2C%22options%22%3A%7B%22clearBufferPool%22%3Atrue%7D%7D`)
	if !strings.Contains(body, `"clearBufferPool":true`) || !strings.Contains(body, `"sql":"SELECT 2"`) {
		t.Errorf("query from the URL: %s", body)
	}
	_, body = get(t, v, v.URL()+"?sql=SELECT%203&database=Demo")
	if !strings.Contains(body, `"sql":"SELECT 3"`) || !strings.Contains(body, `"database":"Demo"`) {
		t.Errorf("sql from the URL: %s", body)
	}
}

// The page learns what its query form may offer (cold cache only where
// allowBufferPoolClear is on) and the upload bound, never where the
// server is or who logs in.
func TestPageCarriesWhatTheQueryFormOffers(t *testing.T) {
	st := backend.DataSourceInstanceSettings{JSONData: []byte(`{"host":"db.internal","user":"sa","database":"Sales",` +
		`"allowBufferPoolClear":true,"traceStore":{"directory":"/var/lib/qr","maxBundleMB":64}}`)}
	v := start(t, Config{Datasource: &fakeDS{}, Settings: st, MaxRequestBytes: 5 << 20})
	_, body := get(t, v, v.URL())
	m := regexp.MustCompile(`__QUERYREPLAY_VIEWER__ = (.*);\n`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no page config: %s", body)
	}
	var c PageConfig
	if err := json.Unmarshal([]byte(m[1]), &c); err != nil {
		t.Fatal(err)
	}
	if c.Settings["allowBufferPoolClear"] != true || c.Settings["database"] != "Sales" || c.MaxUploadBytes != 5<<20 {
		t.Errorf("page config: %+v", c)
	}
	if ts, _ := c.Settings["traceStore"].(map[string]any); ts["maxBundleMB"] != float64(64) || ts["directory"] != nil {
		t.Errorf("traceStore: %+v", c.Settings["traceStore"])
	}
	for _, secret := range []string{"db.internal", `"sa"`, "/var/lib/qr"} {
		if strings.Contains(body, secret) {
			t.Errorf("the page shows %s: %s", secret, body)
		}
	}
	plain := start(t, Config{Datasource: &fakeDS{}})
	_, body = get(t, plain, plain.URL())
	if strings.Contains(body, "allowBufferPoolClear") {
		t.Errorf("settings without the key offer it: %s", body)
	}
}
