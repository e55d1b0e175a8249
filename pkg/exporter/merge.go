package exporter

import (
	"strconv"
	"time"
)

// merge adds a poll's batch to the target's series, with names resolved.
// The caller holds t.mu.
func (t *target) merge(b *batch, rs *readStats, now time.Time) {
	t.mergeWaits(b)
	t.mergePages(b)
	t.mergeSplits(b)
	t.mergeSpills(b)
	db := t.cat.databaseName
	for id, a := range b.memory {
		t.groups[mgMemory].add([]string{db(id)}, []float64{a.count, a.grantedKB * 1024, a.usedKB * 1024}, exemplar{})
	}
	for id, a := range b.logs {
		t.groups[mgLog].add([]string{db(id)}, []float64{a.count, a.bytes}, exemplar{})
	}
	for k, a := range b.stmts {
		var ex exemplar
		if k.queryHash != 0 {
			ex = exemplar{queryHash: k.queryHash, at: a.last, set: true}
			t.top.noteStatements(k.queryHash, db(k.db), uint64(a.count), uint64(a.logical), a.last)
		}
		t.groups[mgStatements].add([]string{db(k.db)},
			[]float64{a.count, a.logical, a.physical, a.writes, a.durUs / 1e6, a.cpuUs / 1e6}, ex)
	}
	b.eachDecoded(func(name string, n uint64) { t.st.decoded[name] += n })
	t.st.malformed += b.malformed
	t.st.lost += rs.lost
	t.st.duplicates += rs.duplicates
	t.top.trim(now)
	t.initSpillSeries()
}

// spillKinds are the kind label's values.
var spillKinds = []string{"sort", "hash", "exchange"}

// initSpillSeries makes the spill counters of every database the session
// covers exist from the start, at zero: the spill alert uses increase(),
// which cannot see the first increment of a series that appears at 1.
// The caller holds t.mu.
func (t *target) initSpillSeries() {
	if t.spec == nil || !containsGroup(t.spec.groups, GroupSpills) {
		return
	}
	ids := t.spec.databaseIDs
	if len(ids) == 0 {
		for id := range t.cat.databases {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		for _, k := range spillKinds {
			t.groups[mgSpills].ensure([]string{t.cat.databaseName(id), k})
		}
	}
}

func (t *target) mergeWaits(b *batch) {
	for k, a := range b.waits {
		name, ok := b.texts[textKey{textWait, k.waitType}]
		if !ok {
			name, ok = t.waitNames[k.waitType]
		}
		if !ok {
			name = "[" + strconv.FormatUint(k.waitType, 10) + "]"
		}
		t.groups[mgWaits].add([]string{t.cat.databaseName(k.db), name, defaultWaitCategories.category(name)},
			[]float64{a.count, a.durUs / 1e6, a.signalUs / 1e6, a.zeroMs}, exemplar{})
	}
}

func (t *target) mergePages(b *batch) {
	for k, a := range b.pages {
		n := t.cat.pageName(k)
		t.groups[mgPages].add([]string{t.cat.databaseName(k.db), n.object, n.index}, []float64{a.reads, a.writes}, a.ex)
	}
	for k, a := range b.pagesOverflow {
		t.groups[mgPages].add([]string{t.cat.databaseName(k.db), labelUnknown, labelUnknown}, []float64{a.reads, a.writes}, a.ex)
	}
}

func (t *target) mergeSplits(b *batch) {
	for k, n := range b.splits {
		op, ok := b.texts[textKey{textSplit, k.op}]
		if !ok {
			op = "[" + strconv.FormatUint(k.op, 10) + "]"
		}
		name := t.cat.hobtName(k.db, k.hobt)
		t.groups[mgSplits].add([]string{t.cat.databaseName(k.db), name.object, name.index, op}, []float64{n}, exemplar{})
	}
}

func (t *target) mergeSpills(b *batch) {
	for k, a := range b.spills {
		db := t.cat.databaseName(k.db)
		var ex exemplar
		hash := labelUnknown
		if k.queryHash != 0 {
			ex = exemplar{queryHash: k.queryHash, at: a.last, set: true}
			hash = formatQueryHash(k.queryHash)
			t.top.noteSpill(k.queryHash, db, uint64(a.count), uint64(a.written), a.last)
		}
		t.groups[mgSpills].add([]string{db, k.kind}, []float64{a.count, a.written, a.read}, ex)
		t.groups[mgQuerySpills].add([]string{db, hash, k.kind}, []float64{a.count}, exemplar{})
	}
}
