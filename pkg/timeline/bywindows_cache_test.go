package timeline

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// TestByWindowsCacheAgrees: byWindows' cached answers equal a fresh
// decision for every time, in order or not, for random candidate windows
// (overlapping, nested, equal, missing; acted or windowed; placed or not).
func TestByWindowsCacheAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 7))
	for iter := range 2000 {
		m := newMatcher(nil)
		n := 1 + r.IntN(5)
		set := &candSet{}
		for i := range n {
			o := &opInfo{op: &showplan.Operator{NodeID: i, Depth: r.IntN(3)}, order: i}
			start := int64(r.IntN(100))
			w := Window{start, start + int64(r.IntN(60))}
			switch r.IntN(4) {
			case 0: // no window
			case 1:
				o.hasAct, o.act, o.actPlaced = true, w, r.IntN(2) == 0
			default:
				o.hasWindow, o.win = true, w
			}
			set.cands = append(set.cands, candidate{o, Confidence(1 + r.IntN(3))})
			set.ids = append(set.ids, NodeID(i))
		}
		fresh := &candSet{cands: set.cands, ids: set.ids}
		sorted := r.IntN(2) == 0
		tm := int64(-10)
		for range 200 {
			if sorted {
				tm += int64(r.IntN(3))
			} else {
				tm = int64(r.IntN(180)) - 10
			}
			got := m.byWindows(tm, set)
			want, _ := m.decideByWindows(tm, fresh)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("set %d, t=%d: cached %+v, fresh %+v", iter, tm, got, want)
			}
		}
	}
}
