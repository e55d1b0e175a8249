package plugin

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

func TestHealthReportsServerAndPermissions(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"allowBufferPoolClear": true})
	h, err := d.CheckHealth(bg, &backend.CheckHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != backend.HealthStatusOk {
		t.Fatalf("sysadmin health: %s", h.Message)
	}
	var rep Health
	if err := json.Unmarshal(h.JSONDetails, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Version != "14.0.3192.2" || rep.Persona != "box" || rep.EngineEdition != 3 || rep.Edition == "" || !rep.Sysadmin {
		t.Errorf("report = %+v", rep)
	}
	for _, w := range []string{"SQL Server 14.0.3192.2", "box"} {
		if !strings.Contains(h.Message, w) {
			t.Errorf("message %q lacks %q", h.Message, w)
		}
	}
	// the doctor's per-feature report rides in the details: a 2017
	// persona names its pages only with the undocumented DMV
	features := map[string]string{}
	for _, c := range rep.Features {
		features[c.Feature] = c.Status
	}
	if features["trace sessions"] != tracer.CheckOK || features["page names and headers"] != tracer.CheckDegraded {
		t.Errorf("features = %+v", rep.Features)
	}

	// a login with no server permissions: every missing permission named, with why
	reader := f.datasource(t, "ds2", map[string]any{"user": "reader", "password": readerPass, "allowModifications": true})
	h, _ = reader.CheckHealth(bg, &backend.CheckHealthRequest{})
	if h.Status != backend.HealthStatusError {
		t.Fatalf("reader health ok: %s", h.Message)
	}
	for _, w := range []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE", "needed to read the event file"} {
		if !strings.Contains(h.Message, w) {
			t.Errorf("message %q lacks %q", h.Message, w)
		}
	}
	_ = json.Unmarshal(h.JSONDetails, &rep)
	// without sysadmin a modification is traced without fn_dblog's log
	// records: a warning, not a missing permission
	if len(rep.Missing) != 2 || !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "sysadmin") && strings.Contains(w, "fn_dblog") }) {
		t.Errorf("missing %v, warnings %v", rep.Missing, rep.Warnings)
	}

	// unreachable server
	f.run.Close()
	h, _ = d.CheckHealth(bg, &backend.CheckHealthRequest{})
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "cannot connect") || strings.Contains(h.Message, standinPass) {
		t.Fatalf("down health: %s", h.Message)
	}
}

func TestHealthNamesEachPersona(t *testing.T) {
	cases := []struct{ persona, want, version, missing string }{
		{"sql2022", "box", "16.0.1000.6", "VIEW SERVER PERFORMANCE STATE — needed to read the event file on SQL Server 2022"},
		{"azure-sql-database", "azure-sql-database", "12.0.2000.8", "ALTER ANY DATABASE EVENT SESSION"},
		{"azure-sql-managed-instance", "managed-instance", "12.0.2000.8", "ALTER ANY EVENT SESSION"},
	}
	for _, c := range cases {
		t.Run(c.persona, func(t *testing.T) {
			f := startPersona(t, c.persona)
			d := f.datasource(t, "ds1", nil)
			h, _ := d.CheckHealth(bg, &backend.CheckHealthRequest{})
			var rep Health
			_ = json.Unmarshal(h.JSONDetails, &rep)
			if h.Status != backend.HealthStatusOk || rep.Persona != c.want || rep.Version != c.version {
				t.Fatalf("sa on %s: %v %q %+v", c.persona, h.Status, h.Message, rep)
			}
			reader := f.datasource(t, "ds2", map[string]any{"user": "reader", "password": readerPass})
			h, _ = reader.CheckHealth(bg, &backend.CheckHealthRequest{})
			if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, c.missing) {
				t.Errorf("reader on %s: %q, want it to name %q", c.persona, h.Message, c.missing)
			}
		})
	}
}

// call runs one resource request in-process, as the Editor run uses.
func call(t *testing.T, d *Datasource, method, path string, body []byte) (int, []byte, map[string][]string) {
	t.Helper()
	return callAs(t, d, &backend.User{Login: "editor", Role: RoleEditor}, method, path, body)
}

