package plugin

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/queryreplay/queryreplay/internal/testsql"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

const (
	hashJoinSQL = "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'"
	updateSQL   = "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120"
	standinPass = "QueryReplay-Standin1"
	readerPass  = "Reader-Pass1"
)

type fixture struct {
	run *standin.Running
	db  *sql.DB // the test's own view of the server
	dir string
}

func startStandin(t testing.TB) *fixture { return startPersona(t, "") }

// startPersona starts the stand-in as one of its personas ("" is SQL
// Server 2017 on Linux).
func startPersona(t testing.TB, persona string) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{ExtraLogins: map[string]string{"reader": readerPass},
		XELEncoder: xe.EncodeXMLAsXEL, Persona: persona})
	if err != nil {
		cancel()
		t.Fatalf("start stand-in: %v", err)
	}
	db, err := sql.Open("sqlserver", run.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); run.Close(); cancel() })
	return &fixture{run: run, db: db, dir: t.TempDir()}
}

// settings returns instance settings for the stand-in; extra jsonData keys
// override the defaults.
func (f *fixture) settings(t testing.TB, uid string, extra map[string]any) backend.DataSourceInstanceSettings {
	t.Helper()
	host, port, _ := net.SplitHostPort(f.run.Addr)
	p, _ := strconv.Atoi(port)
	j := map[string]any{"host": host, "port": p, "user": "sa", "database": "QueryReplayDemo", "encrypt": "disable",
		"traceStore": map[string]any{"directory": f.dir}}
	password := standinPass
	for k, v := range extra {
		if k == "password" {
			password = v.(string)
			continue
		}
		j[k] = v
	}
	s := settingsFromJSON(t, j, password)
	s.UID = uid
	return s
}

func settingsFromJSON(t testing.TB, j map[string]any, password string) backend.DataSourceInstanceSettings {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return backend.DataSourceInstanceSettings{JSONData: b, DecryptedSecureJSONData: map[string]string{"password": password}}
}

func (f *fixture) datasource(t testing.TB, uid string, extra map[string]any) *Datasource {
	t.Helper()
	d := openDatasource(t, f.settings(t, uid, extra))
	if d.settingsErr != nil && extra["expectInvalid"] == nil {
		t.Fatalf("settings: %v", d.settingsErr)
	}
	return d
}

// openDatasource creates an instance as Grafana would, disposed when the
// test ends, after its start-up sweep.
func openDatasource(t testing.TB, s backend.DataSourceInstanceSettings) *Datasource {
	t.Helper()
	inst, err := NewDatasource(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	d := inst.(*Datasource)
	t.Cleanup(d.Dispose)
	<-d.sweepDone
	return d
}

// sessions lists the queryreplay_* event sessions on the stand-in.
func (f *fixture) sessions(t testing.TB) []string {
	t.Helper()
	return testsql.EventSessions(t, f.db, tracer.SessionPrefix)
}

// query builds a DataQuery from its JSON model. A trace query gets a fresh
// run request, as the editor's Execute gives it, unless m says "run"
// itself (nil: none).
func query(refID string, m map[string]any) backend.DataQuery {
	qt, _ := m["queryType"].(string)
	if _, set := m["run"]; !set && (qt == "" || qt == QueryTrace) {
		m = maps.Clone(m)
		m["run"] = freshRun()
	}
	b, _ := json.Marshal(m)
	mdp := int64(0)
	if v, ok := m["maxDataPoints"].(int); ok {
		mdp = int64(v)
	}
	return backend.DataQuery{RefID: refID, QueryType: qt, JSON: b, MaxDataPoints: mdp}
}

// run sends the queries as an Editor (the default minTraceRole) would.
func run(t testing.TB, d *Datasource, ctx context.Context, qs ...backend.DataQuery) map[string]backend.DataResponse {
	t.Helper()
	return runAs(t, d, ctx, &backend.User{Login: "editor", Role: RoleEditor}, qs...)
}

// runAs sends the queries as user u (nil: a request without a user).
func runAs(t testing.TB, d *Datasource, ctx context.Context, u *backend.User, qs ...backend.DataQuery) map[string]backend.DataResponse {
	t.Helper()
	resp, err := d.QueryData(ctx, &backend.QueryDataRequest{PluginContext: backend.PluginContext{User: u}, Queries: qs})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Responses
}

// editor is the caller the benchmarks query as.
var editor = caller{login: "editor", role: RoleEditor}

var runSeq atomic.Int64

// freshRun is a run request as the editor makes one: now in unix
// milliseconds and random-looking hex, unique within the test binary.
func freshRun() string {
	return fmt.Sprintf("%d-%016x", time.Now().UnixMilli(), 0x5eed0000+runSeq.Add(1))
}

func ok(t testing.TB, r backend.DataResponse) data.Frames {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("query failed: %v (status %d, source %s)", r.Error, r.Status, r.ErrorSource)
	}
	return r.Frames
}

func fails(t testing.TB, r backend.DataResponse, status backend.Status, source backend.ErrorSource, words ...string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("the query succeeded; want status %d", status)
	}
	if r.Status != status || r.ErrorSource != source {
		t.Errorf("status %d source %q, want %d %q: %v", r.Status, r.ErrorSource, status, source, r.Error)
	}
	for _, w := range words {
		if !strings.Contains(r.Error.Error(), w) {
			t.Errorf("error %q does not say %q", r.Error, w)
		}
	}
}

func frameNamed(t testing.TB, fs data.Frames, name string) *data.Frame {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no frame %q", name)
	return nil
}

func traceIDOf(t testing.TB, fs data.Frames) string {
	t.Helper()
	c, _ := fs[0].Meta.Custom.(map[string]any)
	if c == nil {
		// frames.custom is a named map type
		b, _ := json.Marshal(fs[0].Meta.Custom)
		_ = json.Unmarshal(b, &c)
	}
	id, _ := c["traceId"].(string)
	if len(id) != 32 {
		t.Fatalf("frame %s has trace id %q", fs[0].Name, id)
	}
	return id
}

func custom(t testing.TB, f *data.Frame) map[string]any {
	t.Helper()
	var c map[string]any
	b, _ := json.Marshal(f.Meta.Custom)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}
