package plugin

import (
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// The canary alert rule provisioned in provisioning/alerting asks the real
// datasource for a probe on the stand-in; the response passes the data
// plane numeric contract and alert evaluation's uniqueness rule, with one
// number (one alert instance) for the one metric the rule is about.
func TestProvisionedCanaryProbeEvaluates(t *testing.T) {
	var file struct {
		Groups []struct {
			Rules []struct {
				UID  string `yaml:"uid"`
				Data []struct {
					RefID         string         `yaml:"refId"`
					DatasourceUID string         `yaml:"datasourceUid"`
					Model         map[string]any `yaml:"model"`
				} `yaml:"data"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "provisioning", "alerting", "queryreplay-probe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	n := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			for _, q := range r.Data {
				if q.DatasourceUID != "queryreplay" {
					continue
				}
				n++
				metrics, _ := q.Model["metrics"].([]any)
				fs := ok(t, run(t, d, bg, query(q.RefID, q.Model))[q.RefID])
				checkProbeForAlerting(t, fs, len(metrics))
			}
		}
	}
	if n == 0 {
		t.Fatal("no probe query in provisioning/alerting/queryreplay-probe.yaml")
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}
