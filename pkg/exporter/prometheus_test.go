package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// rulesDir holds the shipped Prometheus rules and their promtool tests.
const rulesDir = "../../provisioning/prometheus"

// serveExporter serves e's handler on 127.0.0.1 and returns its address.
func serveExporter(t testing.TB, e *Exporter) string {
	t.Helper()
	h, err := e.Handler("test")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func httpGet(t testing.TB, u string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// promtool runs promtool with args (and stdin) and returns its output.
func promtool(t testing.TB, stdin []byte, dir string, args ...string) (string, error) {
	t.Helper()
	path := testenv.RequireTool(t, "promtool", "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The exposition after a workload that fills every group passes promtool's
// metric lint: names, units, _total suffixes, help on every metric.
func TestPromtoolCheckMetrics(t *testing.T) {
	f := newFixture(t, "", "")
	mixedWorkload(t, f.db, 0)
	insertOrders(t, f.db, 5, 150)
	f.flushAndPoll(t)
	addr := serveExporter(t, f.e)
	code, body := httpGet(t, "http://"+addr+MetricsPath)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, m := range []string{"queryreplay_spills_total", "queryreplay_page_splits_total", "queryreplay_waits_total", "queryreplay_page_reads_total", "queryreplay_top_query_info"} {
		if !bytes.Contains(body, []byte("\n"+m+"{")) {
			t.Errorf("/metrics has no %s series", m)
		}
	}
	out, err := promtool(t, body, "", "check", "metrics")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// The shipped rules parse, and their unit tests pass.
func TestPrometheusRules(t *testing.T) {
	if out, err := promtool(t, nil, rulesDir, "check", "rules", "queryreplay-rules.yml"); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if out, err := promtool(t, nil, rulesDir, "test", "rules", "queryreplay-rules.test.yml"); err != nil || !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	if out, err := promtool(t, nil, rulesDir, "check", "config", "prometheus.example.yml"); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// prometheusServer is a real Prometheus started by a test.
type prometheusServer struct{ base string }

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// startPrometheus runs Debian's prometheus on loopback with a generated
// configuration scraping the targets every second and loading the shipped rules.
func startPrometheus(t testing.TB, targets ...string) *prometheusServer {
	t.Helper()
	bin := testenv.RequireTool(t, "prometheus", "prometheus")
	dir := t.TempDir()
	rules, err := filepath.Abs(filepath.Join(rulesDir, "queryreplay-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: queryreplay
    static_configs:
      - targets: ['%s']
`, rules, strings.Join(targets, "', '"))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--enable-feature=exemplar-storage", "--log.level=warn")
	logs := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel() // kills exactly the process this test started
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	p := &prometheusServer{base: "http://" + addr}
	waitFor(t, 30*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// waitFor polls cond every 200 ms until it holds or limit passes. What
// these tests wait for happens on scrape, evaluation and probe intervals of
// a second or more, so a longer interval than testenv.WaitFor's spares
// Prometheus and the loaded machine hundreds of pointless queries.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant PromQL query and returns its vector.
func (p *prometheusServer) query(t testing.TB, q string) []promSample {
	t.Helper()
	code, body := httpGet(t, p.base+"/api/v1/query?query="+url.QueryEscape(q))
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || code != http.StatusOK || r.Status != "success" {
		t.Fatalf("query %s: %d %s %s", q, code, r.Error, body)
	}
	return r.Data.Result
}

func sampleValue(s promSample) float64 {
	var v float64
	fmt.Sscan(fmt.Sprint(s.Value[1]), &v)
	return v
}

// The path an on-call engineer takes, checked against a real Prometheus
// scraping one exporter with two servers, only one of which spills:
// it scrapes the exporter, PromQL returns exactly the spills the stand-in
// recorded, the shipped spill rule fires, the spill counter carries the
// query hash as an exemplar, and the dashboard's top-query join returns
// the statement to replay.
func TestPrometheusScrapesSpillsAndAlerts(t *testing.T) {
	// two servers behind one exporter: only standin spills
	run, quiet := startStandin(t), startStandin(t)
	cfg := testConfig(t, "global:\n  poll_interval: 250ms\n  grafana_url: https://grafana.example.com\ntargets:\n"+
		"  - name: standin\n    dsn_env: TEST_DSN_standin\n    session: {max_dispatch_latency: 1s}\n"+
		"  - name: quiet\n    dsn_env: TEST_DSN_quiet\n    session: {max_dispatch_latency: 1s}\n",
		map[string]string{"standin": run.DSN, "quiet": quiet.DSN})
	e := newTestExporter(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.Start(ctx)
	addr := serveExporter(t, e)
	waitFor(t, 30*time.Second, "exporter ready", func() bool {
		code, _ := httpGet(t, "http://"+addr+ReadyPath)
		return code == http.StatusOK
	})
	prom := startPrometheus(t, addr)
	const target = `target="standin",database="QueryReplayDemo"`
	waitFor(t, 30*time.Second, "the zero spill series scraped", func() bool {
		return len(prom.query(t, `queryreplay_spills_total{`+target+`,kind="sort"} == 0`)) == 1
	})
	if alerts := prom.query(t, `ALERTS{alertname="QueryReplayTempdbSpills"}`); len(alerts) != 0 {
		t.Fatalf("the spill alert is active before any spill: %v", alerts)
	}
	db := workloadDB(t, run.DSN)
	// the alert's threshold: 10 spills in 10 minutes
	for i := 0; i < 10; i++ {
		runSQL(t, db, scenarioSQL(t, "sort_spill"))
	}
	run.Server.FlushEventSessions()
	want := float64(run.Server.RecordedEvents(sessionOf(t, e, "standin"))["sort_warning"])
	if want != 10 {
		t.Fatalf("the stand-in recorded %v sort warnings for 10 sorts that spill", want)
	}
	waitFor(t, 30*time.Second, "PromQL to return the spill count", func() bool {
		r := prom.query(t, `sum(queryreplay_spills_total{`+target+`})`)
		return len(r) == 1 && sampleValue(r[0]) == want
	})
	waitFor(t, 30*time.Second, "the spill alert to fire", func() bool {
		r := prom.query(t, `ALERTS{alertname="QueryReplayTempdbSpills",alertstate="firing",`+target+`}`)
		return len(r) == 1 && r[0].Metric["severity"] == "warning" && r[0].Metric["instance"] != ""
	})
	if r := prom.query(t, `ALERTS{alertname="QueryReplayTempdbSpills"}`); len(r) != 1 {
		t.Errorf("the spill alert fired %d times for one spilling server: %v", len(r), r)
	}
	// the alert's annotations, as Prometheus rendered them. They are
	// rendered anew at every rule evaluation; the per-query recording rule
	// behind query_hashes counts a series that first appeared already at
	// 10 (all spills between two scrapes) in full, so the query is named
	// however the scrapes fell (with increase() it was not: the test
	// failed whenever all ten sorts ran between two scrapes).
	annotations := []string{`"query_hashes":"0x`, `"dashboard":"https://grafana.example.com/d/queryreplay-exporter-spills?var-target=standin\u0026var-database=QueryReplayDemo\u0026var-query_hash=0x`}
	var alertsBody []byte
	if !testenv.Poll(30*time.Second, func() bool {
		_, alertsBody = httpGet(t, prom.base+"/api/v1/alerts")
		return bytes.Contains(alertsBody, []byte(annotations[0])) && bytes.Contains(alertsBody, []byte(annotations[1]))
	}) {
		t.Errorf("the firing alert's annotations lack %q within 30 s: %s", annotations, alertsBody)
	}
	top := e.TopQueries("standin")[0].Queries
	if len(top) == 0 || top[0].Spills != 10 || !strings.HasPrefix(top[0].Statement, "SELECT l.OrderID") {
		t.Fatalf("top queries %+v", top)
	}
	waitFor(t, 30*time.Second, "the exemplar with the query hash", func() bool {
		end := time.Now()
		_, body := httpGet(t, prom.base+"/api/v1/query_exemplars?query="+url.QueryEscape("queryreplay_spills_total")+
			fmt.Sprintf("&start=%d&end=%d", end.Add(-5*time.Minute).Unix(), end.Unix()))
		return bytes.Contains(body, []byte(`"query_hash":"`+top[0].QueryHash+`"`))
	})
	joined := prom.query(t, `queryreplay_top_query_spills{target="standin"} * on (target, query_hash) group_left (database, statement) queryreplay_top_query_info`)
	if len(joined) == 0 || joined[0].Metric["statement"] != top[0].Statement || sampleValue(joined[0]) != 10 {
		t.Fatalf("the dashboard's top-query join returned %v", joined)
	}
	checkDashboardQueries(t, prom)
	checkTopQueriesWindow(t, prom, top[0].QueryHash, 10)
	// the Grafana-managed spill rule's query sees the spills too
	alerting, err := os.ReadFile("../../provisioning/alerting/queryreplay-spills.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`expr: (.+)`).FindStringSubmatch(string(alerting))
	if m == nil {
		t.Fatal("no expr in the Grafana alert rules")
	}
	// (the threshold expression, C, keeps the series above 0)
	for _, r := range prom.query(t, m[1]) {
		if spilled := r.Metric["database"] == "QueryReplayDemo" && r.Metric["target"] == "standin"; spilled != (sampleValue(r) > 0) {
			t.Errorf("the Grafana spill rule's query %s gives %v for %v", m[1], sampleValue(r), r.Metric)
		}
	}
}

// dashboardExprs returns every PromQL expression of the shipped dashboards,
// by dashboard file.
func dashboardExprs(t testing.TB) map[string][]string {
	t.Helper()
	paths, err := filepath.Glob("../../dashboards/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	out := map[string][]string{}
	var walk func(file string, v any)
	walk = func(file string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if e, ok := c.(string); ok && k == "expr" {
					out[file] = append(out[file], e)
				}
				walk(file, c)
			}
		case []any:
			for _, c := range x {
				walk(file, c)
			}
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		walk(filepath.Base(p), v)
	}
	return out
}

// topQueriesExpr is the spills dashboard's top-query table expression
// (the one that joins the statement).
func topQueriesExpr(t *testing.T) string {
	t.Helper()
	for _, e := range dashboardExprs(t)["exporter-spills.json"] {
		if strings.Contains(e, "queryreplay_top_query_info") {
			return e
		}
	}
	t.Fatal("no top-query table in the spills dashboard")
	return ""
}

// checkTopQueriesWindow evaluates the top-query table for two windows
// ($__range): one reaching back before the query's first spill shows all of
// its spills (a query new in the window is counted whole, not from its
// second sample), and one that starts after its last spill, once
// Prometheus has the final value that long, does not list it.
func checkTopQueriesWindow(t *testing.T, prom *prometheusServer, hash string, spills float64) {
	t.Helper()
	expr := topQueriesExpr(t)
	fill := func(window string) string {
		return strings.NewReplacer(`$target`, `standin`, `$database`, `.*`, `$query_hash`, `.*`, `$__range`, window).Replace(expr)
	}
	row := func(r []promSample) (float64, bool) {
		for _, s := range r {
			if s.Metric["query_hash"] == hash {
				return sampleValue(s), true
			}
		}
		return 0, false
	}
	if v, ok := row(prom.query(t, fill("1h"))); !ok || v != spills {
		t.Errorf("top queries over 1h: %s shows %v (listed %v), want its %v spills", hash, v, ok, spills)
	}
	waitFor(t, 30*time.Second, "the final spill count to be 3s old in Prometheus", func() bool {
		return len(prom.query(t, fmt.Sprintf(`queryreplay_top_query_spills{target="standin",query_hash=%q} offset 3s == %v`, hash, spills))) == 1
	})
	if v, ok := row(prom.query(t, fill("3s"))); ok {
		t.Errorf("top queries over the last 3s list %s with %v, although it last spilled before", hash, v)
	}
}

// checkDashboardQueries runs every dashboard expression, its variables
// filled in as Grafana would for "All", against the real Prometheus: each
// must parse and run, and the spill panels must see the spills.
func checkDashboardQueries(t *testing.T, prom *prometheusServer) {
	t.Helper()
	fill := strings.NewReplacer(`$target`, `.*`, `$database`, `.*`, `$query_hash`, `.*`, `$__rate_interval`, `1m`, `$__range`, `5m`)
	nonEmpty := 0
	for file, exprs := range dashboardExprs(t) {
		for _, e := range exprs {
			r := prom.query(t, fill.Replace(e))
			for _, s := range r {
				if s.Metric["target"] == "" {
					t.Errorf("%s: %s returns a series without target: %v", file, e, s.Metric)
				}
			}
			if len(r) > 0 {
				nonEmpty++
			} else if strings.Contains(file, "spills") && strings.Contains(e, "spills_total") && !strings.Contains(e, " offset ") {
				// (an offset query looks a day or a week back: nothing yet
				// in a Prometheus started by the test, but it must run)
				t.Errorf("%s: %s returns nothing after spills", file, e)
			}
		}
	}
	if nonEmpty < 10 {
		t.Errorf("only %d dashboard queries return data", nonEmpty)
	}
}

// The fleet shape the docs recommend first: one exporter per server, each
// naming its one target after the server's host and port, both scraped
// by one Prometheus job. Only one server spills: the alert fires once, for
// that exporter's instance and target, naming the query that spilled, and
// nothing is summed across the two servers.
func TestPrometheusOneExporterPerServer(t *testing.T) {
	servers := []*standin.Running{startStandin(t), startStandin(t)}
	var addrs, names []string
	for i, srv := range servers {
		cfg := testConfig(t, "global:\n  poll_interval: 250ms\n  grafana_url: https://grafana.example.com\ntargets:\n"+
			"  - dsn_env: TEST_DSN_s\n    session: {max_dispatch_latency: 1s}\n", map[string]string{"s": srv.DSN})
		e := newTestExporter(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		e.Start(ctx)
		addr := serveExporter(t, e)
		waitFor(t, 30*time.Second, fmt.Sprintf("exporter %d ready", i), func() bool {
			code, _ := httpGet(t, "http://"+addr+ReadyPath)
			return code == http.StatusOK
		})
		addrs, names = append(addrs, addr), append(names, e.targets[0].cfg.Name)
	}
	if names[0] == names[1] || names[0] == "default" {
		t.Fatalf("two servers' default target names: %q", names)
	}
	prom := startPrometheus(t, addrs...)
	waitFor(t, 30*time.Second, "both exporters' zero spill series", func() bool {
		return len(prom.query(t, `queryreplay_spills_total{database="QueryReplayDemo",kind="sort"} == 0`)) == 2
	})
	db := workloadDB(t, servers[0].DSN)
	for i := 0; i < 10; i++ {
		runSQL(t, db, scenarioSQL(t, "sort_spill"))
	}
	servers[0].Server.FlushEventSessions()
	waitFor(t, 60*time.Second, "the spill alert to fire with its query hash", func() bool {
		r := prom.query(t, `ALERTS{alertname="QueryReplayTempdbSpills",alertstate="firing"}`)
		if len(r) != 1 {
			return false
		}
		_, body := httpGet(t, prom.base+"/api/v1/alerts")
		return bytes.Contains(body, []byte(`"query_hashes":"0x`))
	})
	r := prom.query(t, `ALERTS{alertname="QueryReplayTempdbSpills"}`)
	if len(r) != 1 || r[0].Metric["instance"] != addrs[0] || r[0].Metric["target"] != names[0] {
		t.Errorf("the spill alert: %v; want one, for instance %s target %s", r, addrs[0], names[0])
	}
	// The alert can fire on the first spills; the last ones reach
	// Prometheus at a later poll and scrape, so wait for all ten.
	const sums = `sum by (instance, target) (queryreplay_spills_total{database="QueryReplayDemo"})`
	waitFor(t, 30*time.Second, "all ten spills scraped from the first server", func() bool {
		for _, s := range prom.query(t, sums) {
			if s.Metric["instance"] == addrs[0] && sampleValue(s) >= 10 {
				return true
			}
		}
		return false
	})
	for _, s := range prom.query(t, sums) {
		want := 0.0
		if s.Metric["instance"] == addrs[0] {
			want = 10
		}
		if sampleValue(s) != want {
			t.Errorf("spills of %v: %v, want %v", s.Metric, sampleValue(s), want)
		}
	}
}
