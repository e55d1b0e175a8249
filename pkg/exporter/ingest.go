package exporter

import (
	"math"
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
	// kinds counts the events of each kind, decoded those of other names
	// (names are interned by the decoder); lastName and lastKind remember
	// the kind of the last name seen.
	kinds    [numKinds]uint64
	decoded  map[string]uint64
	lastName string
	lastKind eventKind
	// pagesOverflow counts page I/O past maxPagesPerBatch distinct pages,
	// which is published with unresolved object names.
	pagesOverflow map[pageOverflowKey]*pageAcc
	// pageIndex finds the accumulators of pages by their key packed into
	// one word (packPage): a one-word key hashes and compares faster than
	// a pageKey, on the path of the commonest event.
	pageIndex map[uint64]*pageAcc
	malformed uint64
}

type waitKey struct{ db, waitType uint64 }

// waitAcc: zeroMs counts the waits XE reported as 0 ms (its resolution is
// 1 ms), which add nothing to durUs.
type waitAcc struct{ count, durUs, signalUs, zeroMs float64 }
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
		pagesOverflow: map[pageOverflowKey]*pageAcc{}, pageIndex: map[uint64]*pageAcc{},
	}
}

// ingestProjection names what the aggregation reads of each event the
// session collects: the actions of eventContext and the fields batch.add
// reads. The decoder skips everything else without decoding it (on a busy
// server most of an event's bytes). TestProjectionKeepsWhatAggregationReads
// checks that aggregating projected events gives the same batch as
// aggregating fully decoded ones.
var ingestProjection = xe.Projection{
	Actions: []string{"database_id", "query_hash", "query_hash_signed", "event_sequence"},
	Fields: map[string][]string{
		"wait_info":                {"wait_type", "opcode", "duration", "signal_duration"},
		"wait_completed":           {"wait_type", "opcode", "duration", "signal_duration"},
		"physical_page_read":       {"file_id", "page_id"},
		"physical_page_write":      {"file_id", "page_id"},
		"page_split":               {"database_id", "rowset_id", "splitOperation"},
		"sort_warning":             spillFields,
		"hash_warning":             spillFields,
		"exchange_spill":           spillFields,
		"query_memory_grant_usage": {"granted_memory_kb", "used_memory_kb"},
		"log_flush_complete":       {"database_id", "write_size"},
		"sql_statement_completed":  statementFields,
		"sp_statement_completed":   statementFields,
	},
}

var (
	spillFields = []string{"sort_warning_type", "hash_warning_type", "opcode",
		"worktable_physical_reads", "worktable_physical_writes", "workfile_physical_writes"}
	statementFields = []string{"duration", "cpu_time", "logical_reads", "physical_reads", "writes"}
)

