package exporter

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// A scrape of an exporter whose targets have not polled yet (every group
// empty) serves every non-empty family and logs nothing at ERROR: empty
// families are left out, not reported.
func TestEmptyFamiliesAreOmittedNotLogged(t *testing.T) {
	var logs bytes.Buffer
	cfg, err := ConfigFromDSN("sqlserver://u@127.0.0.1:1?dial+timeout=1", "idle")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.HandlerWith(HandlerOptions{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{"text/plain", "application/openmetrics-text; version=1.0.0"} {
		req := httptest.NewRequest(http.MethodGet, MetricsPath, nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", accept, rec.Code)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a scrape logged errors:\n%s", logs.String())
	}
	fams, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if len(f.GetMetric()) == 0 {
			t.Errorf("family %s has no metrics", f.GetName())
		}
	}
}

// The exporter publishes its build, its handler's own metrics, its links
// for the alerts, at the metrics path it is given; the landing page links
// only to pages it serves (no pprof).
func TestHandlerMetricsBuildInfoLinksAndPath(t *testing.T) {
	cfg, err := ParseConfig([]byte("global:\n  grafana_url: https://grafana.example.com/\n  runbook_url: https://wiki.example.com/qr\ntargets:\n  - name: a\n    dsn_env: A\n"),
		func(string) (string, bool) { return "sqlserver://u@127.0.0.1:1?dial+timeout=1", true })
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.HandlerWith(HandlerOptions{Version: "1.2.3", MetricsPath: "/custom/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	get("/custom/metrics")
	code, body := get("/custom/metrics")
	if code != http.StatusOK {
		t.Fatalf("/custom/metrics: %d", code)
	}
	for _, want := range []string{
		`queryreplay_build_info{`, `version="1.2.3"`,
		`queryreplay_exporter_links_info{grafana_url="https://grafana.example.com",runbook_url="https://wiki.example.com/qr"} 1`,
		`promhttp_metric_handler_requests_total{code="200"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	if code, _ := get(MetricsPath); code == http.StatusOK {
		t.Errorf("%s still serves metrics when the path is /custom/metrics", MetricsPath)
	}
	_, landing := get("/")
	for _, m := range regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(landing, -1) {
		link := m[1]
		if strings.HasPrefix(link, "http") || strings.HasPrefix(link, "#") {
			continue
		}
		if !strings.HasPrefix(link, "/") {
			link = "/" + link
		}
		if code, _ := get(link); code != http.StatusOK && link != ReadyPath { // 503 until the first poll
			t.Errorf("the landing page links to %s, which answers %d", link, code)
		}
	}
	if !strings.Contains(landing, "/custom/metrics") {
		t.Error("the landing page does not link to the metrics path")
	}
}
