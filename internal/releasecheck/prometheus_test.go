package releasecheck

import (
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func promtool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed (Debian package prometheus, in scripts/apt-packages.txt; make setup installs it)")
	}
	return p
}

// prometheusFiles sorts provisioning/prometheus by what each file is: rule
// files (top-level groups:), Prometheus configurations (scrape_configs:);
// promtool unit tests (rule_files: with tests:) are neither.
func prometheusFiles(t testing.TB) (rules, configs []string) {
	t.Helper()
	for _, f := range yamlFiles(t, repoPath(t, "provisioning/prometheus")) {
		var top map[string]any
		if err := yaml.Unmarshal(readFile(t, f), &top); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		_, groups := top["groups"]
		_, scrape := top["scrape_configs"]
		_, tests := top["tests"]
		switch {
		case groups:
			rules = append(rules, f)
		case scrape:
			configs = append(configs, f)
		case tests:
		default:
			t.Errorf("%s is neither a rule file, a Prometheus configuration nor a promtool test", f)
		}
	}
	return rules, configs
}

func ruleFiles(t testing.TB) []string {
	rules, _ := prometheusFiles(t)
	return rules
}

// The example configuration for an operator's own Prometheus is valid
// and finds the shipped rules.
func TestPrometheusExampleConfigs(t *testing.T) {
	tool := promtool(t)
	_, configs := prometheusFiles(t)
	if len(configs) == 0 {
		t.Skip("provisioning/prometheus has no example configuration")
	}
	for _, f := range configs {
		out, err := exec.Command(tool, "check", "config", f).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check config %s: %v\n%s", f, err, out)
		}
	}
}

// The compose Prometheus, as the container sees its files, passes promtool
// check config, and loads every rule file the repository ships.
func TestComposePrometheusConfig(t *testing.T) {
	tool := promtool(t)
	prom := loadCompose(t).service(t, "prometheus")
	var configPath string
	for _, arg := range prom.Command {
		if p, ok := strings.CutPrefix(arg, "--config.file="); ok {
			configPath = p
		}
	}
	if configPath == "" {
		t.Fatal("the prometheus service sets no --config.file")
	}
	root := containerFS(t, prom)
	out, err := exec.Command(tool, "check", "config", filepath.Join(root, filepath.FromSlash(configPath))).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`SUCCESS: (\d+) rule files found`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("promtool check config did not report the rule files it found:\n%s", out)
	}
	files := ruleFiles(t)
	if n, _ := strconv.Atoi(string(m[1])); n != len(files) {
		t.Errorf("the compose Prometheus loads %d rule files, the repository ships %d (%v):\n%s", n, len(files), files, out)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(repo(t), f)
		target, ok := mountedTarget(t, prom, filepath.ToSlash(rel))
		if !ok {
			t.Errorf("%s is not mounted into the prometheus service", rel)
			continue
		}
		if dir := path.Dir(configPath); !strings.HasPrefix(target, dir+"/") {
			t.Errorf("%s is mounted at %s, outside the config's directory %s that rule_files is relative to", rel, target, dir)
		}
	}
}

// The shipped rules pass promtool check rules on their own (the exporter's
// tests also run promtool test rules on them).
func TestPrometheusRulesCheck(t *testing.T) {
	tool := promtool(t)
	files := ruleFiles(t)
	if len(files) == 0 {
		t.Fatal("provisioning/prometheus ships no rule file")
	}
	for _, f := range files {
		out, err := exec.Command(tool, "check", "rules", f).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", f, err, out)
		}
	}
}
