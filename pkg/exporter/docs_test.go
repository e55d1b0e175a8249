package exporter

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/operations.md documents every metric the exporter publishes, and has
// a runbook section for every alert the shipped rules link to.
func TestOperationsDocCoversMetricsAndAlerts(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range MetricNames() {
		if !strings.Contains(string(doc), "`"+m+"`") {
			t.Errorf("docs/operations.md does not document %s", m)
		}
	}
	rules, err := os.ReadFile(rulesDir + "/queryreplay-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	anchors := regexp.MustCompile(`runbook: "[^\n]*#([a-z]+)"`).FindAllStringSubmatch(string(rules), -1)
	if len(anchors) < 8 {
		t.Fatalf("only %d runbook anchors in the rules", len(anchors))
	}
	for _, m := range anchors {
		if !regexp.MustCompile(`(?mi)^### ` + m[1] + `$`).Match(doc) {
			t.Errorf("no runbook heading for #%s", m[1])
		}
	}
	if !strings.Contains(string(doc), "10617") {
		t.Error("the default port is not documented")
	}
}
