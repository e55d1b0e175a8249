package exporter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func collectGroup(t *testing.T, g *groupStore) map[string][]float64 {
	t.Helper()
	fams := make([]*dto.MetricFamily, len(g.def.metrics))
	for i := range fams {
		fams[i] = &dto.MetricFamily{}
	}
	g.appendTo(fams, "t")
	out := map[string][]float64{}
	for _, pb := range fams[0].Metric {
		var key []string
		for _, l := range pb.GetLabel() {
			if l.GetName() != "target" {
				key = append(key, l.GetName()+"="+l.GetValue())
			}
		}
		k := strings.Join(key, ",")
		out[k] = append(out[k], pb.GetCounter().GetValue())
	}
	return out
}

// Past the limit, the least recently updated label set folds into the
// "other" series of its kept labels; totals are preserved and folds counted.
func TestGroupStoreFoldsIntoOther(t *testing.T) {
	g := newGroupStore(groupByName(mgWaits), 3)
	add := func(db, wt, cat string, n float64) { g.add([]string{db, wt, cat}, []float64{n, n / 10, 0}, exemplar{}) }
	add("A", "LCK_M_X", "Lock", 1)
	add("A", "LCK_M_S", "Lock", 2)
	add("A", "PAGEIOLATCH_SH", "Buffer IO", 4)
	add("A", "LCK_M_X", "Lock", 8) // touches LCK_M_X: LCK_M_S is now the oldest
	add("B", "LCK_M_U", "Lock", 16)
	add("B", "WRITELOG", "Tran Log IO", 32) // evicts PAGEIOLATCH_SH
	got := collectGroup(t, g)
	want := map[string]float64{
		"database=A,wait_category=Lock,wait_type=LCK_M_X":         9,
		"database=B,wait_category=Lock,wait_type=LCK_M_U":         16,
		"database=B,wait_category=Tran Log IO,wait_type=WRITELOG": 32,
		"database=other,wait_category=Lock,wait_type=other":       2,
		"database=other,wait_category=Buffer IO,wait_type=other":  4,
	}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] == nil || got[k][0] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	if g.folds != 2 || g.len() != 5 {
		t.Errorf("folds %d, len %d", g.folds, g.len())
	}
	// a real label value "other" goes straight to the fold series
	add("other", "LCK_M_S", "Lock", 100)
	if got := collectGroup(t, g)["database=other,wait_category=Lock,wait_type=other"]; got[0] != 102 {
		t.Errorf("a database named other: %v", got)
	}
}

// Under churn the store never holds more than limit + the other series, and
// every counter's total keeps growing by exactly what was added.
func TestGroupStoreBoundedUnderChurn(t *testing.T) {
	g := newGroupStore(groupByName(mgSpills), 50)
	total := 0.0
	for i := 0; i < 10000; i++ {
		g.add([]string{fmt.Sprintf("db%d", i), []string{"sort", "hash", "exchange"}[i%3]}, []float64{1, 2, 3},
			exemplar{queryHash: uint64(i), at: time.Unix(int64(i), 0), set: true})
		total++
		if g.len() > 50+3 {
			t.Fatalf("after %d adds the store holds %d series", i, g.len())
		}
	}
	var sum float64
	for _, v := range collectGroup(t, g) {
		sum += v[0]
	}
	if sum != total {
		t.Errorf("spills add up to %v, want %v", sum, total)
	}
}

// The spill series carry the latest query hash as an exemplar.
func TestExemplarIsTheLatest(t *testing.T) {
	g := newGroupStore(groupByName(mgSpills), 10)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	g.add([]string{"A", "sort"}, []float64{1, 0, 0}, exemplar{queryHash: 0xABCDEF, at: at, set: true})
	g.add([]string{"A", "sort"}, []float64{1, 0, 0}, exemplar{queryHash: 0x1, at: at.Add(-time.Hour), set: true})
	fams := []*dto.MetricFamily{{}, {}, {}}
	g.appendTo(fams, "t")
	pb := fams[0].Metric[0]
	ex := pb.GetCounter().GetExemplar()
	if ex == nil || ex.GetLabel()[0].GetValue() != "0x0000000000ABCDEF" || !ex.GetTimestamp().AsTime().Equal(at) {
		t.Fatalf("exemplar %v", ex)
	}
}

func TestFormatQueryHash(t *testing.T) {
	if got := formatQueryHash(0x15B7225A490C1528); got != "0x15B7225A490C1528" {
		t.Error(got)
	}
	if got := formatQueryHash(1); got != "0x0000000000000001" {
		t.Error(got)
	}
}
