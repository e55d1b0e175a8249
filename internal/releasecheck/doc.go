// Package releasecheck holds the tests that keep what QueryReplay ships
// consistent with itself, since neither Docker nor Grafana runs on the build
// machine: the compose stack (docker-compose.yaml and scripts/compose/),
// Grafana provisioning and dashboards, the Prometheus configuration and
// rules, the plugin metadata and the dist zip, and the documentation
// (README links, troubleshooting entries for every user-facing error).
//
// The package has no exported code and production code never imports it.
// Its tests read the repository from the working tree (the module root is
// found from the test's directory); they run external tools only where the
// tool is the real judge (promtool, unzip listings), and say which file and
// field is wrong when they fail.
package releasecheck
