package plugin

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

var (
	viewerVera  = &backend.User{Login: "vera", Role: RoleViewer}
	editorEd    = &backend.User{Login: "ed", Role: RoleEditor}
	editorBob   = &backend.User{Login: "bob", Role: RoleEditor}
	adminAnn    = &backend.User{Login: "ann", Role: RoleAdmin}
	scheduler   = &backend.User{Login: alertingLogin, Role: RoleAdmin}
	fakeSched   = &backend.User{Login: alertingLogin, Role: RoleViewer}
	noRoleNoah  = &backend.User{Login: "noah", Role: "None"}
	probeQuery  = map[string]any{"queryType": "probe", "sql": hashJoinSQL, "metrics": []string{"duration"}}
	traceQuery_ = map[string]any{"sql": hashJoinSQL}
)

// TestWhoMayRunSQL is issue 25's "any Viewer can run traces through the
// datasource's privileged login": the request's org role decides, against
// minTraceRole, and alerting's scheduler identity may run probes.
func TestWhoMayRunSQL(t *testing.T) {
	f := startStandin(t)
	for _, c := range []struct {
		minRole string
		user    *backend.User
		trace   bool
		probe   bool
	}{
		{"", viewerVera, false, false},
		{"", editorEd, true, true},
		{"", adminAnn, true, true},
		{"", nil, false, false},
		{"", noRoleNoah, false, false},
		{"", scheduler, true, true},
		{"", fakeSched, false, false},
		{RoleViewer, viewerVera, true, true},
		{RoleViewer, noRoleNoah, false, false},
		{RoleAdmin, editorEd, false, false},
		{RoleAdmin, adminAnn, true, true},
		{RoleAdmin, scheduler, true, true},
	} {
		name := "nil"
		if c.user != nil {
			name = c.user.Login + "/" + c.user.Role
		}
		t.Run(cmpOr(c.minRole, "default")+"/"+name, func(t *testing.T) {
			d := f.datasource(t, "roles", map[string]any{"minTraceRole": c.minRole})
			r := runAs(t, d, bg, c.user, query("T", traceQuery_), query("P", probeQuery))
			for _, q := range []struct {
				ref     string
				allowed bool
			}{{"T", c.trace}, {"P", c.probe}} {
				if q.allowed {
					ok(t, r[q.ref])
				} else {
					fails(t, r[q.ref], backend.StatusForbidden, backend.ErrorSourcePlugin, "minTraceRole", "may not run SQL")
				}
			}
		})
	}
	if n := len(f.sessions(t)); n != 0 {
		t.Fatalf("%d event sessions left behind", n)
	}
}

func TestProbeRefusesBufferPoolClear(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"allowBufferPoolClear": true})
	m := map[string]any{"queryType": "probe", "sql": hashJoinSQL, "options": map[string]any{"clearBufferPool": true}}
	f.run.Faults().Error("DROPCLEANBUFFERS", 50000, 16, "tripwire")
	fails(t, runAs(t, d, bg, scheduler, query("P", m))["P"], backend.StatusBadRequest, backend.ErrorSourcePlugin, "clearBufferPool")
	if f.run.Faults().Pending() != 1 {
		t.Fatal("a probe cleared the buffer pool")
	}
}

func listedIDs(t *testing.T, d *Datasource, u *backend.User) []string {
	t.Helper()
	status, body, _ := callAs(t, d, u, http.MethodGet, "traces", nil)
	var list []struct {
		ID    string `json:"traceId"`
		Owner string `json:"owner"`
	}
	if status != 200 || json.Unmarshal(body, &list) != nil {
		t.Fatalf("traces as %s: %d %s", u.Login, status, body)
	}
	var ids []string
	for _, i := range list {
		ids = append(ids, i.Owner+":"+i.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestStoredTracesPerUser: traces record their owner; a Viewer lists only
// their own; downloading or deleting another user's trace needs Admin.
// The Viewer's trace dates from a time minTraceRole was Viewer (the same
// datasource uid and store, reconfigured).
func TestStoredTracesPerUser(t *testing.T) {
	f := startStandin(t)
	before := f.datasource(t, "ds1", map[string]any{"minTraceRole": RoleViewer})
	veras := traceIDOf(t, ok(t, runAs(t, before, bg, viewerVera, query("A", traceQuery_))["A"]))
	d := f.datasource(t, "ds1", nil)
	eds := traceIDOf(t, ok(t, runAs(t, d, bg, editorEd, query("A", traceQuery_))["A"]))

	all := []string{"ed:" + eds, "vera:" + veras}
	slices.Sort(all)
	if got := listedIDs(t, d, editorBob); !slices.Equal(got, all) {
		t.Errorf("an Editor lists %v, want every trace %v", got, all)
	}
	if got := listedIDs(t, d, viewerVera); !slices.Equal(got, []string{"vera:" + veras}) {
		t.Errorf("a Viewer lists %v, want only her own", got)
	}
	if got := listedIDs(t, d, noRoleNoah); len(got) != 0 {
		t.Errorf("a user of no role lists %v", got)
	}

	// uploads add to the shared store: the trace role, and the uploader owns them
	_, gz, _ := callAs(t, d, editorEd, http.MethodGet, "traces/"+eds+"/bundle", nil)
	if status, body, _ := callAs(t, d, viewerVera, http.MethodPost, "traces", gz); status != 403 {
		t.Errorf("a Viewer's upload: %d %s, want 403", status, body)
	}
	status, body, _ := callAs(t, d, editorBob, http.MethodPost, "traces", gz)
	var up struct {
		ID string `json:"traceId"`
	}
	if status != 201 || json.Unmarshal(body, &up) != nil {
		t.Fatalf("an Editor's upload: %d %s", status, body)
	}
	if status, _, _ := callAs(t, d, editorEd, http.MethodDelete, "traces/"+up.ID, nil); status != 403 {
		t.Errorf("ed deleted bob's upload: %d", status)
	}
	if status, _, _ := callAs(t, d, editorBob, http.MethodDelete, "traces/"+up.ID, nil); status != 204 {
		t.Errorf("bob could not delete his upload: %d", status)
	}

	for _, c := range []struct {
		user   *backend.User
		method string
		id     string
		want   int
	}{
		{viewerVera, http.MethodGet, eds, 403},
		{viewerVera, http.MethodDelete, eds, 403},
		{editorBob, http.MethodGet, eds, 403},
		{editorBob, http.MethodDelete, eds, 403},
		{viewerVera, http.MethodGet, veras, 200},
		{editorEd, http.MethodGet, eds, 200},
		{adminAnn, http.MethodGet, veras, 200},
		{adminAnn, http.MethodDelete, eds, 204},
		{viewerVera, http.MethodDelete, veras, 204},
	} {
		path := "traces/" + c.id
		if c.method == http.MethodGet {
			path += "/bundle"
		}
		if status, body, _ := callAs(t, d, c.user, c.method, path, nil); status != c.want {
			t.Errorf("%s %s as %s: %d %s, want %d", c.method, path, c.user.Login, status, body, c.want)
		}
	}
	if got := listedIDs(t, d, adminAnn); len(got) != 0 {
		t.Errorf("after the deletes: %v", got)
	}
}