// newEventDecoder returns the decoder a target reads its events with:
// events are views into reused buffers (each is aggregated before the next
// is read) and carry only what ingestProjection names.
func newEventDecoder() *xe.Decoder {
	d := xe.NewDecoder(nil)
	d.ReuseEvents()
	d.Project(&ingestProjection)
	return d
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

// eventKind numbers the events the batch aggregates: a poll counts them in
// an array, and a run of events of one kind (names are interned by the
// decoder) is told apart with one compare.
type eventKind uint8

const (
	kindOther eventKind = iota
	kindWaitInfo
	kindWaitCompleted
	kindPageRead
	kindPageWrite
	kindPageSplit
	kindSortWarning
	kindHashWarning
	kindExchangeSpill
	kindMemoryGrant
	kindLogFlush
	kindSQLStatement
	kindSPStatement
	numKinds
)

// kindNames are the event names of the kinds (kindOther has none).
var kindNames = [numKinds]string{"", "wait_info", "wait_completed", "physical_page_read", "physical_page_write", "page_split",
	"sort_warning", "hash_warning", "exchange_spill", "query_memory_grant_usage", "log_flush_complete",
	"sql_statement_completed", "sp_statement_completed"}

func kindOf(name string) eventKind {
	for k := kindWaitInfo; k < numKinds; k++ {
		if kindNames[k] == name {
			return k
		}
	}
	return kindOther
}

// kind returns the kind of an event name, remembering the last one.
func (b *batch) kind(name string) eventKind {
	if name != b.lastName {
		b.lastName, b.lastKind = name, kindOf(name)
	}
	return b.lastKind
}

// decodedOf returns how many events named name the batch counted.
func (b *batch) decodedOf(name string) uint64 {
	if k := kindOf(name); k != kindOther {
		return b.kinds[k]
	}
	return b.decoded[name]
}

// eachDecoded calls fn with every event name the batch counted and its
// count.
func (b *batch) eachDecoded(fn func(name string, n uint64)) {
	for k := kindWaitInfo; k < numKinds; k++ {
		if b.kinds[k] > 0 {
			fn(kindNames[k], b.kinds[k])
		}
	}
	for name, n := range b.decoded {
		fn(name, n)
	}
}

// add aggregates one decoded event. Events the exporter did not ask for are
// only counted as decoded.
//
// The fields are read as pkg/xe's typed views read them (AsWait, AsPageIO,
// AsPageSplit, AsSpill, AsMemoryGrantUsage, AsLogFlush,
// AsStatementCompleted: same fields, same units), but without building
// their structs, which cost more than the rest of the aggregation;
// TestAggregationReadsAsTypedViews holds the two to the same numbers.
func (b *batch) add(ev *xe.Event, c eventContext) {
	k := b.kind(ev.Name)
	if k == kindOther {
		b.decoded[ev.Name]++
		return
	}
	b.kinds[k]++
	switch k {
	case kindWaitInfo, kindWaitCompleted:
		b.addWait(ev, c, k == kindWaitCompleted)
	case kindPageRead, kindPageWrite:
		b.addPageIO(ev, c, k == kindPageWrite)
	case kindPageSplit:
		b.addSplit(ev, c)
	case kindSortWarning, kindHashWarning, kindExchangeSpill:
		b.addSpill(ev, c, k)
	case kindMemoryGrant:
		b.addMemoryGrant(ev, c)
	case kindLogFlush:
		b.addLogFlush(ev, c)
	case kindSQLStatement, kindSPStatement:
		b.addStatement(ev, c)
	}
}

// u64 is a field's value as an unsigned number (0 when it is not one), as
// the typed views read numbers.
func u64(v *xe.Value) uint64 {
	u, _ := v.Uint()
	return u
}

// mapValue is a map field's key and text, as xe.Event.MapField gives them
// without a resolver (the exporter names unknown keys itself).
func mapValue(v *xe.Value) xe.MapValue {
	key, ok := v.Uint()
	if !ok {
		return xe.MapValue{}
	}
	mv := xe.MapValue{Key: key}
	if v.HasText {
		mv.Text = v.Text
	}
	return mv
}

// firstMap is mapValue of the first field named like f (MapField's rule
// for a repeated field).
func firstMap(ev *xe.Event, f *xe.Field) xe.MapValue {
	for i := range ev.Fields {
		if ev.Fields[i].Name == f.Name {
			return mapValue(&ev.Fields[i].Value)
		}
	}
	return xe.MapValue{}
}

// msToUs converts wait_info's millisecond durations to microseconds,
// saturating, as xe.AsWait does.
func msToUs(ms uint64) uint64 {
	if ms > math.MaxUint64/1000 {
		return math.MaxUint64
	}
	return ms * 1000
}

func (b *batch) addWait(ev *xe.Event, c eventContext, completed bool) {
	var waitType, opcode xe.MapValue
	var durUs, signalUs uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "wait_type":
			waitType = firstMap(ev, f)
		case "opcode":
			opcode = firstMap(ev, f)
		case "duration":
			durUs = msToUs(u64(&f.Value))
		case "signal_duration":
			signalUs = msToUs(u64(&f.Value))
		}
	}
	// The session keeps only End events of wait_info; a Begin that slips
	// through (a server ignoring the opcode predicate) carries no duration.
	if !completed && strings.EqualFold(opcode.Text, "Begin") {
		return
	}
	k := waitKey{c.db, waitType.Key}
	a := b.waits[k]
	if a == nil {
		a = &waitAcc{}
		b.waits[k] = a
		b.keepText(textWait, waitType)
	}
	a.count++
	a.durUs += float64(durUs)
	a.signalUs += float64(signalUs)
	if durUs == 0 {
		a.zeroMs++
	}
}

func (b *batch) keepText(m uint8, v xe.MapValue) {
	tk := textKey{m, v.Key}
	if _, ok := b.texts[tk]; !ok && v.Text != "" {
		b.texts[tk] = strings.Clone(v.Text)
	}
}

func (b *batch) addPageIO(ev *xe.Event, c eventContext, write bool) {
	var file, page uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "file_id":
			file = u64(&f.Value)
		case "page_id":
			page = u64(&f.Value)
		}
	}
	a := b.pageAcc(pageKey{c.db, file, page})
	if write {
		a.writes++
		return
	}
	a.reads++
	if c.hasHash {
		a.ex = exemplar{queryHash: c.queryHash, at: ev.Timestamp.Time, set: true}
	}
}

