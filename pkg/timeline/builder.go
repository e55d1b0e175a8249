package timeline

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// kind is what a record was read from.
type kind uint8

const (
	kOther kind = iota
	kRead
	kWrite
	kLockAcquired
	kLockReleased
	kWaitBegin
	kWaitEnd
	kWaitCompleted
	kFileRead
	kFileReadCompleted
	kFileWriteCompleted
	kThreadProfile
	kSpill
	kGrantUsage
	kSplit
	kLogRecord
	kLogFlush
	kEscalation
	kBatchStarting
	kBatchCompleted
	kStatementCompleted
)

// rec is the compact form of one event: what the timeline needs and nothing
// else. Strings (map texts, event names) are interned into Builder.strs.
// It holds what a page event needs (most of a trace) in 48 bytes — its
// database, file and page packed into a (packPage) — and the other kinds
// keep the rest in Builder.extras (x): a million records smaller are a
// pass over memory shorter, and a heap that needs a garbage collection
// fewer per build (issue 26 performance).
type rec struct {
	tsNs int64  // event timestamp, Unix ns
	seq  uint64 // package0.event_sequence (hasSeq)
	t    int64  // µs from time zero, set by the clock
	// a is kind-specific (see Add); a page event's packed page key, or
	// its database when flag says the ids do not pack (file and page are
	// then extras b and c).
	a      uint64
	s1     uint32 // interned string
	stack  uint32 // call-stack id (Trace.Stacks), 0 for none
	x      uint32 // Builder.extras index, 0 for none
	kind   kind
	hasSeq bool
	flag   bool
}

// recExtra is the rest of a record that is not a page event's.
type recExtra struct {
	b, c, d, e, f uint64
	s2, s3        uint32 // interned strings
}

// wide is a record with its extra fields, as Add fills it and fillLanes
// reads it.
type wide struct {
	rec
	recExtra
}

// widen joins a record with its extra fields.
func (b *Builder) widen(r *rec) wide {
	w := wide{rec: *r}
	if r.x != 0 {
		w.recExtra = *b.extras.at(r.x)
	}
	return w
}

// Options tune a Builder.
type Options struct {
	// Statement picks the plan statement the events belong to, by its
	// Index in Plan.Statements. -1 (the default from NewBuilder) takes the
	// first statement that has operators.
	Statement int
	// ExpectedEvents, when known (the tracer counts rows), sizes the
	// Builder's memory up front instead of growing it.
	ExpectedEvents int
	// LockRows maps a key lock — its database, HoBT (associated_object_id)
	// and resource description (the %%lockres%% hash, e.g.
	// "(8194443284a0)") — to the row the tracer resolved for it. The hash
	// alone is not enough: the same hash can occur in two indexes.
	LockRows map[LockKey]string
	// Stacks tells how to parse the events' call stacks (package0.callstack
	// and callstack_rva): module base addresses (sys.dm_os_loaded_modules)
	// turn bare addresses into module+RVA, and Identities give modules
	// their PDB identity when the frames carry none.
	Stacks callstack.ParseOptions
}

// LockKey identifies one key lock's resource.
type LockKey struct {
	DatabaseID uint64
	HoBTID     uint64
	Hash       string
}

