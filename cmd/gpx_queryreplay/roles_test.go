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

const westSQL = "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'"

// onStandin starts the stand-in and the plugin binary; settings are merged
// into the stand-in's connection settings.
func onStandin(t *testing.T, settings string) (*pluginhost.Host, *standin.Running, backend.PluginContext) {
	t.Helper()
	sctx, stop := context.WithCancel(context.Background())
	srv, err := standin.Start(sctx, "127.0.0.1:0", standin.Options{XELEncoder: xe.EncodeXMLAsXEL})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); stop() })
	host, port, _ := net.SplitHostPort(srv.Addr)
	pctx := pluginContext(fmt.Sprintf(`{"host":%q,"port":%s,"user":"sa","database":"QueryReplayDemo","encrypt":"disable","traceStore":{"directory":%q}%s}`,
		host, port, t.TempDir(), settings), map[string]string{"password": "QueryReplay-Standin1"})
	return startHost(t), srv, pctx
}

// as is pctx (the same datasource instance) for another user.
func as(pctx backend.PluginContext, login, role string) backend.PluginContext {
	pctx.User = &backend.User{Login: login, Role: role}
	return pctx
}

func queryOnce(t testing.TB, h *pluginhost.Host, pctx backend.PluginContext, qt, j string) backend.DataResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := h.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pctx, Queries: []backend.DataQuery{
		{RefID: "A", QueryType: qt, MaxDataPoints: 500, JSON: []byte(j)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Responses["A"]
}

func traceIDIn(t *testing.T, r backend.DataResponse) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("query failed: %v", r.Error)
	}
	if len(r.Frames) == 0 || r.Frames[0].Meta == nil {
		t.Fatalf("frames %v", r.Frames)
	}
	var meta struct {
		TraceID string `json:"traceId"`
	}
	b, _ := json.Marshal(r.Frames[0].Meta.Custom)
	_ = json.Unmarshal(b, &meta)
	return meta.TraceID
}

func isPressExecute(fs data.Frames) bool {
	return len(fs) == 1 && fs[0].Meta != nil && len(fs[0].Meta.Notices) == 1 &&
		strings.Contains(fs[0].Meta.Notices[0].Text, "Press Execute")
}

// TestBinaryTraceRunsOnlyWhenAskedOverGRPC: issue 25's saved trace panel
// that re-ran (with a saved, allowed clearBufferPool: DBCC
// DROPCLEANBUFFERS) on every load and refresh, through the real binary.
// After one Execute, tripwires on the stand-in fail the next batch that
// clears the buffer pool, creates an event session or runs the statement.
func TestBinaryTraceRunsOnlyWhenAskedOverGRPC(t *testing.T) {
	h, srv, pctx := onStandin(t, `,"allowBufferPoolClear":true`)
	model := func(extra string) string {
		return `{"queryType":"trace","sql":"` + westSQL + `","options":{"clearBufferPool":true}` + extra + `}`
	}
	executed := model(`,"run":"` + runRequest() + `"`)
	id := traceIDIn(t, queryOnce(t, h, pctx, "trace", executed))

	for _, w := range []string{"DROPCLEANBUFFERS", "CREATE EVENT SESSION", "N'West'"} {
		srv.Faults().Error(w, 50000, 16, "tripwire: "+w+" ran again")
	}
	armed := srv.Faults().Pending()
	old := fmt.Sprintf(`,"run":"%d-%s"`, time.Now().Add(-time.Hour).UnixMilli(), strings.Repeat("0f", 16))
	for _, c := range []struct {
		name, json string
		served     bool
	}{
		{"refresh", executed, true},
		{"reload with the trace id the editor saved", model(`,"traceId":"` + id + `"`), true},
		{"reload of a query that never ran", model(""), false},
		{"reload of a run request saved an hour ago", model(old), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := queryOnce(t, h, pctx, "trace", c.json)
			if c.served {
				if got := traceIDIn(t, r); got != id {
					t.Fatalf("served %s, want the stored %s", got, id)
				}
			} else if r.Error != nil || !isPressExecute(r.Frames) {
				t.Fatalf("got %v %v, want the press-Execute notice", r.Error, r.Frames)
			}
			if srv.Faults().Pending() != armed {
				t.Fatal("SQL ran on the server")
			}
		})
	}
	r := queryOnce(t, h, pctx, "trace", model(`,"run":"`+runRequest()+`"`))
	if r.Error == nil || !strings.Contains(r.Error.Error(), "tripwire") {
		t.Fatalf("a new Execute did not reach the server (the tripwires are not live): %v", r.Error)
	}
}

