package releasecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// replayDashboardUID is the replay dashboard's uid (docs/design/contracts.md §3).
const replayDashboardUID = "queryreplay-replay"

// corePanelTypes are Grafana's built-in panel types a dashboard may use
// besides our panel.
var corePanelTypes = []string{
	"alertlist", "annolist", "barchart", "bargauge", "candlestick", "canvas", "dashlist", "datagrid", "flamegraph",
	"gauge", "geomap", "heatmap", "histogram", "logs", "news", "nodeGraph", "piechart", "row", "stat",
	"state-timeline", "status-history", "table", "text", "timeseries", "traces", "trend", "xychart",
}

// specialDatasourceUIDs are uids Grafana provides itself.
var specialDatasourceUIDs = []string{"__expr__", "grafana", "-- Grafana --", "-- Mixed --", "-- Dashboard --"}

type loadedDashboard struct {
	UID, Title, File string
	Raw              []byte
}

func readDashboard(t testing.TB, file string) loadedDashboard {
	t.Helper()
	raw := readFile(t, file)
	var head struct {
		UID   string `json:"uid"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return loadedDashboard{UID: head.UID, Title: head.Title, File: file, Raw: raw}
}

func repoDashboards(t testing.TB) []loadedDashboard {
	t.Helper()
	files, err := filepath.Glob(repoPath(t, "dashboards/*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []loadedDashboard
	for _, f := range files {
		out = append(out, readDashboard(t, f))
	}
	return out
}

// dashboardWorld is what a dashboard may refer to.
type dashboardWorld struct {
	datasources map[string]string // uid → type
	dashboards  []string          // uids
	panelTypes  []string
}

// sdkProblems decodes a dashboard with grafana-foundation-sdk's strict
// decoder and validator. Both return a typed-nil cog.BuildErrors on success
// (docs/design/grafana.md §9.3), so success is an empty list, not a nil error.
// "required field is missing" is not a problem: the SDK's schema marks as
// required what Grafana fills in with defaults when it loads a file (the
// annotation list, every key of a panel link), and dashboards exported from
// Grafana leave them out. Unexpected fields, wrong types and failed
// validations are problems.
func sdkProblems(raw []byte) []string {
	var out []string
	collect := func(step string, err error) {
		if err == nil {
			return
		}
		var be cog.BuildErrors
		if errors.As(err, &be) {
			for _, e := range be {
				if strings.Contains(e.Error(), "required field is missing from input") {
					continue
				}
				out = append(out, fmt.Sprintf("%s: %s", step, e.Error()))
			}
			return
		}
		out = append(out, fmt.Sprintf("%s: %v", step, err))
	}
	var d dashboard.Dashboard
	collect("foundation-sdk strict decode", d.UnmarshalJSONStrict(raw))
	if len(out) == 0 {
		collect("foundation-sdk validate", d.Validate())
	}
	return out
}

var dashboardLink = regexp.MustCompile(`/d/([A-Za-z0-9_-]+)`)

// checkDashboard returns every problem of one dashboard: schema, uid and
// title, datasource references, panel types, links to other dashboards.
func checkDashboard(raw []byte, w dashboardWorld) []string {
	problems := sdkProblems(raw)
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return append(problems, err.Error())
	}
	if uid, _ := doc["uid"].(string); uid == "" {
		problems = append(problems, "no uid (links and the home dashboard need a fixed one)")
	}
	if title, _ := doc["title"].(string); title == "" {
		problems = append(problems, "no title")
	}
	variables := map[string]string{}
	if tmpl, ok := doc["templating"].(map[string]any); ok {
		list, _ := tmpl["list"].([]any)
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				name, _ := m["name"].(string)
				typ, _ := m["type"].(string)
				if q, _ := m["query"].(string); typ == "datasource" {
					typ += ":" + q // a datasource variable, with the plugin type it lists
				}
				variables[name] = typ
			}
		}
	}
	walkJSON(doc, "", func(where string, key string, value any) {
		switch key {
		case "datasource":
			problems = append(problems, checkDatasourceRef(where, value, w, variables)...)
		case "datasourceUid":
			if uid, ok := value.(string); ok && !slices.Contains(specialDatasourceUIDs, uid) && w.datasources[uid] == "" {
				problems = append(problems, fmt.Sprintf("%s: datasourceUid %q is not provisioned", where, uid))
			}
		case "type":
			if isPanelPath(where) {
				if typ, ok := value.(string); ok && !slices.Contains(w.panelTypes, typ) {
					problems = append(problems, fmt.Sprintf("%s: panel type %q is neither a core panel nor ours", where, typ))
				}
			}
		case "url":
			if s, ok := value.(string); ok {
				for _, m := range dashboardLink.FindAllStringSubmatch(s, -1) {
					if !slices.Contains(w.dashboards, m[1]) {
						problems = append(problems, fmt.Sprintf("%s: link %q opens dashboard %s, which is not shipped", where, s, m[1]))
					}
				}
			}
		}
	})
	return problems
}

// isPanelPath says whether a JSON path is a panel object (panels[i] or a
// row's panels[i].panels[j]), not a target or a field config.
func isPanelPath(where string) bool {
	return regexp.MustCompile(`^(\.panels\[\d+\])+$`).MatchString(where)
}

func checkDatasourceRef(where string, value any, w dashboardWorld, variables map[string]string) []string {
	switch v := value.(type) {
	case nil:
		return nil
	case string:
		return []string{fmt.Sprintf("%s: datasource %q is a name; use {\"type\", \"uid\"} so provisioning uids apply", where, v)}
	case map[string]any:
		uid, _ := v["uid"].(string)
		typ, _ := v["type"].(string)
		if name, ok := strings.CutPrefix(uid, "$"); ok {
			name = strings.Trim(name, "{}")
			lists, ok := strings.CutPrefix(variables[name], "datasource:")
			if !ok {
				return []string{fmt.Sprintf("%s: datasource uid %q names no datasource variable", where, uid)}
			}
			if typ != "" && typ != lists {
				return []string{fmt.Sprintf("%s: datasource uid %q lists %q datasources, the reference says %q", where, uid, lists, typ)}
			}
			return nil
		}
		if slices.Contains(specialDatasourceUIDs, uid) {
			return nil
		}
		have, ok := w.datasources[uid]
		if !ok {
			return []string{fmt.Sprintf("%s: datasource uid %q is not provisioned", where, uid)}
		}
		// An installation's Prometheus has its own uid: a hard-coded one
		// shows "datasource not found" wherever the dashboard is imported
		// (Grafana docs, "Data source variables").
		if have == "prometheus" {
			return []string{fmt.Sprintf("%s: Prometheus datasource uid %q is hard-coded; use a datasource variable (${datasource})", where, uid)}
		}
		if typ != "" && typ != have {
			return []string{fmt.Sprintf("%s: datasource uid %q has type %q here, %q in provisioning", where, uid, typ, have)}
		}
	}
	return nil
}

// walkJSON calls fn for every key of every object, with the object's path.
func walkJSON(v any, where string, fn func(where, key string, value any)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fn(where, k, x[k])
			walkJSON(x[k], where+"."+k, fn)
		}
	case []any:
		for i, e := range x {
			walkJSON(e, fmt.Sprintf("%s[%d]", where, i), fn)
		}
	}
}

// world is what the shipped dashboards may refer to: the compose stack's
// datasources (a superset of provisioning/datasources, see
// TestProvisioningDatasources), the shipped dashboards and the panel types.
func world(t testing.TB) dashboardWorld {
	t.Helper()
	w := dashboardWorld{datasources: map[string]string{}, panelTypes: append([]string{pluginByType(t, "panel").ID}, corePanelTypes...)}
	composeDS, _ := composeDatasources(t)
	for uid, ds := range composeDS {
		w.datasources[uid] = ds.Type
	}
	for _, d := range repoDashboards(t) {
		w.dashboards = append(w.dashboards, d.UID)
	}
	return w
}

// Every shipped dashboard passes the checks, uids are unique, and the
// replay dashboard exists with its contract variables.
func TestDashboards(t *testing.T) {
	all := repoDashboards(t)
	if len(all) == 0 {
		t.Fatal("dashboards/ holds no dashboard: the exporter and replay dashboards must ship")
	}
	w := world(t)
	seen := map[string]string{}
	for _, d := range all {
		for _, p := range checkDashboard(d.Raw, w) {
			t.Errorf("%s: %s", filepath.Base(d.File), p)
		}
		if prev, dup := seen[d.UID]; dup {
			t.Errorf("uid %s used by %s and %s", d.UID, prev, d.File)
		}
		seen[d.UID] = d.File
	}
	replay, ok := seen[replayDashboardUID]
	if !ok {
		t.Fatalf("no dashboard has uid %s (the replay dashboard)", replayDashboardUID)
	}
	raw := string(readFile(t, replay))
	for _, v := range []string{`"sql"`, `"database"`} {
		if !strings.Contains(raw, `"name": `+v) && !strings.Contains(raw, `"name":`+v) {
			t.Errorf("the replay dashboard has no template variable %s (docs/design/contracts.md §3)", v)
		}
	}
}

// The checks themselves: a good dashboard passes, and each kind of mistake
// is reported.
func TestCheckDashboardFindsMistakes(t *testing.T) {
	w := dashboardWorld{
		datasources: map[string]string{"queryreplay": "queryreplay-sqlserver-datasource", "prometheus": "prometheus"},
		dashboards:  []string{"fixture-good", "queryreplay-replay"},
		panelTypes:  append([]string{"queryreplay-replay-panel"}, corePanelTypes...),
	}
	good := readFile(t, "testdata/dashboard.json")
	if p := checkDashboard(good, w); len(p) != 0 {
		t.Fatalf("the good fixture has problems: %v", p)
	}
	for _, tc := range []struct {
		name   string
		mutate func(d map[string]any)
		want   string
	}{
		{"unknown datasource uid", func(d map[string]any) {
			panel(d, 1)["datasource"] = map[string]any{"type": "queryreplay-sqlserver-datasource", "uid": "prom2"}
		}, `uid "prom2" is not provisioned`},
		{"datasource by name", func(d map[string]any) { panel(d, 0)["datasource"] = "Prometheus" }, "is a name"},
		{"type mismatch", func(d map[string]any) {
			panel(d, 1)["datasource"] = map[string]any{"type": "loki", "uid": "queryreplay"}
		}, `has type "loki" here`},
		{"undefined variable", func(d map[string]any) { panel(d, 0)["datasource"] = map[string]any{"uid": "${nope}"} }, "names no datasource variable"},
		{"hard-coded Prometheus uid", func(d map[string]any) {
			panel(d, 0)["datasource"] = map[string]any{"type": "prometheus", "uid": "prometheus"}
		}, `Prometheus datasource uid "prometheus" is hard-coded`},
		{"hard-coded Prometheus uid in a target", func(d map[string]any) {
			panel(d, 0)["targets"] = []any{map[string]any{"refId": "A", "datasource": map[string]any{"uid": "prometheus"}, "expr": "up"}}
		}, `Prometheus datasource uid "prometheus" is hard-coded`},
		{"variable of another type", func(d map[string]any) {
			panel(d, 0)["datasource"] = map[string]any{"type": "loki", "uid": "${datasource}"}
		}, `lists "prometheus" datasources`},
		{"unknown panel type", func(d map[string]any) { panel(d, 1)["type"] = "queryreplay-panel" }, `panel type "queryreplay-panel"`},
		{"broken link", func(d map[string]any) {
			panel(d, 0)["links"] = []any{map[string]any{"title": "x", "url": "/d/nowhere?var-sql=1"}}
		}, "opens dashboard nowhere"},
		{"no uid", func(d map[string]any) { delete(d, "uid") }, "no uid"},
		{"schema: wrong type", func(d map[string]any) { d["editable"] = "yes" }, "foundation-sdk strict decode: editable"},
		{"schema: misspelt key", func(d map[string]any) { d["templatting"] = d["templating"] }, "unexpected field 'templatting'"},
		{"alert query uid", func(d map[string]any) {
			panel(d, 0)["targets"] = []any{map[string]any{"refId": "A", "datasourceUid": "nope"}}
		}, `datasourceUid "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(good, &d); err != nil {
				t.Fatal(err)
			}
			tc.mutate(d)
			raw, _ := json.Marshal(d)
			problems := checkDashboard(raw, w)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("want a problem containing %q, got %v", tc.want, problems)
			}
		})
	}
}

func panel(d map[string]any, i int) map[string]any {
	return d["panels"].([]any)[i].(map[string]any)
}