// Builder collects events and builds a Trace. It is not safe for
// concurrent use.
type Builder struct {
	plan    *showplan.Plan
	stmt    *showplan.Statement
	catalog *Catalog
	maps    xe.MapResolver
	opts    Options

	recs []rec
	// extras holds the extra fields of records that have any (rec.x);
	// index 0 is unused.
	extras extraStore
	strs   []string
	strID  map[string]uint32
	// stackText holds each distinct call-stack text once (index = id − 1).
	stackText []string
	stackID   map[string]uint32
	other     map[string]int
	notes     []string
	// What Add saw, so that Build skips passes over a million records
	// (issue 26 performance): records per kind, records with an
	// event_sequence, whether those came in sequence order, and whether
	// timestamps came in order.
	kinds       [kStatementCompleted + 1]int
	withSeq     int
	lastSeq     uint64
	seqUnsorted bool
	// seqBroken: a sequence did not follow the one before it by exactly
	// one (a gap, a repeat or a step back); without it the records are
	// in order with no gap and no duplicate, and orderBySequence has
	// nothing to do.
	seqBroken  bool
	lastTs     int64
	tsUnsorted bool
	// start and end are the statement's extent (µs from time zero) as the
	// clock's last pass found it; profiles lists the thread-profile
	// records.
	start, end int64
	profiles   []int
	// batch: the batch's own events (Summary.ElapsedUs): whether
	// sql_batch_starting and sql_batch_completed were seen, the
	// completion's time and its duration field (µs).
	batch struct {
		started, done bool
		end, durUs    int64
	}
}

// Names is what name resolution finds for a trace on the server: the
// catalog of its objects, the rows of its key locks (Options.LockRows) and
// the modules of its call stacks (Options.Stacks). Only Build reads them,
// so a caller may resolve them while the events are added and give them
// with SetNames before Build: a live trace's end waits for both (issue 29).
type Names struct {
	Catalog  *Catalog
	LockRows map[LockKey]string
	Stacks   callstack.ParseOptions
}

// SetNames replaces the catalog, Options.LockRows and Options.Stacks; call
// it before Build.
func (b *Builder) SetNames(n Names) {
	b.catalog, b.opts.LockRows, b.opts.Stacks = n.Catalog, n.LockRows, n.Stacks
}

// NewBuilder starts a trace for plan (nil when no plan was captured), with an
// optional catalog and map resolver (either may be nil).
func NewBuilder(plan *showplan.Plan, catalog *Catalog, maps xe.MapResolver, opts *Options) (*Builder, error) {
	b := &Builder{plan: plan, catalog: catalog, maps: maps, strID: map[string]uint32{"": 0}, strs: []string{""}, other: map[string]int{}}
	if opts != nil {
		b.opts = *opts
	} else {
		b.opts.Statement = -1
	}
	if b.opts.ExpectedEvents > 0 {
		b.recs = make([]rec, 0, b.opts.ExpectedEvents)
	}
	if err := b.usePlan(plan); err != nil {
		return nil, err
	}
	return b, nil
}

// SetPlan replaces the plan NewBuilder was given. Only Build reads the
// plan, so a caller may add events before the plan is known — a live
// trace adds them as it reads them, and the actual plan comes last — and
// give it here before Build (issue 29).
func (b *Builder) SetPlan(plan *showplan.Plan) error { return b.usePlan(plan) }

// usePlan takes plan's statement (Options.Statement, or the first with
// operators) and notes what is missing. Before Build the notes hold only
// these.
func (b *Builder) usePlan(plan *showplan.Plan) error {
	b.plan, b.stmt, b.notes = plan, nil, nil
	if plan != nil {
		switch {
		case b.opts.Statement >= 0:
			if b.opts.Statement >= len(plan.Statements) {
				return fmt.Errorf("timeline: statement %d does not exist; the plan has %d", b.opts.Statement, len(plan.Statements))
			}
			b.stmt = plan.Statements[b.opts.Statement]
			if b.stmt.Root == nil {
				return fmt.Errorf("timeline: statement %d (%s) has no operators", b.opts.Statement, b.stmt.Type)
			}
		default:
			for _, s := range plan.Statements {
				if s.Root != nil {
					b.stmt = s
					break
				}
			}
			if b.stmt == nil {
				b.notes = append(b.notes, "the plan has no statement with operators; events stay unmatched")
			}
		}
	} else {
		b.notes = append(b.notes, "no plan: events stay unmatched and there are no operators")
	}
	return nil
}

