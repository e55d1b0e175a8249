package exporter

import (
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// A batch aggregates one poll's events by numeric identity (database id,
// map key, HoBT id, page): the hot path touches no label strings. Names are
// resolved once per distinct key after the read (names.go), and the batch
// is then merged into the label-limited series (merge.go).
type batch struct {
	waits  map[waitKey]*waitAcc
	pages  map[pageKey]*pageAcc
	splits map[splitKey]float64
	spills map[spillKey]*spillAcc
	memory map[uint64]*memAcc
	logs   map[uint64]*logAcc
	stmts  map[stmtKey]*stmtAcc
	// texts keeps the map texts the events carried (wait types, split
	// operations), copied out of the decoder's reused buffers.
	texts map[textKey]string
	// decoded counts events by name; names are interned by the decoder.
	decoded map[string]uint64
	// pagesOverflow counts page I/O past maxPagesPerBatch distinct pages,
	// which is published with unresolved object names.
	pagesOverflow map[pageOverflowKey]*pageAcc
	malformed     uint64
}

type waitKey struct{ db, waitType uint64 }
type waitAcc struct{ count, durUs, signalUs float64 }
type pageKey struct{ db, file, page uint64 }
type pageOverflowKey struct{ db uint64 }
type pageAcc struct {
	reads, writes float64
	ex            exemplar
}
type splitKey struct{ db, hobt, op uint64 }
type spillKey struct {
	db        uint64
	kind      string // constant strings only
	queryHash uint64
}
type spillAcc struct {
	count, written, read float64
	last                 time.Time
}
type memAcc struct{ count, grantedKB, usedKB float64 }
type logAcc struct{ count, bytes float64 }
type stmtKey struct{ db, queryHash uint64 }
type stmtAcc struct {
	count, logical, physical, writes, durUs, cpuUs float64
	last                                           time.Time
}
type textKey struct {
	m   uint8 // textWait, textSplit
	key uint64
}

const (
	textWait uint8 = iota
	textSplit
)

// maxPagesPerBatch bounds the distinct pages one poll tracks for name
// resolution; beyond it, page I/O is still counted, per database.
const maxPagesPerBatch = 100_000

func newBatch() *batch {
	return &batch{
		waits: map[waitKey]*waitAcc{}, pages: map[pageKey]*pageAcc{}, splits: map[splitKey]float64{},
		spills: map[spillKey]*spillAcc{}, memory: map[uint64]*memAcc{}, logs: map[uint64]*logAcc{},
		stmts: map[stmtKey]*stmtAcc{}, texts: map[textKey]string{}, decoded: map[string]uint64{},
		pagesOverflow: map[pageOverflowKey]*pageAcc{},
	}
}

// eventContext is what the exporter's actions say about an event.
type eventContext struct {
	db, queryHash, seq uint64
	hasHash, hasSeq    bool
}

func contextOf(ev *xe.Event) eventContext {
	var c eventContext
	for i := range ev.Actions {
		a := &ev.Actions[i]
		switch a.Name {
		case "database_id":
			c.db, _ = a.Value.Uint()
		case "query_hash":
			c.queryHash, c.hasHash = a.Value.Uint()
		case "query_hash_signed":
			if v, ok := a.Value.Int(); ok {
				c.queryHash, c.hasHash = uint64(v), true
			}
		case "event_sequence":
			c.seq, c.hasSeq = a.Value.Uint()
		}
	}
	// query_hash 0 means "no query" (system tasks).
	c.hasHash = c.hasHash && c.queryHash != 0
	return c
}

// add aggregates one decoded event. Events the exporter did not ask for are
// only counted as decoded.
func (b *batch) add(ev *xe.Event, c eventContext) {
	b.decoded[ev.Name]++
	switch ev.Name {
	case "wait_info", "wait_completed":
		b.addWait(ev, c)
	case "physical_page_read", "physical_page_write":
		b.addPageIO(ev, c)
	case "page_split":
		b.addSplit(ev, c)
	case "sort_warning", "hash_warning", "exchange_spill":
		b.addSpill(ev, c)
	case "query_memory_grant_usage":
		if m, ok := xe.AsMemoryGrantUsage(ev); ok {
			a := b.memory[c.db]
			if a == nil {
				a = &memAcc{}
				b.memory[c.db] = a
			}
			a.count++
			a.grantedKB += float64(m.GrantedMemoryKB)
			a.usedKB += float64(m.UsedMemoryKB)
		}
	case "log_flush_complete":
		if l, ok := xe.AsLogFlush(ev); ok {
			db := c.db
			if l.DatabaseID != 0 {
				db = l.DatabaseID
			}
			a := b.logs[db]
			if a == nil {
				a = &logAcc{}
				b.logs[db] = a
			}
			a.count++
			a.bytes += float64(l.WriteSize)
		}
	case "sql_statement_completed", "sp_statement_completed":
		b.addStatement(ev, c)
	}
}

func (b *batch) addWait(ev *xe.Event, c eventContext) {
	w, ok := xe.AsWait(ev, nil)
	if !ok {
		return
	}
	// The session keeps only End events of wait_info; a Begin that slips
	// through (a server ignoring the opcode predicate) carries no duration.
	if !w.Completed && strings.EqualFold(w.Opcode.Text, "Begin") {
		return
	}
	k := waitKey{c.db, w.WaitType.Key}
	a := b.waits[k]
	if a == nil {
		a = &waitAcc{}
		b.waits[k] = a
		b.keepText(textWait, w.WaitType)
	}
	a.count++
	a.durUs += float64(w.DurationUs)
	a.signalUs += float64(w.SignalDurationUs)
}

func (b *batch) keepText(m uint8, v xe.MapValue) {
	tk := textKey{m, v.Key}
	if _, ok := b.texts[tk]; !ok && v.Text != "" {
		b.texts[tk] = strings.Clone(v.Text)
	}
}

func (b *batch) addPageIO(ev *xe.Event, c eventContext) {
	p, ok := xe.AsPageIO(ev)
	if !ok {
		return
	}
	k := pageKey{c.db, p.FileID, p.PageID}
	a := b.pages[k]
	if a == nil {
		if len(b.pages) >= maxPagesPerBatch {
			ok := pageOverflowKey{c.db}
			if a = b.pagesOverflow[ok]; a == nil {
				a = &pageAcc{}
				b.pagesOverflow[ok] = a
			}
		} else {
			a = &pageAcc{}
			b.pages[k] = a
		}
	}
	if p.Write {
		a.writes++
	} else {
		a.reads++
		if c.hasHash {
			a.ex = exemplar{queryHash: c.queryHash, at: ev.Timestamp.Time, set: true}
		}
	}
}

func (b *batch) addSplit(ev *xe.Event, c eventContext) {
	s, ok := xe.AsPageSplit(ev, nil)
	if !ok {
		return
	}
	db := s.DatabaseID
	if db == 0 {
		db = c.db
	}
	k := splitKey{db, s.RowsetID, s.SplitOperation.Key}
	if _, seen := b.splits[k]; !seen {
		b.keepText(textSplit, s.SplitOperation)
	}
	b.splits[k]++
}

// spillKind names the kind label of each spill event.
func spillKind(event string) string {
	switch event {
	case "sort_warning":
		return "sort"
	case "hash_warning":
		return "hash"
	}
	return "exchange"
}

func (b *batch) addSpill(ev *xe.Event, c eventContext) {
	s, ok := xe.AsSpill(ev, nil)
	if !ok {
		return
	}
	// exchange_spill fires at the start and at the end of a spill (its
	// opcode); the spill is counted once, at its end.
	if ev.Name == "exchange_spill" && strings.EqualFold(s.WarningType.Text, "Begin") {
		return
	}
	k := spillKey{c.db, spillKind(ev.Name), c.queryHash}
	a := b.spills[k]
	if a == nil {
		a = &spillAcc{}
		b.spills[k] = a
	}
	a.count++
	a.written += float64(s.WorktablePhysicalWrites + s.WorkfilePhysicalWrites)
	a.read += float64(s.WorktablePhysicalReads)
	if ev.Timestamp.Time.After(a.last) {
		a.last = ev.Timestamp.Time
	}
}

func (b *batch) addStatement(ev *xe.Event, c eventContext) {
	s, ok := xe.AsStatementCompleted(ev)
	if !ok {
		return
	}
	k := stmtKey{c.db, c.queryHash}
	a := b.stmts[k]
	if a == nil {
		a = &stmtAcc{}
		b.stmts[k] = a
	}
	a.count++
	a.logical += float64(s.LogicalReads)
	a.physical += float64(s.PhysicalReads)
	a.writes += float64(s.Writes)
	a.durUs += float64(s.DurationUs)
	a.cpuUs += float64(s.CPUTimeUs)
	if ev.Timestamp.Time.After(a.last) {
		a.last = ev.Timestamp.Time
	}
}
