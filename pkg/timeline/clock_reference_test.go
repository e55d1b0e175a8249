package timeline

import (
	"cmp"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// refClock is the clock as it was before issue 26's performance work —
// plain passes over whole records, order and sortedness checked where
// they are used — kept as the reference the fast clock must agree with.
func refClock(ws []wide) (out []wide, s Summary, zeroNs int64, notes []string) {
	withSeq := 0
	for i := range ws {
		if ws[i].hasSeq {
			withSeq++
		}
	}
	same := func(x, y *wide) bool {
		a, b := *x, *y
		a.x, b.x = 0, 0
		return a == b
	}
	s.Ordering = "capture"
	s.WithoutSequence = len(ws) - withSeq
	var gaps []gapAt
	switch {
	case withSeq > 0 && withSeq == len(ws):
		s.Ordering = "event_sequence"
		slices.SortStableFunc(ws, func(x, y wide) int { return cmp.Compare(x.seq, y.seq) })
		kept := ws[:0:0]
		for i := range ws {
			if n := len(kept); n > 0 && ws[i].seq == kept[n-1].seq {
				if same(&ws[i], &kept[n-1]) {
					s.Duplicates++
					continue
				}
				s.SequenceClashes++
			}
			if n := len(kept); n > 0 {
				if d := ws[i].seq - kept[n-1].seq; d > 1 {
					s.Lost += d - 1
					if len(gaps) < MaxGaps {
						gaps = append(gaps, gapAt{n - 1, n})
					} else {
						s.GapsTruncated = true
					}
				}
			}
			kept = append(kept, ws[i])
		}
		ws = kept
	case withSeq > 0:
		var idx []int
		for i := range ws {
			if ws[i].hasSeq {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(ws[x].seq, ws[y].seq) })
		drop := map[int]bool{}
		for k := 1; k < len(idx); k++ {
			if ws[idx[k-1]].seq != ws[idx[k]].seq {
				continue
			}
			if same(&ws[idx[k-1]], &ws[idx[k]]) {
				drop[idx[k]] = true
				s.Duplicates++
			} else {
				s.SequenceClashes++
			}
		}
		var kept []wide
		for i := range ws {
			if !drop[i] {
				kept = append(kept, ws[i])
			}
		}
		ws = kept
		notes = append(notes, "capture")
	}
	const ms = int64(time.Millisecond)
	for i := range ws {
		ws[i].t = floorDiv(ws[i].tsNs, 1000)
	}
	type bucket struct {
		n, next int64
		precise bool
	}
	buckets := map[int64]*bucket{}
	for i := range ws {
		k := floorDiv(ws[i].tsNs, ms)
		if buckets[k] == nil {
			buckets[k] = &bucket{}
		}
		buckets[k].n++
		buckets[k].precise = buckets[k].precise || ws[i].tsNs%ms != 0
	}
	for i := range ws {
		bk := buckets[floorDiv(ws[i].tsNs, ms)]
		if bk.n < 2 || bk.precise {
			continue
		}
		if bk.next == 0 {
			s.SpreadBuckets++
		}
		ws[i].t += 1000 * bk.next / bk.n
		bk.next++
	}
	s.Spread = s.SpreadBuckets > 0
	zero, found := int64(math.MaxInt64), false
	for i := range ws {
		if ws[i].kind == kBatchStarting {
			zero, zeroNs, found = ws[i].t, ws[i].tsNs, true
			break
		}
	}
	if !found {
		for i := range ws {
			if ws[i].t < zero {
				zero, zeroNs = ws[i].t, ws[i].tsNs
			}
		}
		if len(ws) > 0 {
			notes = append(notes, "no batch start")
		}
	}
	for i := range ws {
		ws[i].t -= zero
	}
	if s.Duplicates > 0 {
		notes = append(notes, "duplicates")
	}
	if s.SequenceClashes > 0 {
		notes = append(notes, "clashes")
	}
	for _, g := range gaps {
		s.Gaps = append(s.Gaps, Gap{After: ws[g.before].seq, Before: ws[g.after].seq,
			Missing: ws[g.after].seq - ws[g.before].seq - 1, Start: ws[g.before].t, End: ws[g.after].t})
	}
	return ws, s, zeroNs, notes
}

// randomRecords makes a stream with the clock's troubles in random
// measure: sequences missing, repeated (same event or not), shuffled;
// timestamps whole or sub-millisecond, in or out of order; a batch start
// or none; records with extra fields.
func randomRecords(r *rand.Rand) []wide {
	n := r.IntN(200)
	seqMode, tsMode := r.IntN(4), r.IntN(3)
	base := int64(1_800_000_000) * int64(time.Second)
	var ws []wide
	seq := uint64(1)
	ts := base
	for i := 0; i < n; i++ {
		w := wide{rec: rec{kind: kind(r.IntN(int(kStatementCompleted) + 1)), a: uint64(r.IntN(3))}}
		if w.kind == kBatchStarting && r.IntN(3) > 0 {
			w.kind = kRead
		}
		if r.IntN(4) == 0 {
			w.d, w.s2 = uint64(r.IntN(2)+1), uint32(r.IntN(2))
		}
		switch seqMode {
		case 0, 1:
			w.seq, w.hasSeq = seq, true
		case 2:
			w.seq, w.hasSeq = seq, r.IntN(3) > 0
		}
		seq += uint64(1 + r.IntN(2)*r.IntN(3))
		switch tsMode {
		case 0:
			ts += int64(r.IntN(3)) * int64(time.Millisecond) / 2 * 2
		case 1:
			ts += int64(r.IntN(1500)) * 1000
		default:
			ts = base + int64(r.IntN(20))*int64(time.Millisecond) + int64(r.IntN(2))*int64(r.IntN(999))*1000
		}
		w.tsNs = ts
		ws = append(ws, w)
		if r.IntN(10) == 0 && len(ws) > 0 { // a repeat, maybe changed
			d := ws[r.IntN(len(ws))]
			if r.IntN(2) == 0 {
				d.a++
			}
			ws = append(ws, d)
		}
	}
	if seqMode == 1 {
		r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	}
	return ws
}

// TestClockAgreesWithReference: on thousands of random streams the clock
// orders, drops, counts and times the records exactly as the reference
// does, and finds the extent the whole records span.
func TestClockAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 4))
	for iter := range 1000 {
		ws := randomRecords(r)
		b := &Builder{}
		for i := range ws {
			w := ws[i]
			b.addExtra(&w)
			b.push(&w.rec)
		}
		want, wantS, wantZero, wantNotes := refClock(slices.Clone(ws))
		tr := &Trace{}
		gotZero := b.clock(tr)
		got := make([]wide, len(b.recs))
		for i := range b.recs {
			got[i] = b.widen(&b.recs[i])
			got[i].x = 0
		}
		for i := range want {
			want[i].x = 0
		}
		gotS := tr.Summary
		gotS.Notes = nil
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("stream %d: records differ\n got %+v\nwant %+v", iter, got, want)
		}
		if !reflect.DeepEqual(gotS, wantS) {
			t.Fatalf("stream %d: summary\n got %+v\nwant %+v", iter, gotS, wantS)
		}
		if len(want) > 0 && gotZero != wantZero {
			t.Fatalf("stream %d: time zero %d, want %d", iter, gotZero, wantZero)
		}
		if len(b.notes) != len(wantNotes) {
			t.Fatalf("stream %d: notes %q, reference %q", iter, b.notes, wantNotes)
		}
		start, end := int64(0), int64(0)
		for _, w := range want {
			start, end = min(start, w.t), max(end, w.t)
		}
		if b.start != start || b.end != end {
			t.Fatalf("stream %d: extent %d..%d, want %d..%d", iter, b.start, b.end, start, end)
		}
	}
}
