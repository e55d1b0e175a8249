package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/queryreplay/queryreplay/internal/viewertest"
	"github.com/queryreplay/queryreplay/pkg/viewer"
)

const hashJoin = "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'"

type results struct {
	Results map[string]struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
		Frames []struct {
			Schema struct {
				Name string `json:"name"`
				Meta struct {
					Custom map[string]any `json:"custom"`
				} `json:"meta"`
			} `json:"schema"`
		} `json:"frames"`
	} `json:"results"`
}

// call sends a request as the page does: with the viewer's token.
func call(t *testing.T, v *viewer.Server, method, path string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, v.URL()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(viewer.TokenHeader, v.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func dsQuery(t *testing.T, v *viewer.Server, q map[string]any) results {
	t.Helper()
	q["refId"] = "A"
	q["datasource"] = map[string]string{"uid": "queryreplay", "type": "queryreplay-sqlserver-datasource"}
	body, _ := json.Marshal(map[string]any{"queries": []any{q}})
	resp := call(t, v, http.MethodPost, "api/ds/query", strings.NewReader(string(body)))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %.300s", err, b)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, r.Results["A"].Error)
	}
	return r
}

// TestRealDatasourceThroughTheViewer runs a trace on the stand-in through
// the viewer's /api/ds/query, then re-slices it with a view query and lists
// databases through the resources path the query editor uses.
func TestRealDatasourceThroughTheViewer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stack, err := viewertest.StartStack(ctx, filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	v, err := viewer.New(viewer.Config{Datasource: stack.Datasource, Settings: stack.Settings,
		Assets: fstest.MapFS{"harness.js": {Data: []byte("//")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer v.Close()

	// a run request, as the page makes for the query it opens with (a trace runs only when asked)
	run := fmt.Sprintf("%d-%s", time.Now().UnixMilli(), strings.Repeat("ab", 16))
	r := dsQuery(t, v, map[string]any{"queryType": "trace", "sql": hashJoin, "run": run})
	var names []string
	for _, f := range r.Results["A"].Frames {
		names = append(names, f.Schema.Name)
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"trace", "operators", "phases", "lane_read", "lane_lock", "pages"} {
		if !strings.Contains(got, want) {
			t.Errorf("trace response has no %s frame: %s", want, got)
		}
	}
	id, _ := r.Results["A"].Frames[0].Schema.Meta.Custom["traceId"].(string)
	if len(id) != 32 {
		t.Fatalf("trace id %q", id)
	}
	view := dsQuery(t, v, map[string]any{"queryType": "view", "traceId": id, "window": map[string]int{"fromUs": 0, "toUs": 1000}, "maxDataPoints": 100})
	if len(view.Results["A"].Frames) == 0 || view.Results["A"].Frames[0].Schema.Name != "trace" {
		t.Errorf("view frames: %+v", view.Results["A"])
	}
	health := call(t, v, http.MethodGet, "api/datasources/uid/queryreplay/health", nil)
	hb, _ := io.ReadAll(health.Body)
	health.Body.Close()
	if health.StatusCode != 200 || !strings.Contains(string(hb), `"status":"OK"`) || !strings.Contains(string(hb), `"permissions"`) {
		t.Errorf("health %d: %s", health.StatusCode, hb)
	}
	resp := call(t, v, http.MethodGet, "api/datasources/uid/queryreplay/resources/databases", nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "QueryReplayDemo") {
		t.Errorf("databases %d: %s", resp.StatusCode, b)
	}
}
