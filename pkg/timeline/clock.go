package timeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// clock orders the records, drops duplicates, finds sequence gaps, spreads
// coincident millisecond timestamps and sets every r.t in µs from time zero,
// which it returns as Unix ns. It may shorten b.recs.
func (b *Builder) clock(tr *Trace) int64 {
	withSeq := 0
	for i := range b.recs {
		if b.recs[i].hasSeq {
			withSeq++
		}
	}
	s := &tr.Summary
	s.Ordering = "capture"
	s.WithoutSequence = len(b.recs) - withSeq
	var gaps []gapAt
	switch {
	case withSeq > 0 && withSeq == len(b.recs):
		s.Ordering = "event_sequence"
		gaps = b.orderBySequence(s)
	case withSeq > 0:
		b.dropDuplicatesInCaptureOrder(s)
		b.note(fmt.Sprintf("%d of %d events carry no event_sequence: ordered as captured; lost events cannot be counted",
			s.WithoutSequence, len(b.recs)))
	}
	recs := b.recs
	for i := range recs {
		recs[i].t = floorDiv(recs[i].tsNs, 1000)
	}
	s.SpreadBuckets = spread(recs)
	s.Spread = s.SpreadBuckets > 0

	zero, zeroNs, found := int64(math.MaxInt64), int64(0), false
	for i := range recs {
		if recs[i].kind == kBatchStarting {
			zero, zeroNs, found = recs[i].t, recs[i].tsNs, true
			break
		}
	}
	if !found {
		for i := range recs {
			if recs[i].t < zero {
				zero, zeroNs = recs[i].t, recs[i].tsNs
			}
		}
		if len(recs) > 0 {
			b.note("no sql_batch_starting: time zero is the earliest event")
		}
	}
	for i := range recs {
		recs[i].t -= zero
	}
	for _, g := range gaps {
		s.Gaps = append(s.Gaps, Gap{After: recs[g.before].seq, Before: recs[g.after].seq,
			Missing: recs[g.after].seq - recs[g.before].seq - 1, Start: recs[g.before].t, End: recs[g.after].t})
	}
	if s.Duplicates > 0 {
		b.note(fmt.Sprintf("%d duplicate event(s) (an event_sequence seen twice with the same content) were counted once", s.Duplicates))
	}
	if s.SequenceClashes > 0 {
		b.note(fmt.Sprintf("%d event(s) share an event_sequence with a different event: events of more than one session?", s.SequenceClashes))
	}
	tr.Summary.Notes = b.notes
	return zeroNs
}

// gapAt is a gap between recs[before] and recs[after] (indices in order).
type gapAt struct{ before, after int }

// orderBySequence sorts the records by event_sequence, drops repeats of one
// event, counts lost events and returns where the gaps are.
func (b *Builder) orderBySequence(s *Summary) []gapAt {
	bySeq := func(x, y rec) int { return cmp.Compare(x.seq, y.seq) }
	if !slices.IsSortedFunc(b.recs, bySeq) {
		slices.SortStableFunc(b.recs, bySeq)
	}
	recs := b.recs
	out := recs[:0]
	var gaps []gapAt
	for i := range recs {
		if n := len(out); n > 0 && recs[i].seq == out[n-1].seq {
			if sameEvent(&recs[i], &out[n-1]) {
				s.Duplicates++
				continue
			}
			s.SequenceClashes++
		}
		if n := len(out); n > 0 {
			if d := recs[i].seq - out[n-1].seq; d > 1 {
				s.Lost += d - 1
				if len(gaps) < MaxGaps {
					gaps = append(gaps, gapAt{n - 1, n})
				} else {
					s.GapsTruncated = true
				}
			}
		}
		out = append(out, recs[i])
	}
	b.recs = out
	return gaps
}

// dropDuplicatesInCaptureOrder removes repeats among the records that carry
// a sequence, keeping capture order (used when only some events have one).
func (b *Builder) dropDuplicatesInCaptureOrder(s *Summary) {
	idx := make([]int32, 0, len(b.recs))
	for i := range b.recs {
		if b.recs[i].hasSeq {
			idx = append(idx, int32(i))
		}
	}
	slices.SortStableFunc(idx, func(x, y int32) int { return cmp.Compare(b.recs[x].seq, b.recs[y].seq) })
	drop := map[int32]bool{}
	for k := 1; k < len(idx); k++ {
		prev, cur := &b.recs[idx[k-1]], &b.recs[idx[k]]
		if prev.seq != cur.seq {
			continue
		}
		if sameEvent(prev, cur) {
			drop[idx[k]] = true
			s.Duplicates++
		} else {
			s.SequenceClashes++
		}
	}
	if len(drop) == 0 {
		return
	}
	out := b.recs[:0]
	for i := range b.recs {
		if !drop[int32(i)] {
			out = append(out, b.recs[i])
		}
	}
	b.recs = out
}

// sameEvent: every field the record kept is equal (t is not set yet).
func sameEvent(x, y *rec) bool { return *x == *y }

func (b *Builder) note(n string) { b.notes = append(b.notes, n) }

// spread moves the k-th of n records sharing one millisecond timestamp to
// +1000·k/n µs, in their order, and returns how many milliseconds it spread.
// It decides per millisecond: a bucket that holds any timestamp with
// sub-millisecond precision is left as it is, so one precise timestamp does
// not switch spreading off for the whole trace.
func spread(recs []rec) int {
	const ms = int64(time.Millisecond)
	monotone := slices.IsSortedFunc(recs, func(x, y rec) int { return cmp.Compare(x.tsNs, y.tsNs) })
	if monotone {
		spreadBuckets := 0
		for i := 0; i < len(recs); {
			bucket := floorDiv(recs[i].tsNs, ms)
			j, precise := i, false
			for j < len(recs) && floorDiv(recs[j].tsNs, ms) == bucket {
				precise = precise || recs[j].tsNs%ms != 0
				j++
			}
			if n := int64(j - i); n > 1 && !precise {
				spreadBuckets++
				for k := int64(0); k < n; k++ {
					recs[i+int(k)].t += 1000 * k / n
				}
			}
			i = j
		}
		return spreadBuckets
	}
	// Timestamps disagree with the order (buffers from several CPUs):
	// count per millisecond first, then hand out positions in order.
	type bucketInfo struct {
		n, next int64
		precise bool
	}
	buckets := map[int64]*bucketInfo{}
	for i := range recs {
		k := floorDiv(recs[i].tsNs, ms)
		bi := buckets[k]
		if bi == nil {
			bi = &bucketInfo{}
			buckets[k] = bi
		}
		bi.n++
		bi.precise = bi.precise || recs[i].tsNs%ms != 0
	}
	spreadBuckets := 0
	for i := range recs {
		bi := buckets[floorDiv(recs[i].tsNs, ms)]
		if bi.n < 2 || bi.precise {
			continue
		}
		if bi.next == 0 {
			spreadBuckets++
		}
		recs[i].t += 1000 * bi.next / bi.n
		bi.next++
	}
	return spreadBuckets
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
