package viewer_test

import (
	"bytes"
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

// storedTraces lists the datasource's traces through the viewer, as the
// page's trace list does.
func storedTraces(t *testing.T, v *viewer.Server) []string {
	t.Helper()
	resp := call(t, v, http.MethodGet, "api/datasources/uid/queryreplay/resources/traces", nil)
	defer resp.Body.Close()
	var list []struct {
		TraceID string `json:"traceId"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list traces: %d %v", resp.StatusCode, err)
	}
	ids := make([]string, len(list))
	for i, l := range list {
		ids[i] = l.TraceID
	}
	return ids
}

func traceIDOf(t *testing.T, r results) string {
	t.Helper()
	if len(r.Results["A"].Frames) == 0 {
		t.Fatalf("no frames: %+v", r.Results["A"])
	}
	id, _ := r.Results["A"].Frames[0].Schema.Meta.Custom["traceId"].(string)
	return id
}

// TestViewerToolFlow is what the page's toolbar does against a real
// datasource on the stand-in: a run happens only for a new run request
// (sending the same request again, as a page reload does, serves the trace
// it made and runs nothing), two stored traces compare, and a bundle file
// uploaded as gzip opens.
func TestViewerToolFlow(t *testing.T) {
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

	newRun := func(tag string) string { return fmt.Sprintf("%d-%s", time.Now().UnixMilli(), strings.Repeat(tag, 16)) }
	q := func(run string) map[string]any {
		return map[string]any{"queryType": "trace", "sql": hashJoin, "database": "QueryReplayDemo", "run": run,
			"options": map[string]any{"events": []string{"locks", "waits"}, "callStacks": false}}
	}
	runA := newRun("a1")
	a := traceIDOf(t, dsQuery(t, v, q(runA)))
	if got := storedTraces(t, v); len(got) != 1 {
		t.Fatalf("after one run: %d stored traces", len(got))
	}
	// a reload re-sends the same run request: the stored trace, no new run
	if again := traceIDOf(t, dsQuery(t, v, q(runA))); again != a {
		t.Fatalf("the same run request gave trace %s, then %s", a, again)
	}
	if got := storedTraces(t, v); len(got) != 1 {
		t.Fatalf("the same run request ran again: %d stored traces", len(got))
	}
	b := traceIDOf(t, dsQuery(t, v, q(newRun("b2"))))
	if b == a || len(storedTraces(t, v)) != 2 {
		t.Fatalf("a new run request did not run: %s %s", a, b)
	}

	cmp := dsQuery(t, v, map[string]any{"queryType": "compare", "traceIds": []string{a, b}})
	if len(cmp.Results["A"].Frames) == 0 {
		t.Fatalf("compare gave no frames: %+v", cmp.Results["A"])
	}

	// download A's bundle (gzip) and upload it as a file, as the page does
	dl := call(t, v, http.MethodGet, "api/datasources/uid/queryreplay/resources/traces/"+a+"/bundle", nil)
	gz, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if dl.StatusCode != 200 || len(gz) < 2 || gz[0] != 0x1f || gz[1] != 0x8b {
		t.Fatalf("download: %d, %d bytes", dl.StatusCode, len(gz))
	}
	req, _ := http.NewRequest(http.MethodPost, v.URL()+"api/datasources/uid/queryreplay/resources/traces", bytes.NewReader(gz))
	req.Header.Set(viewer.TokenHeader, v.Token())
	req.Header.Set("Content-Type", "application/gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		TraceID string `json:"traceId"`
	}
	err = json.NewDecoder(resp.Body).Decode(&up)
	resp.Body.Close()
	if err != nil || (resp.StatusCode != 200 && resp.StatusCode != 201) || len(up.TraceID) != 32 {
		t.Fatalf("upload: %d %v %q", resp.StatusCode, err, up.TraceID)
	}
	opened := dsQuery(t, v, map[string]any{"queryType": "bundle", "traceId": up.TraceID})
	if id := traceIDOf(t, opened); id != up.TraceID {
		t.Fatalf("opened %s, uploaded %s", id, up.TraceID)
	}
}
