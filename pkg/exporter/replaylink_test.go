package exporter

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// A spill on one of two servers: the replay link of the query that spilled
// opens the replay dashboard on that server's datasource
// (targets[].grafana_datasource) with the query hash — never the text — and
// the hash in the link is one the server's plan cache resolves to the
// statement that spilled (what the datasource does with it).
func TestReplayLinkCarriesTheTarget(t *testing.T) {
	east, west := startStandin(t), startStandin(t)
	cfg := testConfig(t, "global:\n  poll_interval: 1h\n  poll_timeout: 30s\n  grafana_url: https://grafana.example.com\ntargets:\n"+
		"  - {name: east, dsn_env: TEST_DSN_east, grafana_datasource: qr-east}\n"+
		"  - {name: west, dsn_env: TEST_DSN_west}\n",
		map[string]string{"east": east.DSN, "west": west.DSN})
	e := newTestExporter(t, cfg)
	pollOK(t, e)
	sortSpill := scenarioSQL(t, "sort_spill")
	runSQL(t, workloadDB(t, east.DSN), sortSpill)
	east.Server.FlushEventSessions()
	west.Server.FlushEventSessions()
	pollOK(t, e)

	var link string
	for _, tt := range e.TopQueries("") {
		for _, q := range tt.Queries {
			if q.Spills == 0 {
				continue
			}
			if tt.Target != "east" {
				t.Fatalf("target %s has a spilling query %s; only east spilled", tt.Target, q.QueryHash)
			}
			link = q.ReplayURL
		}
	}
	if link == "" {
		t.Fatal("no spilling query with a replay link on east")
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query()
	if u.Host != "grafana.example.com" || u.Path != "/d/queryreplay-replay" || v.Get("var-replay_ds") != "qr-east" || v.Has("var-sql") {
		t.Fatalf("replay link %s", link)
	}
	hash, err := sqlconn.ParseQueryHash(v.Get("var-query_hash"))
	if err != nil {
		t.Fatalf("link %s: %v", link, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := sqlconn.LookupStatement(ctx, workloadDB(t, east.DSN), hash, []string{v.Get("var-database")})
	if err != nil {
		t.Fatalf("the link's hash on east: %v", err)
	}
	if !strings.EqualFold(strings.Join(strings.Fields(st.Text), " "), strings.Join(strings.Fields(sortSpill), " ")) {
		t.Errorf("the link's hash is the statement %q, not the one that spilled", st.Text)
	}
	// the info series carries each target's datasource (west: the default)
	fams := gather(t, e)
	for target, want := range map[string]string{"east": "qr-east", "west": DefaultGrafanaDatasource} {
		f := fams["queryreplay_top_query_info"]
		seen := false
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["target"] == target {
				seen = true
				if l["grafana_datasource"] != want {
					t.Errorf("%s: top_query_info grafana_datasource %q, want %q", target, l["grafana_datasource"], want)
				}
			}
		}
		if !seen && target == "east" {
			t.Errorf("no top_query_info for %s", target)
		}
	}
}
