package exporter

import (
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// histogram is a fixed-bucket histogram published as a constant metric, so
// each target keeps its own without a registered collector per target.
type histogram struct {
	bounds []float64
	counts []uint64 // per bound, not cumulative
	count  uint64
	sum    float64
}

var pollBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
}

func (h *histogram) observe(v float64) {
	h.count++
	h.sum += v
	if i := sort.SearchFloat64s(h.bounds, v); i < len(h.bounds) {
		h.counts[i]++
	}
}

func (h *histogram) metric(desc *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(desc, h.count, h.sum, buckets, labels...)
}

// collector publishes the targets' health, the exporter's own counters and
// the probes (the group counters are gathered directly, gather.go). It
// holds no values of its own: each Collect reads the targets under their
// locks.
type collector struct{ e *Exporter }

// Describe sends every descriptor the collector can produce.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descLastSuccess, descDecoded, descMalformed, descLost, descDuplicate,
		descXEDropped, descSessionStarts, descPollErrors, descPollDuration, descFolds, descSeries,
		descTopInfo, descTopSpills, descTopReads, descTopLastSeen, descLinks} {
		ch <- d
	}
	probeDescribe(ch)
}

// Collect sends every target's metrics.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	targets, probes, cfg := c.e.current()
	g := cfg.Global
	ch <- prometheus.MustNewConstMetric(descLinks, prometheus.GaugeValue, 1, strings.TrimRight(g.GrafanaURL, "/"), g.RunbookURL)
	for _, t := range targets {
		t.collect(ch)
	}
	for _, p := range probes {
		p.collect(ch)
	}
}

func (t *target) collect(ch chan<- prometheus.Metric) {
	t.mu.Lock()
	defer t.mu.Unlock()
	name := t.cfg.Name
	gauge := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, l...)...)
	}
	counter := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{name}, l...)...)
	}
	up := 0.0
	if t.st.up {
		up = 1
	}
	gauge(descUp, up)
	last := 0.0
	if !t.st.lastSuccess.IsZero() {
		last = float64(t.st.lastSuccess.UnixNano()) / 1e9
	}
	gauge(descLastSuccess, last)
	for ev, n := range t.st.decoded {
		counter(descDecoded, float64(n), ev)
	}
	counter(descMalformed, float64(t.st.malformed))
	counter(descLost, float64(t.st.lost))
	counter(descDuplicate, float64(t.st.duplicates))
	counter(descXEDropped, float64(t.st.xeDropped))
	for _, r := range []string{"created", "started"} {
		counter(descSessionStarts, float64(t.st.restarts[r]), r)
	}
	for _, s := range []string{stepConnect, stepSession, stepRead, stepNames} {
		counter(descPollErrors, float64(t.st.pollErrors[s]), s)
	}
	ch <- t.st.poll.metric(descPollDuration, name)
	for _, def := range groupDefs {
		g := t.groups[def.name]
		counter(descFolds, float64(g.folds), def.name)
		gauge(descSeries, float64(g.len()), def.name)
	}
	for _, q := range t.top.top() {
		h := formatQueryHash(q.QueryHash)
		// every top query, with or without its text: the replay link
		// carries the hash, which the datasource looks up itself
		gauge(descTopInfo, 1, h, q.Database, q.Statement, t.cfg.GrafanaDatasource)
		gauge(descTopSpills, float64(q.Spills), h)
		gauge(descTopReads, float64(q.LogicalReads), h)
		gauge(descTopLastSeen, float64(q.LastSeen.UnixNano())/1e9, h)
	}
}