func (b *Builder) intern(s string) uint32 {
	if id, ok := b.strID[s]; ok {
		return id
	}
	// s may point into a decoder's reused buffer (xe.Decoder.ReuseEvents):
	// keep a copy.
	s = strings.Clone(s)
	id := uint32(len(b.strs))
	b.strs = append(b.strs, s)
	b.strID[s] = id
	return id
}

// Add records one event. The event may be a reused view (xe.Decoder's
// ReuseEvents mode): nothing of it is kept after Add returns.
func (b *Builder) Add(ev *xe.Event) {
	if ev.Name == "physical_page_read" || ev.Name == "physical_page_write" {
		// Most of a trace's events: read with one pass over fields and
		// actions, without building xe's Common (issue 26 performance).
		b.addPage(ev)
		return
	}
	r := wide{rec: rec{tsNs: ev.Timestamp.Time.UnixNano()}}
	if v, ok := ev.Action("event_sequence"); ok {
		if s, ok := v.Uint(); ok {
			r.seq, r.hasSeq = s, true
		}
	}
	db := func() uint64 {
		if v, ok := ev.Action("database_id"); ok {
			u, _ := v.Uint()
			return u
		}
		return 0
	}
	switch ev.Name {
	case "lock_acquired", "lock_released":
		l, _ := xe.AsLock(ev, b.maps)
		r.kind = kLockAcquired
		if l.Released {
			r.kind = kLockReleased
		}
		r.a = l.DatabaseID
		if r.a == 0 {
			r.a = db()
		}
		r.b = l.AssociatedObjectID
		r.c = l.Resource0 | l.Resource1<<32
		r.d = l.Resource2
		r.e = uint64(l.TransactionID)
		r.s1 = b.intern(l.Mode.String())
		r.s2 = b.intern(l.ResourceType.String())
		r.s3 = b.intern(strings.TrimSpace(l.ResourceDescription))
		r.f = l.DurationUs
		if l.ObjectID != 0 && l.AssociatedObjectID == 0 {
			// An OBJECT lock names the table by object id, not a HoBT.
			r.b, r.flag = uint64(l.ObjectID), true
		}
	case "wait_info", "wait_completed":
		w, _ := xe.AsWait(ev, b.maps)
		r.s1 = b.intern(w.WaitType.String())
		r.a = w.DurationUs
		r.b = w.WaitResource
		r.d = w.SignalDurationUs
		if v, ok := ev.Action("task_address"); ok {
			r.c, _ = v.Uint()
		}
		switch {
		case w.Completed:
			r.kind = kWaitCompleted
		case strings.EqualFold(w.Opcode.Text, "begin"):
			r.kind = kWaitBegin
		case strings.EqualFold(w.Opcode.Text, "end"):
			r.kind = kWaitEnd
		case w.DurationUs > 0:
			// Opcode text unknown (no <text>, no resolver): only an End
			// carries a duration, so that decides without a map key.
			r.kind = kWaitEnd
		default:
			r.kind = kWaitBegin
		}
	case "file_read", "file_read_completed", "file_write_completed":
		f, _ := xe.AsFileIO(ev, b.maps)
		switch {
		case f.Write:
			r.kind = kFileWriteCompleted
		case f.Completed:
			r.kind = kFileReadCompleted
		default:
			r.kind = kFileRead
		}
		r.a, r.b, r.c, r.d, r.e = f.DatabaseID, f.FileID, f.Offset, f.Size, f.DurationUs
		if r.a == 0 {
			r.a = db()
		}
		r.f = f.PageID
	case "query_thread_profile":
		p, _ := xe.AsThreadProfile(ev)
		r.kind = kThreadProfile
		r.a, r.b, r.c = p.NodeID, p.ThreadID, p.TotalTimeUs
	case "hash_warning", "sort_warning", "hash_spill_details", "exchange_spill":
		s, _ := xe.AsSpill(ev, b.maps)
		r.kind = kSpill
		_, r.flag = ev.Data("query_operation_node_id")
		r.a, r.b, r.c = s.QueryOperationNodeID, s.GrantedMemoryKB, s.UsedMemoryKB
		r.s1 = b.intern(ev.Name)
		r.s2 = b.intern(s.WarningType.Text)
	case "query_memory_grant_usage":
		g, _ := xe.AsMemoryGrantUsage(ev)
		r.kind = kGrantUsage
		r.b, r.c = g.GrantedMemoryKB, g.UsedMemoryKB
		r.s1 = b.intern(ev.Name)
	case "page_split":
		s, _ := xe.AsPageSplit(ev, b.maps)
		r.kind = kSplit
		r.a = s.DatabaseID
		if r.a == 0 {
			r.a = db()
		}
		r.b, r.c, r.d = s.FileID, s.PageID, s.RowsetID
		r.e = s.NewPageFileID<<32 | s.NewPagePageID
		r.s1 = b.intern(s.SplitOperation.String())
	case "transaction_log":
		l, _ := xe.AsTransactionLog(ev, b.maps)
		r.kind = kLogRecord
		r.a, r.b, r.c = l.DatabaseID, l.AllocUnitID, uint64(l.TransactionID)
		if l.LogRecordSize.Valid {
			r.d = l.LogRecordSize.Value
		}
		r.s1 = b.intern(l.Operation.String())
		r.s2 = b.intern(l.Context.String())
	case "lock_escalation":
		e, _ := xe.AsLockEscalation(ev, b.maps)
		r.kind = kEscalation
		r.a = e.DatabaseID
		if r.a == 0 {
			r.a = db()
		}
		r.b, r.c, r.d, r.e = e.HobtID, e.EscalatedLockCount, e.HobtLockCount, uint64(e.ObjectID)
		r.s1, r.s2, r.s3 = b.intern(e.Mode.String()), b.intern(e.ResourceType.String()), b.intern(e.EscalationCause.String())
	case "log_flush_complete":
		l, _ := xe.AsLogFlush(ev)
		r.kind = kLogFlush
		r.a, r.d, r.e = l.DatabaseID, l.WriteSize, l.DurationUs
	case "sql_batch_starting":
		r.kind = kBatchStarting
	case "sql_batch_completed":
		c, _ := xe.AsBatchCompleted(ev, b.maps)
		r.kind = kBatchCompleted
		r.a, r.b = c.DurationUs, c.RowCount
	case "sql_statement_completed":
		c, _ := xe.AsStatementCompleted(ev)
		r.kind = kStatementCompleted
		r.a = c.DurationUs
	default:
		b.other[ev.Name]++
		r.kind = kOther
	}
	r.stack = b.stackOf(ev)
	b.addExtra(&r)
	b.push(&r.rec)
}