// pageAcc returns the accumulator of page k: its own among the first
// maxPagesPerBatch pages, its database's overflow one after.
func (b *batch) pageAcc(k pageKey) *pageAcc {
	packed, canPack := packPage(k)
	if canPack {
		if a := b.pageIndex[packed]; a != nil {
			return a
		}
	}
	if a := b.pages[k]; a != nil {
		return a
	}
	if len(b.pages) >= maxPagesPerBatch {
		return accOf(b.pagesOverflow, pageOverflowKey{k.db})
	}
	a := &pageAcc{}
	b.pages[k] = a
	if canPack {
		b.pageIndex[packed] = a
	}
	return a
}

// accOf returns m's accumulator for k, adding a zero one if there is none.
func accOf[K comparable, V any](m map[K]*V, k K) *V {
	a := m[k]
	if a == nil {
		a = new(V)
		m[k] = a
	}
	return a
}

// packPage packs a page key into one word when its database and file ids
// are below 2^16 and its page id below 2^32, which holds for every page
// SQL Server numbers (database_id and file_id are smallint, page_id int).
func packPage(k pageKey) (uint64, bool) {
	if k.db>>16 != 0 || k.file>>16 != 0 || k.page>>32 != 0 {
		return 0, false
	}
	return k.db<<48 | k.file<<32 | k.page, true
}

func (b *batch) addSplit(ev *xe.Event, c eventContext) {
	var db, rowset uint64
	var op xe.MapValue
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "database_id":
			db = u64(&f.Value)
		case "rowset_id":
			rowset = u64(&f.Value)
		case "splitOperation":
			op = firstMap(ev, f)
		}
	}
	if db == 0 {
		db = c.db
	}
	k := splitKey{db, rowset, op.Key}
	if _, seen := b.splits[k]; !seen {
		b.keepText(textSplit, op)
	}
	b.splits[k]++
}

// spillKind is the kind label of a spill event.
func spillKind(k eventKind) string {
	switch k {
	case kindSortWarning:
		return "sort"
	case kindHashWarning:
		return "hash"
	}
	return "exchange"
}

func (b *batch) addSpill(ev *xe.Event, c eventContext, kind eventKind) {
	var warning xe.MapValue
	var read, worktableWrites, workfileWrites uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "hash_warning_type", "sort_warning_type", "opcode":
			warning = firstMap(ev, f)
		case "worktable_physical_reads":
			read = u64(&f.Value)
		case "worktable_physical_writes":
			worktableWrites = u64(&f.Value)
		case "workfile_physical_writes":
			workfileWrites = u64(&f.Value)
		}
	}
	// exchange_spill fires at the start and at the end of a spill (its
	// opcode); the spill is counted once, at its end.
	if kind == kindExchangeSpill && strings.EqualFold(warning.Text, "Begin") {
		return
	}
	k := spillKey{c.db, spillKind(kind), c.queryHash}
	a := accOf(b.spills, k)
	a.count++
	a.written += float64(worktableWrites + workfileWrites)
	a.read += float64(read)
	if ev.Timestamp.Time.After(a.last) {
		a.last = ev.Timestamp.Time
	}
}

func (b *batch) addMemoryGrant(ev *xe.Event, c eventContext) {
	var granted, used uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "granted_memory_kb":
			granted = u64(&f.Value)
		case "used_memory_kb":
			used = u64(&f.Value)
		}
	}
	a := accOf(b.memory, c.db)
	a.count++
	a.grantedKB += float64(granted)
	a.usedKB += float64(used)
}

func (b *batch) addLogFlush(ev *xe.Event, c eventContext) {
	var db, size uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "database_id":
			db = u64(&f.Value)
		case "write_size":
			size = u64(&f.Value)
		}
	}
	if db == 0 {
		db = c.db
	}
	a := accOf(b.logs, db)
	a.count++
	a.bytes += float64(size)
}

func (b *batch) addStatement(ev *xe.Event, c eventContext) {
	var dur, cpu, logical, physical, writes uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "duration":
			dur = u64(&f.Value)
		case "cpu_time":
			cpu = u64(&f.Value)
		case "logical_reads":
			logical = u64(&f.Value)
		case "physical_reads":
			physical = u64(&f.Value)
		case "writes":
			writes = u64(&f.Value)
		}
	}
	k := stmtKey{c.db, c.queryHash}
	a := accOf(b.stmts, k)
	a.count++
	a.logical += float64(logical)
	a.physical += float64(physical)
	a.writes += float64(writes)
	a.durUs += float64(dur)
	a.cpuUs += float64(cpu)
	if ev.Timestamp.Time.After(a.last) {
		a.last = ev.Timestamp.Time
	}
}
