package plugin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/internal/testbomb"
)

// portOneDatasource is a datasource whose server refuses at once (port 1
// on loopback): enough for the resources and queries that need no server.
func portOneDatasource(t *testing.T, extra map[string]any) *Datasource {
	t.Helper()
	j := map[string]any{"host": "127.0.0.1", "port": 1, "user": "sa", "encrypt": "disable", "connectTimeoutSeconds": 1,
		"traceStore": map[string]any{"directory": t.TempDir()}}
	for k, v := range extra {
		j[k] = v
	}
	d := openDatasource(t, settingsFromJSON(t, j, "x"))
	if d.settingsErr != nil {
		t.Fatalf("settings: %v", d.settingsErr)
	}
	return d
}

// TestUploadGzipBomb: a megabyte of gzip expanding to a gigabyte, posted
// to the traces resource, is refused with 413 and an error naming the
// limit and its setting, at a memory cost bounded by the limit — the
// default one and a configured one.
func TestUploadGzipBomb(t *testing.T) {
	const expand = 1 << 30
	for _, c := range []struct {
		traceStore map[string]any
		limit      int64
		words      string
	}{
		{map[string]any{"maxBundleMB": 8}, 8 << 20, "8 MB"},
		{nil, 256 << 20, "256 MB"},
	} {
		ts := map[string]any{"directory": t.TempDir()}
		for k, v := range c.traceStore {
			ts[k] = v
		}
		d := portOneDatasource(t, map[string]any{"traceStore": ts})
		for name, bomb := range map[string][]byte{
			"whitespace": testbomb.Gzip("{", ' ', expand),
			"string":     testbomb.Gzip(testbomb.BundlePrefix, 'A', expand),
		} {
			var status int
			var body []byte
			alloc := testbomb.Alloc(func() { status, body, _ = call(t, d, http.MethodPost, "traces", bomb) })
			var e apiError
			_ = json.Unmarshal(body, &e)
			if status != http.StatusRequestEntityTooLarge || !strings.Contains(e.Error, c.words) || !strings.Contains(e.Error, "traceStore.maxBundleMB") {
				t.Fatalf("%s bomb (%s), limit %d: %d %s", name, testbomb.Describe(bomb, expand), c.limit, status, body)
			}
			if alloc > uint64(4*c.limit) {
				t.Errorf("%s bomb, limit %d: the upload allocated %d bytes", name, c.limit, alloc)
			}
		}
	}
}

// TestUploadBodyOverLimit: a body larger than the limit as sent is refused
// before it is decompressed or parsed.
func TestUploadBodyOverLimit(t *testing.T) {
	d := portOneDatasource(t, map[string]any{"traceStore": map[string]any{"directory": t.TempDir(), "maxBundleMB": 1}})
	status, body, _ := call(t, d, http.MethodPost, "traces", make([]byte, 1<<20+1))
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "the uploaded bundle exceeds the limit of 1 MB") {
		t.Fatalf("%d %s", status, body)
	}
}

// TestQueryJSONLimit: a query's JSON over maxQueryMB fails before it is
// decoded, naming the limit; one under it is decoded as usual.
func TestQueryJSONLimit(t *testing.T) {
	d := portOneDatasource(t, map[string]any{"maxQueryMB": 1})
	huge := `{"queryType":"bundle","traceId":"` + strings.Repeat("a", 1<<20) + `"}`
	r := run(t, d, bg, backend.DataQuery{RefID: "A", JSON: json.RawMessage(huge)})["A"]
	fails(t, r, backend.StatusBadRequest, backend.ErrorSourcePlugin, "the query's JSON exceeds the limit of 1 MB", "maxQueryMB")
	// Under the limit, the query decodes and fails for what it is.
	small := `{"queryType":"bundle","traceId":"` + strings.Repeat("a", 1000) + `"}`
	r = run(t, d, bg, backend.DataQuery{RefID: "A", JSON: json.RawMessage(small)})["A"]
	if r.Error == nil || strings.Contains(r.Error.Error(), "exceeds the limit") {
		t.Fatalf("a small query: %v", r.Error)
	}
	// The default is 4 MB.
	d = portOneDatasource(t, nil)
	huge = `{"sql":"` + strings.Repeat(" ", 4<<20) + `"}`
	r = run(t, d, bg, backend.DataQuery{RefID: "A", JSON: json.RawMessage(huge)})["A"]
	fails(t, r, backend.StatusBadRequest, backend.ErrorSourcePlugin, "the query's JSON exceeds the limit of 4 MB", "maxQueryMB")
}

func TestSizeSettingsValidate(t *testing.T) {
	base := Settings{Host: "h", User: "u", Password: "p"}
	for _, c := range []struct {
		mut  func(*Settings)
		want string
	}{
		{func(s *Settings) { s.MaxQueryMB = -1 }, "maxQueryMB -1 is outside 1-256"},
		{func(s *Settings) { s.MaxQueryMB = 257 }, "maxQueryMB 257"},
		{func(s *Settings) { s.TraceStore.MaxBundleMB = 4097 }, "traceStore.maxBundleMB 4097 is outside 1-4096"},
		{func(s *Settings) { s.TraceStore.MaxBundleMB = -2 }, "traceStore.maxBundleMB -2"},
	} {
		s := base
		c.mut(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	s := base
	s.MaxQueryMB, s.TraceStore.MaxBundleMB = 256, 4096
	if err := s.Validate(); err != nil {
		t.Errorf("the largest allowed values: %v", err)
	}
}
