package exporter

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The group counters are the bulk of a scrape (up to the label limits ×
// metrics × targets series), so they bypass the Collector path — a
// prometheus.Metric per series, written to a dto and checked for
// consistency by the registry — and are written as dto families directly,
// with each series' label pairs built once when the series is made. The
// registry gathers the rest (the exporter's own metrics, Go and process
// metrics); both are merged by name. This keeps a scrape of 10,000 series
// within the 50 ms (BenchmarkScrape).

// gatherer returns the registry and the group families as one Gatherer.
func (e *Exporter) gatherer() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		fams, err := e.reg.Gather()
		// a group with no series yet has no family: an empty family is
		// invalid in the exposition format (promhttp would log it as an
		// error on every scrape)
		for _, f := range e.gatherGroups() {
			if len(f.GetMetric()) > 0 {
				fams = append(fams, f)
			}
		}
		slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
		return fams, err
	})
}

// gatherGroups writes every group metric of every target as a family.
func (e *Exporter) gatherGroups() []*dto.MetricFamily {
	var out []*dto.MetricFamily
	for _, def := range groupDefs {
		fams := make([]*dto.MetricFamily, len(def.metrics))
		for i := range def.metrics {
			m := &def.metrics[i]
			fams[i] = &dto.MetricFamily{Name: &m.fqName, Help: &m.help, Type: dto.MetricType_COUNTER.Enum()}
		}
		targets, _, _ := e.current()
		for _, t := range targets {
			t.mu.Lock()
			t.groups[def.name].appendTo(fams, t.cfg.Name)
			t.mu.Unlock()
		}
		out = append(out, fams...)
	}
	return out
}

// appendTo adds the group's series to fams (one family per metric of the
// group), in a few allocations per family.
func (g *groupStore) appendTo(fams []*dto.MetricFamily, target string) {
	n := g.len()
	all := append(g.lru.Values(), otherSeries(g)...)
	for i := range g.def.metrics {
		withEx := g.def.metrics[i].exemplar
		metrics := make([]dto.Metric, n)
		counters := make([]dto.Counter, n)
		values := make([]float64, n)
		ptrs := make([]*dto.Metric, n)
		for j, s := range all {
			values[j] = s.values[i]
			counters[j].Value = &values[j]
			if withEx && s.ex[i].set {
				counters[j].Exemplar = s.ex[i].dto()
			}
			metrics[j].Label = s.labelPairs(g.def, target)
			metrics[j].Counter = &counters[j]
			ptrs[j] = &metrics[j]
		}
		fams[i].Metric = append(fams[i].Metric, ptrs...)
	}
}

func otherSeries(g *groupStore) []*series {
	out := make([]*series, 0, len(g.other))
	for _, s := range g.other {
		out = append(out, s)
	}
	return out
}

// labelPairs returns the series' label pairs, target first then the
// group's labels, sorted by name; built once per series and target.
func (s *series) labelPairs(def *groupDef, target string) []*dto.LabelPair {
	if s.pairs != nil && s.pairsTarget == target {
		return s.pairs
	}
	names := append([]string{"target"}, def.labels...)
	vals := append([]string{target}, s.labels...)
	pairs := make([]*dto.LabelPair, len(names))
	for i := range names {
		pairs[i] = &dto.LabelPair{Name: &names[i], Value: &vals[i]}
	}
	slices.SortFunc(pairs, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	s.pairs, s.pairsTarget = pairs, target
	return pairs
}

var exemplarLabel = "query_hash"

func (e exemplar) dto() *dto.Exemplar {
	v := 1.0
	h := formatQueryHash(e.queryHash)
	return &dto.Exemplar{
		Label:     []*dto.LabelPair{{Name: &exemplarLabel, Value: &h}},
		Value:     &v,
		Timestamp: timestamppb.New(e.at),
	}
}