// addExtra stores a record's extra fields, when it has any, and points
// the record at them.
func (b *Builder) addExtra(r *wide) {
	if r.recExtra == (recExtra{}) {
		return
	}
	r.x = b.extras.add(&r.recExtra)
}

// extraStore holds the records' extra fields in chunks of a fixed size:
// their number is unknown until Build, and a slice grown by append to
// tens of thousands of them allocated five times their size (issue 26
// performance). Index 0 is never used: rec.x 0 means none.
type extraStore struct {
	chunks [][]recExtra
	n      uint32 // entries stored, the unused 0 included
}

// extraChunk is the entries per chunk: 48 KB, so a trace of few rare
// events wastes little and a large one adds a chunk per thousand.
const extraChunk = 1024

// add stores e and returns its index.
func (s *extraStore) add(e *recExtra) uint32 {
	if s.n == 0 {
		s.n = 1
	}
	c := int(s.n / extraChunk)
	if c == len(s.chunks) {
		s.chunks = append(s.chunks, make([]recExtra, extraChunk))
	}
	s.chunks[c][s.n%extraChunk] = *e
	s.n++
	return s.n - 1
}

// at is the entry at index x (from add).
func (s *extraStore) at(x uint32) *recExtra { return &s.chunks[x/extraChunk][x%extraChunk] }

