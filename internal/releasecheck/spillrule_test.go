package releasecheck

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// promAlert is one alerting rule of a Prometheus rule file.
type promAlert struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
}

// promCondition is one "<aggregate> >= <n>" arm of a rule's expression.
type promCondition struct{ expr, threshold string }

var promArm = regexp.MustCompile(`^(.+?)\s*>=\s*([0-9]+)$`)

// spillRuleArms reads QueryReplayTempdbSpills from the shipped Prometheus
// rules and splits its expression into its "or" arms.
func spillRuleArms(t *testing.T) []promCondition {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []promAlert `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, repoPath(t, "provisioning/prometheus/queryreplay-rules.yml")), &f); err != nil {
		t.Fatal(err)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "QueryReplayTempdbSpills" {
				continue
			}
			var arms []promCondition
			for _, part := range strings.Split(r.Expr, "\nor\n") {
				m := promArm.FindStringSubmatch(strings.TrimSpace(part))
				if m == nil {
					t.Fatalf("QueryReplayTempdbSpills arm %q is not <aggregate> >= <n>", part)
				}
				arms = append(arms, promCondition{strings.TrimSpace(m[1]), m[2]})
			}
			return arms
		}
	}
	t.Fatal("provisioning/prometheus/queryreplay-rules.yml has no QueryReplayTempdbSpills")
	return nil
}

// mathRef matches a math expression's "$X >= n" comparison.
var mathRef = regexp.MustCompile(`\$\{?([A-Za-z0-9_]+)\}?\s*>=\s*([0-9]+)`)

// The Grafana-managed spill rule alerts on what the Prometheus rule alerts
// on — the spill count or the tempdb pages written — with the same
// thresholds: each arm of QueryReplayTempdbSpills is a query of the Grafana
// rule, reduced, and compared with the same number in the condition.
func TestGrafanaSpillRuleMatchesPrometheus(t *testing.T) {
	var af alertingFile
	f := repoPath(t, "provisioning/alerting/queryreplay-spills.yaml")
	decodeYAMLStrict(t, f, &af)
	var rule *alertRule
	for _, g := range af.Groups {
		for i := range g.Rules {
			if g.Rules[i].UID == "queryreplay-tempdb-spills" {
				rule = &g.Rules[i]
			}
		}
	}
	if rule == nil {
		t.Fatalf("%s: no rule queryreplay-tempdb-spills", filepath.Base(f))
	}
	byRef := map[string]alertQuery{}
	for _, q := range rule.Data {
		byRef[q.RefID] = q
	}
	cond := byRef[rule.Condition]
	if cond.Model["type"] != "math" {
		t.Fatalf("condition %s is %v, want a math expression over every arm", rule.Condition, cond.Model["type"])
	}
	math, _ := cond.Model["expression"].(string)
	compared := map[string]string{} // promql -> threshold in the Grafana rule
	for _, m := range mathRef.FindAllStringSubmatch(math, -1) {
		reduce := byRef[m[1]]
		in, _ := reduce.Model["expression"].(string)
		q, ok := byRef[in]
		if reduce.Model["type"] != "reduce" || !ok {
			t.Errorf("$%s in %q is not a reduce of a query", m[1], math)
			continue
		}
		expr, _ := q.Model["expr"].(string)
		compared[strings.Join(strings.Fields(expr), " ")] = m[2]
	}
	arms := spillRuleArms(t)
	for _, a := range arms {
		key := strings.Join(strings.Fields(a.expr), " ")
		if got, ok := compared[key]; !ok || got != a.threshold {
			t.Errorf("the Grafana rule does not alert on %s >= %s (it compares %v in %q)", a.expr, a.threshold, compared, math)
		}
	}
	if len(arms) < 2 || !slices.ContainsFunc(arms, func(a promCondition) bool { return strings.Contains(a.expr, "pages_written") }) {
		t.Errorf("the Prometheus rule lost its volume arm: %v", arms)
	}
	if len(arms) > 1 && !strings.Contains(math, "||") {
		t.Errorf("condition %q does not fire on either arm", math)
	}
}