// callAs runs one resource request in-process as user u.
func callAs(t *testing.T, d *Datasource, u *backend.User, method, path string, body []byte) (int, []byte, map[string][]string) {
	t.Helper()
	var got *backend.CallResourceResponse
	err := d.CallResource(bg, &backend.CallResourceRequest{PluginContext: backend.PluginContext{User: u},
		Method: method, Path: path, URL: path, Body: body},
		backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error { got = r; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return got.Status, got.Body, got.Headers
}

func TestResources(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	status, body, _ := call(t, d, http.MethodGet, "databases", nil)
	var dbs []Database
	if status != 200 || json.Unmarshal(body, &dbs) != nil {
		t.Fatalf("databases: %d %s", status, body)
	}
	found := false
	for _, db := range dbs {
		found = found || (db.Name == "QueryReplayDemo" && db.DatabaseID == 5 && db.State == "ONLINE")
	}
	if !found {
		t.Errorf("databases = %+v", dbs)
	}

	id := traceIDOf(t, ok(t, run(t, d, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]))
	status, body, _ = call(t, d, http.MethodGet, "traces", nil)
	var list []map[string]any
	if status != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0]["traceId"] != id || list[0]["statement"] != hashJoinSQL {
		t.Fatalf("traces: %d %s", status, body)
	}

	status, gz, hdr := call(t, d, http.MethodGet, "traces/"+id+"/bundle", nil)
	if status != 200 || hdr["Content-Type"][0] != "application/gzip" {
		t.Fatalf("download: %d %v", status, hdr)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	var head struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(plain, &head) != nil || head.Format != "queryreplay-trace" {
		t.Fatalf("downloaded bundle: %.200s", plain)
	}

	// upload the plain JSON: a new id that serves the same trace
	status, body, _ = call(t, d, http.MethodPost, "traces", plain)
	var up map[string]string
	if status != 201 || json.Unmarshal(body, &up) != nil || up["traceId"] == id || len(up["traceId"]) != 32 {
		t.Fatalf("upload: %d %s", status, body)
	}
	bs := ok(t, run(t, d, bg, query("B", map[string]any{"queryType": "bundle", "traceId": up["traceId"]}))["B"])
	if frameNamed(t, bs, "lane_lock").Rows() == 0 {
		t.Error("the uploaded trace lost its locks")
	}
	if status, body, _ = call(t, d, http.MethodPost, "traces", []byte(`{"format":"other"}`)); status != 400 || !strings.Contains(string(body), "format") {
		t.Errorf("bad upload: %d %s", status, body)
	}

	if status, _, _ = call(t, d, http.MethodDelete, "traces/"+id, nil); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if status, _, _ = call(t, d, http.MethodDelete, "traces/"+id, nil); status != 404 {
		t.Errorf("second delete: %d", status)
	}
	fails(t, run(t, d, bg, query("V", map[string]any{"queryType": "view", "traceId": id}))["V"], backend.StatusNotFound, backend.ErrorSourcePlugin)
	if status, _, _ = call(t, d, http.MethodGet, "traces/"+id+"/bundle", nil); status != 404 {
		t.Errorf("download deleted: %d", status)
	}

	status, body, _ = call(t, d, http.MethodGet, "health", nil)
	var h Health
	if status != 200 || json.Unmarshal(body, &h) != nil || !h.OK || h.Persona != "box" {
		t.Errorf("health resource: %d %s", status, body)
	}
	if bytes.Contains(body, []byte(standinPass)) {
		t.Error("health detail leaks the password")
	}
}

// TestHealthNamesTheRealLoginCause: a login to a database that does not
// exist fails with Msg 4060 ("Cannot open database …") followed by Msg
// 18456 ("Login failed …"); the health message must say both, the cause
// first, not only the last (issue 25 item 7).
// https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/mssqlserver-4060-database-engine-error
func TestHealthNamesTheRealLoginCause(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"database": "NoSuchDatabase"})
	h, err := d.CheckHealth(bg, &backend.CheckHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	i4060, i18456 := strings.Index(h.Message, "Msg 4060"), strings.Index(h.Message, "Msg 18456")
	if h.Status != backend.HealthStatusError || i4060 < 0 || i18456 < 0 || i4060 > i18456 || !strings.Contains(h.Message, "NoSuchDatabase") {
		t.Fatalf("health of a login to a missing database: %s", h.Message)
	}
}
