package exporter

import (
	"fmt"
	"testing"
	"time"
)

// mergeWaitsNow merges into t one batch with n waits of each wait type
// (keys from 1000 up, named W<key>) in database 5, as a poll would.
func mergeWaitsNow(t *target, n float64, types ...uint64) {
	b := newBatch()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cat.databases[5] = "Sales"
	for _, k := range types {
		b.waits[waitKey{5, k}] = &waitAcc{count: n, durUs: n * 1000}
		b.texts[textKey{textWait, k}] = fmt.Sprintf("W%d", k)
	}
	t.merge(b, &readStats{}, time.Now())
}

// Label folding under a real Prometheus: the waits group's label limit is
// reached mid-run, so wait types are evicted into the other series while
// Prometheus scrapes every second. Over the whole run no series of
// queryreplay_waits_total — the folded ones, the ones that stay, other —
// shows a reset to rate(), increase() or resets(), and the series still add
// up to every wait merged.
func TestFoldingUnderPrometheusRate(t *testing.T) {
	run := startStandin(t)
	cfg := testConfig(t, "global:\n  poll_interval: 1h\n  poll_timeout: 30s\n  label_limits: {waits: 2}\ntargets:\n  - name: standin\n    dsn_env: TEST_DSN_standin\n",
		map[string]string{"standin": run.DSN})
	e := newTestExporter(t, cfg)
	pollOK(t, e)
	prom := startPrometheus(t, serveExporter(t, e))
	tg := e.targets[0]
	base := sum(gather(t, e), "queryreplay_waits_total", nil)
	total := base
	const labels = `target="standin"` // other folds database too
	const sel = `queryreplay_waits_total{` + labels + `}`
	scraped := func(want float64) {
		t.Helper()
		waitFor(t, 30*time.Second, fmt.Sprintf("Prometheus to scrape %v waits", want), func() bool {
			got := prom.query(t, `sum(queryreplay_waits_total{target="standin"})`)
			return len(got) == 1 && sampleValue(got[0]) == want
		})
	}
	// before the limit: two wait types, scraped twice; their counts are
	// well above what a returning type brings, so a folded type that came
	// back as a series of its own would start lower (a reset)
	for round := range 2 {
		mergeWaitsNow(tg, float64(5+round), 1000, 1001)
		total += 2 * float64(5+round)
		scraped(total)
	}
	// past it: new types arrive and old ones come back, each round
	// scraped, so Prometheus sees every fold as it happens
	rounds := [][]uint64{{1002}, {1000, 1003}, {1001, 1004, 1005}, {1000, 1001, 1002}, {1006}}
	for _, types := range rounds {
		mergeWaitsNow(tg, 3, types...)
		total += 3 * float64(len(types))
		scraped(total)
	}
	if folds := prom.query(t, `sum(queryreplay_exporter_label_folds_total{target="standin",group="waits"})`); len(folds) != 1 || sampleValue(folds[0]) == 0 {
		t.Fatalf("no fold happened: %v", folds)
	}
	if other := prom.query(t, `queryreplay_waits_total{`+labels+`,wait_type="other"}`); len(other) == 0 {
		t.Fatal("no other series: nothing was folded into it")
	}
	for _, q := range []string{
		`resets(` + sel + `[10m]) > 0`,
		`rate(` + sel + `[10m]) < 0`,
		`increase(` + sel + `[10m]) < 0`,
	} {
		if bad := prom.query(t, q); len(bad) != 0 {
			t.Errorf("%s: %v", q, bad)
		}
	}
	// every series only grew, sample by sample
	for _, s := range prom.query(t, `min_over_time((`+sel+` - `+sel+` offset 1s)[10m:1s]) < 0`) {
		t.Errorf("series %v went down", s.Metric)
	}
	if got := prom.query(t, `sum(queryreplay_waits_total{target="standin"})`); len(got) != 1 || sampleValue(got[0]) != total {
		t.Errorf("the series add up to %v, %v waits were merged", got, total-base)
	}
}
