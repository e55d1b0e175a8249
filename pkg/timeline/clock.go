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
	withSeq := b.withSeq
	s := &tr.Summary
	s.Ordering = "capture"
	s.WithoutSequence = len(b.recs) - withSeq
	var gaps []gapAt
	monotone := !b.tsUnsorted
	switch {
	case withSeq > 0 && withSeq == len(b.recs):
		s.Ordering = "event_sequence"
		if b.seqUnsorted {
			// a new order: whether timestamps follow it is asked anew
			monotone = false
		}
		gaps = b.orderBySequence(s)
	case withSeq > 0:
		// dropping records keeps an ordered sequence ordered
		b.dropDuplicatesInCaptureOrder(s)
		b.note(fmt.Sprintf("%d of %d events carry no event_sequence: ordered as captured; lost events cannot be counted",
			s.WithoutSequence, len(b.recs)))
	}
	recs := b.recs
	if !monotone {
		monotone = slices.IsSortedFunc(recs, func(x, y rec) int { return cmp.Compare(x.tsNs, y.tsNs) })
	}
	var zeroNs int64
	if monotone && len(recs) > 0 {
		// In order, time zero is known before spreading (its record's
		// millisecond is found around it), and one pass spreads, shifts
		// and finds the extent.
		var zero int64
		zero, zeroNs = b.orderedTimeZero(recs)
		s.SpreadBuckets = b.spreadShift(recs, zero)
	} else {
		s.SpreadBuckets = spread(recs, monotone)
		var zero int64
		zero, zeroNs = b.timeZero(recs, monotone)
		b.shift(recs, zero)
	}
	s.Spread = s.SpreadBuckets > 0
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

// timeZero is sql_batch_starting's time, else the earliest event's (µs,
// before the shift), and the same as Unix ns.
func (b *Builder) timeZero(recs []rec, monotone bool) (zero, zeroNs int64) {
	if b.kinds[kBatchStarting] > 0 {
		for i := range recs {
			if recs[i].kind == kBatchStarting {
				return recs[i].t, recs[i].tsNs
			}
		}
	}
	if len(recs) == 0 {
		return math.MaxInt64, 0
	}
	b.note("no sql_batch_starting: time zero is the earliest event")
	if monotone {
		// spread keeps ordered timestamps ordered: the first is earliest
		return recs[0].t, recs[0].tsNs
	}
	zero, zeroNs = int64(math.MaxInt64), 0
	for i := range recs {
		if recs[i].t < zero {
			zero, zeroNs = recs[i].t, recs[i].tsNs
		}
	}
	return zero, zeroNs
}

// orderedTimeZero is timeZero for records in timestamp order, before
// spreading: the zero record's time is worked out from its millisecond's
// records, as spread will set it.
func (b *Builder) orderedTimeZero(recs []rec) (zero, zeroNs int64) {
	j, found := 0, false
	if b.kinds[kBatchStarting] > 0 {
		for i := range recs {
			if recs[i].kind == kBatchStarting {
				j, found = i, true
				break
			}
		}
	}
	if !found {
		// spread keeps ordered timestamps ordered: the first is earliest
		b.note("no sql_batch_starting: time zero is the earliest event")
	}
	const ms = int64(time.Millisecond)
	bucket := floorDiv(recs[j].tsNs, ms)
	first, next := bucket*ms, (bucket+1)*ms
	lo, hi := j, j
	for lo > 0 && recs[lo-1].tsNs >= first {
		lo--
	}
	for hi+1 < len(recs) && recs[hi+1].tsNs < next {
		hi++
	}
	precise := false
	for k := lo; k <= hi; k++ {
		precise = precise || recs[k].tsNs%ms != 0
	}
	switch n := int64(hi - lo + 1); {
	case precise:
		zero = floorDiv(recs[j].tsNs, 1000)
	default:
		zero = bucket*1000 + 1000*int64(j-lo)/n
	}
	return zero, recs[j].tsNs
}

// spreadShift is spread for records in timestamp order, fused with
// shift: it sets every r.t relative to zero, finds the extent and the
// thread-profile records, and returns how many milliseconds it spread.
func (b *Builder) spreadShift(recs []rec, zero int64) int {
	const ms = int64(time.Millisecond)
	start, end := int64(0), int64(0)
	profiles := b.kinds[kThreadProfile] > 0
	spreadBuckets := 0
	for i := 0; i < len(recs); {
		bucket, j, precise := msBucket(recs, i)
		n := int64(j - i)
		if !precise && n > 1 {
			spreadBuckets++
		}
		// The k-th of n records gets ⌊1000·k/n⌋ µs into its millisecond,
		// stepped without a division per record: each step adds 1000/n
		// and carries when the remainders add up to n.
		off, rem := bucket*1000-zero, int64(0)
		step, stepRem := 1000/n, 1000%n
		for k := i; k < j; k++ {
			r := &recs[k]
			if precise {
				r.t = floorDiv(r.tsNs, 1000) - zero
			} else {
				r.t = off
				off, rem = off+step, rem+stepRem
				if rem >= n {
					off, rem = off+1, rem-n
				}
			}
			start, end = min(start, r.t), max(end, r.t)
			if profiles && r.kind == kThreadProfile {
				b.profiles = append(b.profiles, k)
			}
		}
		i = j
	}
	b.start, b.end = start, end
	return spreadBuckets
}