// addPage records a physical_page_read or physical_page_write (xe.AsPageIO's
// file_id and page_id, the database_id and event_sequence actions) in one
// pass over fields and actions, without building xe's Common.
func (b *Builder) addPage(ev *xe.Event) {
	r := rec{tsNs: ev.Timestamp.Time.UnixNano(), kind: kRead}
	if ev.Name == "physical_page_write" {
		r.kind = kWrite
	}
	var db, file, page uint64
	for i := range ev.Fields {
		f := &ev.Fields[i]
		switch f.Name {
		case "file_id":
			file, _ = f.Value.Uint()
		case "page_id":
			page, _ = f.Value.Uint()
		}
	}
	var stack string // as stackOf takes it
	for i := range ev.Actions {
		a := &ev.Actions[i]
		switch a.Name {
		case "event_sequence":
			if s, ok := a.Value.Uint(); ok {
				r.seq, r.hasSeq = s, true
			}
		case "database_id":
			db, _ = a.Value.Uint()
		case "callstack_rva":
			stack = a.Value.Raw
		case "callstack":
			if stack == "" {
				stack = a.Value.Raw
			}
		}
	}
	r.stack = b.internStack(stack)
	if k, ok := packPage(db, file, page); ok {
		r.a = k
		b.push(&r)
		return
	}
	// ids too wide to pack (never from SQL Server, whose ids are
	// smallint and int, but an event stream may say anything)
	w := wide{rec: r, recExtra: recExtra{b: file, c: page}}
	w.a, w.flag = db, true
	b.addExtra(&w)
	b.push(&w.rec)
}

// pageIDs unpacks a page event's database, file and page (addPage).
func (b *Builder) pageIDs(r *rec) (db, file, page uint64) {
	if !r.flag {
		return r.a >> 48, r.a >> 32 & 0xffff, r.a & 0xffffffff
	}
	var x recExtra
	if r.x != 0 {
		x = *b.extras.at(r.x)
	}
	return r.a, x.b, x.c
}

// push appends a record and notes what Build's passes would otherwise
// look for.
func (b *Builder) push(r *rec) {
	if r.hasSeq {
		if b.withSeq > 0 && r.seq < b.lastSeq {
			b.seqUnsorted = true
		}
		if b.withSeq > 0 && r.seq != b.lastSeq+1 {
			b.seqBroken = true
		}
		b.withSeq++
		b.lastSeq = r.seq
	}
	if len(b.recs) > 0 && r.tsNs < b.lastTs {
		b.tsUnsorted = true
	}
	b.lastTs = r.tsNs
	b.kinds[r.kind]++
	b.recs = append(b.recs, *r)
}

// stackOf interns the event's call stack (callstack_rva preferred: it
// carries the PDB identity) and returns its id, 0 when it has none.
func (b *Builder) stackOf(ev *xe.Event) uint32 {
	var text string
	for i := range ev.Actions {
		a := &ev.Actions[i]
		if len(a.Name) < len("callstack") || a.Name[0] != 'c' || a.Name[:len("callstack")] != "callstack" {
			continue
		}
		switch a.Name {
		case "callstack_rva":
			text = a.Value.Raw
		case "callstack":
			if text == "" {
				text = a.Value.Raw
			}
		}
	}
	return b.internStack(text)
}

// internStack returns the id of a call-stack text, 0 for none.
func (b *Builder) internStack(text string) uint32 {
	if text == "" {
		return 0
	}
	if id, ok := b.stackID[text]; ok {
		return id
	}
	if b.stackID == nil {
		b.stackID = map[string]uint32{}
	}
	text = strings.Clone(text) // the event may be a reused view
	b.stackText = append(b.stackText, text)
	id := uint32(len(b.stackText))
	b.stackID[text] = id
	return id
}
