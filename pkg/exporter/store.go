package exporter

import (
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	dto "github.com/prometheus/client_model/go"
)

// series is one label set of a group: a value per metric of the group and,
// for metrics with exemplars, the latest exemplar.
type series struct {
	labels []string
	values []float64
	ex     []exemplar
	// pairs caches the label pairs of the exposition (gather.go).
	pairs       []*dto.LabelPair
	pairsTarget string
}

type exemplar struct {
	queryHash uint64
	at        time.Time
	set       bool
}

// groupStore holds a group's series for one target. At most limit label
// sets are kept in an LRU; the least recently updated one is evicted when a
// new one arrives and its values are added to the group's "other" series
// (one per combination of the kept labels), so every counter's total over
// all series only grows. folds counts evictions. Not safe for concurrent
// use: the target's lock guards it.
type groupStore struct {
	def   *groupDef
	keep  []bool // per label: survives folding
	lru   *simplelru.LRU[string, *series]
	other map[string]*series
	folds uint64
	// folded remembers the label sets folded into other, so that they
	// stay there: a folded set that came back as a series of its own would
	// start lower than it ended (3, then 1), which rate() and increase()
	// read as a counter reset. Bounded (foldMemorySize); a set
	// forgotten past it can come back, long after its series went stale.
	folded *simplelru.LRU[string, struct{}]
}

// foldMemory is how many folded label sets a group remembers, per label of
// its limit, and at least minFoldMemory.
const (
	foldMemory    = 4
	minFoldMemory = 256
)

func foldMemorySize(limit int) int { return max(foldMemory*max(limit, 1), minFoldMemory) }

func newGroupStore(def *groupDef, limit int) *groupStore {
	g := &groupStore{def: def, other: map[string]*series{}}
	g.keep = make([]bool, len(def.labels))
	for i, l := range def.labels {
		g.keep[i] = slices.Contains(def.keep, l)
	}
	// NewLRU fails only for a size below 1, which config validation rules out.
	g.lru, _ = simplelru.NewLRU[string, *series](max(limit, 1), g.fold)
	g.folded, _ = simplelru.NewLRU[string, struct{}](foldMemorySize(limit), nil)
	return g
}

// resize changes the label limit (a reload); label sets past the new
// limit fold into other, so no count is lost.
func (g *groupStore) resize(limit int) {
	g.lru.Resize(max(limit, 1))
	g.folded.Resize(foldMemorySize(limit))
}

// add adds values (one per metric of the group, in order) to the series of
// labels; ex, when set, becomes the exemplar of the metrics that carry one.
// labels is copied only when a new series is made.
func (g *groupStore) add(labels []string, values []float64, ex exemplar) {
	for i, l := range labels {
		if !g.keep[i] && l == labelOther {
			// a real value spelled "other" (a database named so) would
			// collide with the fold series: it is counted there.
			g.addOther(labels, values, ex)
			return
		}
	}
	k := g.keyOf(labels)
	if g.folded.Contains(k) {
		g.addOther(labels, values, ex)
		return
	}
	s, ok := g.lru.Get(k)
	if !ok {
		s = g.newSeries(labels)
		g.lru.Add(k, s)
	}
	s.accumulate(values, ex)
}

// keyOf joins the label values with 0xff, a byte no UTF-8 text contains.
// ensure creates the series of labels at zero when it does not exist, without
// touching the recency of an existing one. Counters whose label sets are
// known in advance start at zero, so that their first increment shows in
// rate() and increase() (a series first seen at 1 has no increase).
func (g *groupStore) ensure(labels []string) {
	if k := g.keyOf(labels); g.lru.Contains(k) || g.folded.Contains(k) {
		return
	}
	g.add(labels, make([]float64, len(g.def.metrics)), exemplar{})
}

func (g *groupStore) keyOf(labels []string) string {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(l)
		b.WriteByte(0xff)
	}
	return b.String()
}

func (g *groupStore) newSeries(labels []string) *series {
	n := len(g.def.metrics)
	return &series{labels: slices.Clone(labels), values: make([]float64, n), ex: make([]exemplar, n)}
}

func (s *series) accumulate(values []float64, ex exemplar) {
	for i, v := range values {
		s.values[i] += v
		if ex.set && (!s.ex[i].set || !ex.at.Before(s.ex[i].at)) {
			s.ex[i] = ex
		}
	}
}

// fold is the LRU's eviction callback.
func (g *groupStore) fold(k string, s *series) {
	g.folds++
	g.folded.Add(k, struct{}{})
	var latest exemplar
	for _, e := range s.ex {
		if e.set && (!latest.set || e.at.After(latest.at)) {
			latest = e
		}
	}
	g.addOther(s.labels, s.values, latest)
}

func (g *groupStore) addOther(labels []string, values []float64, ex exemplar) {
	folded := make([]string, len(labels))
	for i, l := range labels {
		folded[i] = labelOther
		if g.keep[i] {
			folded[i] = l
		}
	}
	k := g.keyOf(folded)
	o, ok := g.other[k]
	if !ok {
		o = g.newSeries(folded)
		g.other[k] = o
	}
	o.accumulate(values, ex)
}

// len is the number of series, the other series included.
func (g *groupStore) len() int { return g.lru.Len() + len(g.other) }

// formatQueryHash writes a query hash as SQL Server shows binary(8):
// 0x and 16 upper-case hex digits.
func formatQueryHash(h uint64) string {
	const digits = "0123456789ABCDEF"
	var b [18]byte
	b[0], b[1] = '0', 'x'
	for i := 17; i >= 2; i-- {
		b[i] = digits[h&0xf]
		h >>= 4
	}
	return string(b[:])
}