// TestBinaryRolesOverGRPC: issue 25's "any Viewer can run traces, list
// every user's statements, download and delete their traces", per role,
// through the real binary.
func TestBinaryRolesOverGRPC(t *testing.T) {
	h, _, pctx := onStandin(t, "")
	ed := as(pctx, "ed", "Editor")
	vera := as(pctx, "vera", "Viewer")
	trace := func() string { return `{"queryType":"trace","run":"` + runRequest() + `","sql":"` + westSQL + `"}` }
	probe := `{"queryType":"probe","sql":"` + westSQL + `","metrics":["duration"]}`

	id := traceIDIn(t, queryOnce(t, h, ed, "trace", trace()))
	if r := queryOnce(t, h, vera, "trace", trace()); r.Error == nil || r.Status != backend.StatusForbidden ||
		!strings.Contains(r.Error.Error(), "minTraceRole") {
		t.Errorf("a Viewer's trace: %v (status %d), want refused by minTraceRole", r.Error, r.Status)
	}
	if r := queryOnce(t, h, vera, "probe", probe); r.Error == nil || r.Status != backend.StatusForbidden {
		t.Errorf("a Viewer's probe: %v, want refused", r.Error)
	}
	// alerting evaluates as its scheduler identity (Grafana's
	// pkg/services/ngalert/schedule: login grafana_scheduler, org role Admin)
	if r := queryOnce(t, h, as(pctx, "grafana_scheduler", "Admin"), "probe", probe); r.Error != nil || len(r.Frames) != 1 {
		t.Errorf("alerting's probe: %v", r.Error)
	}
	// a Viewer still opens the trace a dashboard holds
	if got := traceIDIn(t, queryOnce(t, h, vera, "bundle", `{"queryType":"bundle","traceId":"`+id+`"}`)); got != id {
		t.Errorf("a Viewer's bundle query served %s", got)
	}

	res := func(p backend.PluginContext, method, path string) *backend.CallResourceResponse {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := h.CallResource(ctx, &backend.CallResourceRequest{PluginContext: p, Method: method, Path: path, URL: path})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := res(vera, "GET", "traces"); r.Status != 200 || strings.Contains(string(r.Body), id) {
		t.Errorf("a Viewer lists another user's trace: %d %s", r.Status, r.Body)
	}
	if r := res(as(pctx, "bob", "Editor"), "GET", "traces"); r.Status != 200 || !strings.Contains(string(r.Body), `"owner":"ed"`) {
		t.Errorf("an Editor's list: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		who          backend.PluginContext
		method, path string
		want         int
	}{
		{vera, "GET", "traces/" + id + "/bundle", 403},
		{vera, "DELETE", "traces/" + id, 403},
		{as(pctx, "bob", "Editor"), "DELETE", "traces/" + id, 403},
		{ed, "GET", "traces/" + id + "/bundle", 200},
		{as(pctx, "ann", "Admin"), "DELETE", "traces/" + id, 204},
	} {
		if r := res(c.who, c.method, c.path); r.Status != c.want {
			t.Errorf("%s %s as %s: %d %s, want %d", c.method, c.path, c.who.User.Login, r.Status, r.Body, c.want)
		}
	}
}
