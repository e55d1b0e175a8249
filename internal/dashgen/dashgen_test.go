package dashgen

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	yaml "go.yaml.in/yaml/v3"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/exporter"
)

var update = flag.Bool("update", false, "rewrite dashboards/*.json from the builders")

const repo = "../.."

// The shipped JSON is exactly what the builders make (go test
// ./internal/dashgen -update rewrites it).
func TestDashboardsAreCurrent(t *testing.T) {
	for _, f := range built(t) {
		b := f.json
		testenv.Golden(t, filepath.Join(repo, "dashboards", f.Name), b, *update)
		// the SDK's own schema reads the file back strictly and validates it
		// (UnmarshalJSONStrict returns a typed-nil error list on success)
		var back dashboard.Dashboard
		if err := back.UnmarshalJSONStrict(b); err != nil {
			if errs, ok := err.(cog.BuildErrors); !ok || len(errs) > 0 {
				t.Errorf("%s does not read back strictly: %v", f.Name, err)
			}
		}
		if err := back.Validate(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

// panelJSON is what the checks read of a dashboard file.
type panelJSON struct {
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type, UID string
	} `json:"datasource"`
	Targets []map[string]any `json:"targets"`
	Panels  []panelJSON      `json:"panels"`
	Field   struct {
		Overrides []struct {
			Matcher    struct{ ID, Options string }
			Properties []struct {
				ID    string          `json:"id"`
				Value json.RawMessage `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
}

// hasPrometheusVariable says whether d has a variable "datasource" of type
// datasource listing Prometheus datasources.
// hasVariable: d has a datasource variable name listing datasources of typ.
func hasVariable(d dashboardJSON, name, typ string) bool {
	for _, v := range d.Templating.List {
		if v.Name == name && v.Type == "datasource" && v.Query == typ {
			return true
		}
	}
	return false
}

func hasPrometheusVariable(d dashboardJSON) bool {
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" {
			return true
		}
	}
	return false
}

type dashboardJSON struct {
	UID        string      `json:"uid"`
	Title      string      `json:"title"`
	Panels     []panelJSON `json:"panels"`
	Templating struct {
		List []struct {
			Name, Type string
			Query      any `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func loadShipped(t *testing.T) map[string]dashboardJSON {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repo, "dashboards", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	out := map[string]dashboardJSON{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboardJSON
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, dup := out[d.UID]; dup || d.UID == "" {
			t.Errorf("%s: uid %q empty or used twice", p, d.UID)
		}
		out[d.UID] = d
	}
	return out
}

func walk(panels []panelJSON, fn func(panelJSON)) {
	for _, p := range panels {
		fn(p)
		walk(p.Panels, fn)
	}
}

// provisionedDatasources reads the datasource uids and types of
// provisioning/datasources.
func provisionedDatasources(t *testing.T) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(repo, "provisioning", "datasources", "*.yaml"))
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Datasources []struct{ UID, Type string } `yaml:"datasources"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, d := range f.Datasources {
			out[d.UID] = d.Type
		}
	}
	return out
}

var metricRef = regexp.MustCompile(`\bqueryreplay_[a-z_]+\b`)

// Independent of the golden files: every panel's datasource is provisioned,
// every panel type exists, every expression names metrics the exporter
// publishes, and the replay dashboard and its links follow the contract.
func TestDashboardContracts(t *testing.T) {
	dash := loadShipped(t)
	for _, uid := range []string{ReplayUID, OverviewUID, SpillsUID, WaitsUID, StorageUID} {
		if _, ok := dash[uid]; !ok {
			t.Errorf("no dashboard %s", uid)
		}
	}
	ds := provisionedDatasources(t)
	if ds[PrometheusUID] != "prometheus" || ds[QueryReplayUID] != QueryReplayType {
		t.Fatalf("provisioned datasources %v", ds)
	}
	panelPlugin, err := os.ReadFile(filepath.Join(repo, "src", "panel", "plugin.json"))
	if err != nil || !strings.Contains(string(panelPlugin), `"id": "`+ReplayPanelType+`"`) {
		t.Fatalf("the replay panel plugin is not %s: %v", ReplayPanelType, err)
	}
	known := map[string]bool{}
	for _, m := range exporter.MetricNames() {
		known[m] = true
	}
	types := map[string]bool{"timeseries": true, "stat": true, "table": true, "row": true, ReplayPanelType: true}
	exprs := 0
	for uid, d := range dash {
		walk(d.Panels, func(p panelJSON) {
			if !types[p.Type] {
				t.Errorf("%s/%s: unknown panel type %q", uid, p.Title, p.Type)
			}
			if p.Type == "row" {
				return
			}
			switch {
			case p.Datasource == nil:
				t.Errorf("%s/%s: no datasource", uid, p.Title)
			case p.Datasource.Type == "prometheus":
				if p.Datasource.UID != "${datasource}" || !hasPrometheusVariable(d) {
					t.Errorf("%s/%s: Prometheus datasource %+v is not the datasource variable", uid, p.Title, p.Datasource)
				}
			case p.Datasource.Type == QueryReplayType && p.Datasource.UID == "${"+ReplayDatasourceVar+"}":
				if !hasVariable(d, ReplayDatasourceVar, QueryReplayType) {
					t.Errorf("%s/%s: QueryReplay datasource %+v has no datasource variable of that type", uid, p.Title, p.Datasource)
				}
			case ds[p.Datasource.UID] != p.Datasource.Type:
				t.Errorf("%s/%s: datasource %+v is not provisioned", uid, p.Title, p.Datasource)
			}
			for _, tg := range p.Targets {
				expr, _ := tg["expr"].(string)
				if expr == "" {
					continue
				}
				exprs++
				for _, m := range metricRef.FindAllString(expr, -1) {
					if !known[strings.TrimSuffix(m, "_bucket")] {
						t.Errorf("%s/%s: %s is not an exporter metric", uid, p.Title, m)
					}
				}
			}
		})
	}
	if exprs < 30 {
		t.Errorf("only %d expressions in the exporter dashboards", exprs)
	}
	replay := dash[ReplayUID]
	var vars []string
	for _, v := range replay.Templating.List {
		if v.Type == "textbox" {
			vars = append(vars, v.Name)
		}
	}
	if !slices.Equal(vars, []string{"query_hash", "sql", "database"}) {
		t.Errorf("replay variables %v, want textboxes query_hash, sql and database", vars)
	}
	found := false
	walk(replay.Panels, func(p panelJSON) {
		if p.Type == ReplayPanelType && len(p.Targets) == 1 && p.Targets[0]["sql"] == "${sql}" && p.Targets[0]["database"] == "${database}" &&
			p.Targets[0]["queryHash"] == "${query_hash}" {
			found = true
		}
	})
	if !found {
		t.Error("the replay panel's query does not take sql, queryHash and database from the variables")
	}
	link := ""
	walk(dash[SpillsUID].Panels, func(p panelJSON) {
		for _, o := range p.Field.Overrides {
			for _, prop := range o.Properties {
				if prop.ID == "links" && o.Matcher.Options == "query_hash" {
					var links []struct{ URL string }
					_ = json.Unmarshal(prop.Value, &links)
					if len(links) == 1 {
						link = links[0].URL
					}
				}
			}
		}
	})
	if link != "/d/queryreplay-replay?var-query_hash=${__data.fields.query_hash}&var-database=${__data.fields.database:percentencode}&var-replay_ds=${__data.fields.grafana_datasource:percentencode}&queryreplayRun=1" {
		t.Errorf("the top-query table links to %q", link)
	}
	rules, err := os.ReadFile(filepath.Join(repo, "provisioning", "prometheus", "queryreplay-rules.yml"))
	if err != nil || !strings.Contains(string(rules), "/d/"+SpillsUID+"?") {
		t.Errorf("the spill alert does not link to the spills dashboard: %v", err)
	}
}

type alertFile struct {
	APIVersion int `yaml:"apiVersion"`
	Groups     []struct {
		OrgID    int    `yaml:"orgId"`
		Name     string `yaml:"name"`
		Folder   string `yaml:"folder"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			UID          string `yaml:"uid"`
			Title        string `yaml:"title"`
			Condition    string `yaml:"condition"`
			DashboardUID string `yaml:"dashboardUid"`
			PanelID      int    `yaml:"panelId"`
			NoDataState  string `yaml:"noDataState"`
			ExecErrState string `yaml:"execErrState"`
			For          string `yaml:"for"`
			IsPaused     bool   `yaml:"isPaused"`
			Data         []struct {
				RefID             string         `yaml:"refId"`
				DatasourceUID     string         `yaml:"datasourceUid"`
				RelativeTimeRange map[string]int `yaml:"relativeTimeRange"`
				Model             map[string]any `yaml:"model"`
			} `yaml:"data"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// The Grafana-managed spill rules query the provisioned Prometheus for
// exporter metrics, reduce and threshold them with server-side
// expressions, and link to a panel that exists.
// mathRef is a query reference in a Grafana math expression.
var mathRef = regexp.MustCompile(`\$\{?([A-Za-z0-9_]+)\}?`)

func TestAlertingProvisioning(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repo, "provisioning", "alerting", "queryreplay-spills.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f alertFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	ds := provisionedDatasources(t)
	dash := loadShipped(t)
	known := map[string]bool{}
	for _, m := range exporter.MetricNames() {
		known[m] = true
	}
	if f.APIVersion != 1 || len(f.Groups) != 1 || len(f.Groups[0].Rules) < 1 {
		t.Fatalf("%+v", f)
	}
	uids := map[string]bool{}
	for _, r := range f.Groups[0].Rules {
		if uids[r.UID] || r.UID == "" || len(r.UID) > 40 {
			t.Errorf("rule uid %q", r.UID)
		}
		uids[r.UID] = true
		refs := map[string]string{}
		for _, d := range r.Data {
			refs[d.RefID] = d.DatasourceUID
			if d.Model["refId"] != d.RefID {
				t.Errorf("%s/%s: model refId %v", r.UID, d.RefID, d.Model["refId"])
			}
			if d.DatasourceUID == "__expr__" {
				e, _ := d.Model["expression"].(string)
				inputs := []string{e}
				if d.Model["type"] == "math" { // $A or ${A} references
					inputs = nil
					for _, m := range mathRef.FindAllStringSubmatch(e, -1) {
						inputs = append(inputs, m[1])
					}
				}
				for _, in := range inputs {
					if refs[in] == "" {
						t.Errorf("%s/%s: expression %q names no earlier query", r.UID, d.RefID, e)
					}
				}
				if len(inputs) == 0 {
					t.Errorf("%s/%s: math expression %q reads no query", r.UID, d.RefID, e)
				}
				continue
			}
			if _, ok := ds[d.DatasourceUID]; !ok {
				t.Errorf("%s/%s: datasource %s not provisioned", r.UID, d.RefID, d.DatasourceUID)
			}
			expr, _ := d.Model["expr"].(string)
			for _, m := range metricRef.FindAllString(expr, -1) {
				if !known[m] {
					t.Errorf("%s: %s is not an exporter metric", r.UID, m)
				}
			}
		}
		if refs[r.Condition] != "__expr__" || refs["A"] != PrometheusUID {
			t.Errorf("%s: condition %s over %v", r.UID, r.Condition, refs)
		}
		d, ok := dash[r.DashboardUID]
		if !ok {
			t.Errorf("%s: dashboard %s not shipped", r.UID, r.DashboardUID)
		}
		if r.PanelID < 1 || r.PanelID > len(d.Panels) || !strings.Contains(d.Panels[r.PanelID-1].Title, "Top queries") {
			t.Errorf("%s: panel %d is not the top-query table", r.UID, r.PanelID)
		}
		if r.NoDataState != "OK" || r.ExecErrState != "Error" || r.Labels["severity"] == "" {
			t.Errorf("%s: states %s/%s, labels %v", r.UID, r.NoDataState, r.ExecErrState, r.Labels)
		}
		if r.Annotations["summary"] == "" || r.Annotations["runbook_url"] == "" {
			t.Errorf("%s: annotations %v", r.UID, r.Annotations)
		}
	}
}

// exprsOf returns every "expr" string of a dashboard's JSON.
func exprsOf(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && k == "expr" {
					out = append(out, s)
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

var (
	aggregation = regexp.MustCompile(`\b(sum|avg|min|max|count|stddev|group)\s*(by\s*\(([^)]*)\))?\s*\(`)
	joinOn      = regexp.MustCompile(`\bon\s*\(([^)]*)\)`)
)

// No panel mixes servers: every aggregation keeps target (sum by (target,
// …)), every join matches on it, so a fleet behind one Prometheus shows one
// series per server.
func TestEveryAggregationKeepsTarget(t *testing.T) {
	checked := 0
	for _, f := range built(t) {
		b := f.json
		for _, e := range exprsOf(t, b) {
			for _, m := range aggregation.FindAllStringSubmatch(e, -1) {
				checked++
				if !slices.Contains(strings.Fields(strings.ReplaceAll(m[3], ",", " ")), "target") {
					t.Errorf("%s: %q aggregates away target in %s", f.Name, m[0], e)
				}
			}
			for _, m := range joinOn.FindAllStringSubmatch(e, -1) {
				if !strings.Contains(m[1], "target") || !strings.Contains(m[1], "instance") {
					t.Errorf("%s: join %q does not match on target and instance in %s", f.Name, m[0], e)
				}
			}
			// (time() - x > 0) parses as (time() - x) > 0
			if regexp.MustCompile(`time\(\)\s*-\s*[a-z_]+\{[^}]*\}\s*>`).MatchString(e) {
				t.Errorf("%s: %s compares time() - x, not x", f.Name, e)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d aggregations checked", checked)
	}
}

// The health stats that mean trouble above zero turn red there (a target
// down used to render green), and the spills dashboard answers "is it new?"
// with the same range a day and a week before.
func TestThresholdsAndOffsets(t *testing.T) {
	var overview, spills string
	for _, f := range built(t) {
		b := f.json
		if *f.Dashboard.Uid == OverviewUID {
			overview = string(b)
		}
		if *f.Dashboard.Uid == SpillsUID {
			spills = string(b)
		}
	}
	var d struct {
		Panels []struct {
			Title       string `json:"title"`
			FieldConfig struct {
				Defaults struct {
					Thresholds struct {
						Steps []struct {
							Value *float64 `json:"value"`
							Color string   `json:"color"`
						} `json:"steps"`
					} `json:"thresholds"`
				} `json:"defaults"`
			} `json:"fieldConfig"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(overview), &d); err != nil {
		t.Fatal(err)
	}
	red := map[string]bool{}
	for _, p := range d.Panels {
		steps := p.FieldConfig.Defaults.Thresholds.Steps
		if len(steps) >= 2 && steps[0].Color == "green" && steps[len(steps)-1].Color == "red" && steps[len(steps)-1].Value != nil && *steps[len(steps)-1].Value <= 1 {
			red[p.Title] = true
		}
	}
	for _, title := range []string{"Targets down", "Events lost (1h)"} {
		if !red[title] {
			t.Errorf("overview: %q does not turn red at 1", title)
		}
	}
	for _, off := range []string{"offset 1d", "offset 7d"} {
		if !strings.Contains(spills, off) {
			t.Errorf("spills: no query with %s", off)
		}
	}
}

// TestEveryVariableIsUsed: a dashboard variable that no panel, query or
// link reads is a control that does nothing (issue 31: exemplar links set
// var-query_hash, which no panel used).
func TestEveryVariableIsUsed(t *testing.T) {
	for _, f := range built(t) {
		b := f.json
		var d map[string]any
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		templating, _ := d["templating"].(map[string]any)
		list, _ := templating["list"].([]any)
		delete(d, "templating")
		rest, _ := json.Marshal(d)
		for _, v := range list {
			name, _ := v.(map[string]any)["name"].(string)
			if name == "" {
				continue
			}
			used := regexp.MustCompile(`\$\{` + regexp.QuoteMeta(name) + `\b|\$` + regexp.QuoteMeta(name) + `\b|\[\[` + regexp.QuoteMeta(name) + `\b`)
			if !used.Match(rest) {
				t.Errorf("%s: variable %q is used by no panel, query or link", f.Name, name)
			}
		}
	}
}

// builtFile is a dashboard as the builders make it, with its JSON.
type builtFile struct {
	File
	json []byte
}

// built returns every dashboard the builders make, each with its JSON.
func built(t *testing.T) []builtFile {
	t.Helper()
	files, err := All()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]builtFile, len(files))
	for i, f := range files {
		b, err := JSON(f.Dashboard)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = builtFile{File: f, json: b}
	}
	return out
}

// TestReplayDashboardAsksForItsRun: a trace runs only when asked
// (docs/frames.md §1), so the replay dashboard carries a link that asks,
// with its variables, and the datasource reads the same parameter.
func TestReplayDashboardAsksForItsRun(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, "dashboards", "replay.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Links []struct {
			URL         string `json:"url"`
			IncludeVars bool   `json:"includeVars"`
		} `json:"links"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	asks := false
	for _, l := range d.Links {
		asks = asks || (strings.Contains(l.URL, "?"+RunLinkParam+"=1") && l.IncludeVars)
	}
	if !asks {
		t.Errorf("the replay dashboard has no link asking for a run with its variables: %+v", d.Links)
	}
	ts, err := os.ReadFile(filepath.Join(repo, "src", "datasource", "datasource.ts"))
	if err != nil || !strings.Contains(string(ts), "RUN_LINK_PARAM = '"+RunLinkParam+"'") {
		t.Errorf("src/datasource/datasource.ts does not read %s: %v", RunLinkParam, err)
	}
}