// shift makes every r.t relative to time zero and, in the same pass,
// finds the statement's extent (time zero or the earliest event to the
// latest) and the thread-profile records.
func (b *Builder) shift(recs []rec, zero int64) {
	start, end := int64(0), int64(0)
	profiles := b.kinds[kThreadProfile] > 0
	for i := range recs {
		r := &recs[i]
		r.t -= zero
		start, end = min(start, r.t), max(end, r.t)
		if profiles && r.kind == kThreadProfile {
			b.profiles = append(b.profiles, i)
		}
	}
	b.start, b.end = start, end
}

// gapAt is a gap between recs[before] and recs[after] (indices in order).
type gapAt struct{ before, after int }

// orderBySequence sorts the records by event_sequence, drops repeats of one
// event, counts lost events and returns where the gaps are.
func (b *Builder) orderBySequence(s *Summary) []gapAt {
	if !b.seqBroken && !b.seqUnsorted {
		// consecutive as added (and not wrapped around): ordered, no
		// repeat, no gap — a pass over a million records saved (issue 26
		// performance)
		return nil
	}
	if b.seqUnsorted {
		slices.SortStableFunc(b.recs, func(x, y rec) int { return cmp.Compare(x.seq, y.seq) })
	}
	recs := b.recs
	n := 0 // records kept: recs[:n]
	var gaps []gapAt
	for i := range recs {
		if n > 0 && recs[i].seq == recs[n-1].seq {
			if b.sameEvent(&recs[i], &recs[n-1]) {
				s.Duplicates++
				continue
			}
			s.SequenceClashes++
		}
		if n > 0 {
			if d := recs[i].seq - recs[n-1].seq; d > 1 {
				s.Lost += d - 1
				if len(gaps) < MaxGaps {
					gaps = append(gaps, gapAt{n - 1, n})
				} else {
					s.GapsTruncated = true
				}
			}
		}
		if n != i {
			// only once a record was dropped: copying a record onto
			// itself a million times costs a pass over them all
			recs[n] = recs[i]
		}
		n++
	}
	b.recs = recs[:n]
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
		if b.sameEvent(prev, cur) {
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
func (b *Builder) sameEvent(x, y *rec) bool {
	if x.x == 0 || y.x == 0 {
		// extras are stored only when not all zero
		return *x == *y
	}
	xr, yr := *x, *y
	xr.x, yr.x = 0, 0
	return xr == yr && *b.extras.at(x.x) == *b.extras.at(y.x)
}

func (b *Builder) note(n string) { b.notes = append(b.notes, n) }

// spread sets every r.t to its timestamp in µs and moves the k-th of n
// records sharing one millisecond timestamp to +1000·k/n µs, in their
// order; it returns how many milliseconds it spread. It decides per
// millisecond: a bucket that holds any timestamp with sub-millisecond
// precision is left as it is, so one precise timestamp does not switch
// spreading off for the whole trace. monotone tells that the timestamps
// are in order.
func spread(recs []rec, monotone bool) int {
	const ms = int64(time.Millisecond)
	if monotone {
		spreadBuckets := 0
		for i := 0; i < len(recs); {
			bucket, j, precise := msBucket(recs, i)
			n := int64(j - i)
			switch {
			case precise:
				for k := i; k < j; k++ {
					recs[k].t = floorDiv(recs[k].tsNs, 1000)
				}
			case n > 1:
				spreadBuckets++
				for k := int64(0); k < n; k++ {
					recs[i+int(k)].t = bucket*1000 + 1000*k/n
				}
			default:
				recs[i].t = bucket * 1000
			}
			i = j
		}
		return spreadBuckets
	}
	for i := range recs {
		recs[i].t = floorDiv(recs[i].tsNs, 1000)
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

// msBucket returns the millisecond of recs[i] (records in timestamp order)
// and the end j of the run of records within it, and whether any of them
// has a sub-millisecond timestamp. One division per bucket: in order, a
// bucket is the run of timestamps below its next millisecond.
func msBucket(recs []rec, i int) (bucket int64, j int, precise bool) {
	const ms = int64(time.Millisecond)
	bucket = floorDiv(recs[i].tsNs, ms)
	next := (bucket + 1) * ms
	for j = i; j < len(recs) && recs[j].tsNs < next; j++ {
		precise = precise || recs[j].tsNs%ms != 0
	}
	return bucket, j, precise
}
