package releasecheck

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/plugin"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// Grafana's alert rule file provisioning format, the keys QueryReplay uses
// (https://grafana.com/docs/grafana/latest/alerting/set-up/provision-alerting-resources/file-provisioning/).
// Decoding is strict.

type alertingFile struct {
	APIVersion int          `yaml:"apiVersion"`
	Groups     []alertGroup `yaml:"groups"`
}

type alertGroup struct {
	OrgID    int         `yaml:"orgId"`
	Name     string      `yaml:"name"`
	Folder   string      `yaml:"folder"`
	Interval string      `yaml:"interval"`
	Rules    []alertRule `yaml:"rules"`
}

type alertRule struct {
	UID          string            `yaml:"uid"`
	Title        string            `yaml:"title"`
	Condition    string            `yaml:"condition"`
	Data         []alertQuery      `yaml:"data"`
	NoDataState  string            `yaml:"noDataState"`
	ExecErrState string            `yaml:"execErrState"`
	For          string            `yaml:"for"`
	Labels       map[string]string `yaml:"labels"`
	Annotations  map[string]string `yaml:"annotations"`
	DashboardUID string            `yaml:"dashboardUid"`
	PanelID      int               `yaml:"panelId"`
	IsPaused     bool              `yaml:"isPaused"`
}

type alertQuery struct {
	RefID             string                  `yaml:"refId"`
	RelativeTimeRange *struct{ From, To int } `yaml:"relativeTimeRange"`
	DatasourceUID     string                  `yaml:"datasourceUid"`
	Model             map[string]any          `yaml:"model"`
}

// exprDatasource is the uid of Grafana's server-side expressions.
const exprDatasource = "__expr__"

// Every provisioned alert rule is well formed (its condition and each
// expression's input name a refId of the rule, each query a provisioned
// datasource with a non-empty relative time range), and a rule on the
// QueryReplay datasource is a probe (the one query type meant to run on a
// schedule) of a read-only batch, asking for named metrics so its threshold
// applies to one measure. At least one such canary rule is provisioned.
func TestProvisionedAlertRules(t *testing.T) {
	repoDS := datasources(t, repoPath(t, "provisioning/datasources"))
	probes := 0
	for _, f := range yamlFiles(t, repoPath(t, "provisioning/alerting")) {
		var af alertingFile
		decodeYAMLStrict(t, f, &af)
		if af.APIVersion != 1 {
			t.Errorf("%s: apiVersion %d, want 1", f, af.APIVersion)
		}
		for _, g := range af.Groups {
			for _, r := range g.Rules {
				where := filepath.Base(f) + " rule " + r.UID
				checkRuleRefs(t, where, r, repoDS)
				for _, q := range r.Data {
					if q.DatasourceUID == "queryreplay" {
						checkProbeQuery(t, where, q)
						probes++
					}
				}
			}
		}
	}
	if probes == 0 {
		t.Error("provisioning/alerting has no rule on a QueryReplay probe (the canary example)")
	}
}

func checkRuleRefs(t *testing.T, where string, r alertRule, ds map[string]provisionedSource) {
	t.Helper()
	var refs []string
	for _, q := range r.Data {
		refs = append(refs, q.RefID)
	}
	if !slices.Contains(refs, r.Condition) {
		t.Errorf("%s: condition %q is not a refId of the rule (%v)", where, r.Condition, refs)
	}
	for _, q := range r.Data {
		if q.DatasourceUID == exprDatasource {
			for _, in := range expressionInputs(q.Model) {
				if !slices.Contains(refs, in) {
					t.Errorf("%s: expression %s reads %q, not a refId of the rule", where, q.RefID, in)
				}
			}
			continue
		}
		if _, ok := ds[q.DatasourceUID]; !ok {
			t.Errorf("%s: query %s uses datasource uid %q, which provisioning/datasources does not provision", where, q.RefID, q.DatasourceUID)
		}
		// Grafana refuses a query whose relative time range is 0/0 (invalidRelativeTime).
		if q.RelativeTimeRange == nil || q.RelativeTimeRange.From <= q.RelativeTimeRange.To {
			t.Errorf("%s: query %s needs a relativeTimeRange with from > to", where, q.RefID)
		}
	}
}

// checkProbeQuery decodes the query model as the datasource does and
// applies the datasource's own checks: read-only batch, known metrics.
func checkProbeQuery(t *testing.T, where string, q alertQuery) {
	t.Helper()
	raw, err := json.Marshal(q.Model)
	if err != nil {
		t.Fatal(err)
	}
	var m plugin.Query
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: the QueryReplay query model: %v", where, err)
	}
	if m.QueryType != plugin.QueryProbe {
		t.Errorf("%s: queryType %q on a schedule; alert rules run probes (docs/frames.md §1)", where, m.QueryType)
	}
	c, err := tsql.Classify(m.SQL)
	if err != nil || c.Modification {
		t.Errorf("%s: the probe's batch must classify as read-only: %+v, %v", where, c, err)
	}
	if len(m.Metrics) == 0 {
		t.Errorf("%s: the probe names no metrics, so a threshold would apply to all of them", where)
	}
	if err := frames.CheckProbeMetrics(m.Metrics); err != nil {
		t.Errorf("%s: %v", where, err)
	}
}

// mathInput is a $A or ${A} reference in a math expression (Grafana's
// server-side expressions: https://grafana.com/docs/grafana/latest/panels-visualizations/query-transform-data/expression-queries/).
var mathInput = regexp.MustCompile(`\$\{?([A-Za-z0-9_]+)\}?`)

// expressionInputs are the refIds an expression reads: every reference of
// a math expression, the one input of the others.
func expressionInputs(model map[string]any) []string {
	in, _ := model["expression"].(string)
	if model["type"] != "math" {
		return []string{in}
	}
	var out []string
	for _, m := range mathInput.FindAllStringSubmatch(in, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		return []string{in} // reported as not a refId
	}
	return out
}
