package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Data access operators: clustered and nonclustered index scans and seeks,
// key lookups, heap table scans of temporary tables. They read pages
// (logical reads; physical reads with PAGEIOLATCH waits, or read-ahead,
// for pages not in the buffer pool), take the READ COMMITTED locks SQL
// Server takes (IS on the table, S on each page a scan reads or each key a
// seek returns, released at once) and wait where another transaction holds
// an incompatible lock.

type scanIter struct {
	n      *PlanNode
	t      *Table
	ix     *Index
	qual   string
	schema *Relation
	colMap []int // output column i is table column colMap[i]
	seek   *seekSpec
	pred   sqlfront.Expr
	nolock bool
	dop    int

	// a key lookup: seeks the clustered index by the clustered key values
	// the outer row carries at keyPos
	lookup bool
	keyPos []int

	// run state
	outer    *EvalEnv
	ranges   [][2]int // entry positions [lo, hi) per range
	ri       int
	pos      int
	lastKey  []any // key of the last entry read, to reposition after yields and waits
	seenLen  int
	page     int32
	pageIdx  int
	env      EvalEnv
	done     bool
	readHead int // leaf position read ahead up to
}

func (s *scanIter) Node() *PlanNode { return s.n }

// buildScan makes a scan or seek of ix with the given local predicates.
func (p *Planner) buildScan(leaf *fromLeaf, ix *Index, spec *seekSpec, local []sqlfront.Expr, est float64, forced bool) Iter {
	t := ix.Tbl
	s := &scanIter{t: t, ix: ix, qual: leaf.qual, seek: spec}
	if leaf.tn != nil {
		s.nolock = xevents.HasString(leaf.tn.Hints, "NOLOCK") || xevents.HasString(leaf.tn.Hints, "READUNCOMMITTED")
	}
	var residual []sqlfront.Expr
	for _, c := range local {
		used := false
		if spec != nil {
			for _, u := range spec.used {
				if u == c {
					used = true
				}
			}
		}
		if !used {
			residual = append(residual, c)
		}
	}
	s.pred = AndAll(residual)
	s.schema = &Relation{}
	base := &ColBase{Db: t.DB.Name, Schema: t.Schema, Table: t.Name, Alias: leaf.qual}
	add := func(c int) {
		col := t.Columns[c]
		s.colMap = append(s.colMap, c)
		s.schema.Cols = append(s.schema.Cols, RelCol{Qual: leaf.qual, Name: col.Name, Typ: col.Type, Hidden: strings.HasPrefix(col.Name, "%%"), Base: base})
	}
	if ix.ID == 1 {
		for c := range t.Columns {
			add(c)
		}
	} else {
		seen := map[int]bool{}
		for _, c := range append(append([]int{}, ix.KeyCols...), t.PK...) {
			if !seen[c] {
				seen[c] = true
				add(c)
			}
		}
	}
	phys := physicalScanName(ix, spec != nil)
	n := p.newNode(phys, phys, s.schema)
	n.Index = ix
	n.alias = leaf.qual
	n.EstRows = est
	rows := float64(len(t.Rows))
	pages := float64(len(ix.LeafPages))
	if spec != nil {
		frac := math.Min(1, est/math.Max(rows, 1))
		n.estRowsRead = math.Max(est, 1)
		n.EstIO = 0.003125 * (1 + math.Ceil(frac*pages))
		n.EstCPU = 0.0001581 + 0.0000011*n.estRowsRead
	} else {
		n.estRowsRead = rows
		n.EstIO = 0.003125 + 0.00074074*pages
		n.EstCPU = 0.0001581 + 0.0000011*rows
	}
	n.SubtreeCost = n.EstIO + n.EstCPU
	n.rowSize = rowSizeOf(s.schema)
	n.forced = forced
	n.Details = s.Showplan
	s.n = n
	return s
}

// physicalScanName is the showplan operator for reading ix.
func physicalScanName(ix *Index, seek bool) string {
	switch {
	case ix.Name == "":
		return "Table Scan"
	case ix.ID == 1 && seek:
		return "Clustered Index Seek"
	case ix.ID == 1:
		return "Clustered Index Scan"
	case seek:
		return "Index Seek"
	}
	return "Index Scan"
}

// buildLookup makes the key lookup into the clustered index for rows an
// outer nonclustered seek found.
func (p *Planner) buildLookup(leaf *fromLeaf, outer *scanIter, local []sqlfront.Expr, est float64) Iter {
	t := leaf.tbl
	ix := t.Indexes[0]
	s := &scanIter{t: t, ix: ix, qual: leaf.qual, lookup: true, pred: AndAll(local), nolock: outer.nolock}
	have := map[int]bool{}
	for _, c := range outer.colMap {
		have[c] = true
	}
	s.schema = &Relation{}
	base := &ColBase{Db: t.DB.Name, Schema: t.Schema, Table: t.Name, Alias: leaf.qual}
	for c, col := range t.Columns {
		if have[c] {
			continue
		}
		s.colMap = append(s.colMap, c)
		s.schema.Cols = append(s.schema.Cols, RelCol{Qual: leaf.qual, Name: col.Name, Typ: col.Type, Base: base})
	}
	for _, k := range t.PK {
		for i, c := range outer.colMap {
			if c == k {
				s.keyPos = append(s.keyPos, i)
			}
		}
	}
	n := p.newNode("Clustered Index Seek", "Clustered Index Seek", s.schema)
	n.Index = ix
	n.alias = leaf.qual
	n.lookup = true
	n.EstRows = 1
	n.EstExecs = math.Max(est, 1)
	n.EstIO = 0.003125
	n.EstCPU = 0.0001581
	n.SubtreeCost = n.EstExecs * (n.EstIO + n.EstCPU)
	n.rowSize = rowSizeOf(s.schema)
	n.Details = s.Showplan
	s.n = n
	return s
}

// entries is the number of entries in the index.
func (s *scanIter) entries() int {
	if s.ix.ID == 1 {
		return len(s.t.Rows)
	}
	return len(s.ix.Entries)
}

// keyAt is the index key of entry pos (the clustered key for the
// clustered index, the index key plus clustered key otherwise).
func (s *scanIter) keyAt(pos int) []any {
	if s.ix.ID == 1 {
		return s.t.KeyOf(s.t.Rows[pos])
	}
	return s.ix.Entries[pos]
}

// rowAt is the table row of entry pos.
func (s *scanIter) rowAt(pos int) []any {
	if s.ix.ID == 1 {
		return s.t.Rows[pos]
	}
	e := s.ix.Entries[pos]
	if i, ok := s.t.FindRow(e[len(s.ix.KeyCols):]); ok {
		return s.t.Rows[i]
	}
	return nil
}

// searchLead finds the first entry whose leading key is >= v (or > v).
func (s *scanIter) searchLead(v any, after bool) int {
	return sort.Search(s.entries(), func(i int) bool {
		c, err := CompareValues(s.keyAt(i)[0], v)
		if err != nil {
			return true
		}
		if after {
			return c > 0
		}
		return c >= 0
	})
}

func (s *scanIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	x := r.X
	s.outer = outer
	s.env = EvalEnv{X: x, Rel: s.schema, Outer: outer}
	s.done = false
	s.page = -1
	s.ri, s.pos, s.lastKey = 0, 0, nil
	s.readHead = 0
	c := s.n.Counters(r.thread)
	c.scans++
	if s.lookup {
		return nil
	}
	if !s.nolock && !x.ReadUncommitted() {
		x.TransientObjectLock(s.t, "IS")
	}
	if err := s.computeRanges(r); err != nil {
		return err
	}
	if s.seek != nil && s.ix.RootPage != 0 {
		readIndexPage(x, r, s.n, s.ix.RootPage)
	}
	return nil
}

// computeRanges evaluates the seek ranges (with the outer row in scope),
// first waiting for other transactions' uncommitted deletes of keys in
// them (the ghost records a real seek would meet).
func (s *scanIter) computeRanges(r *RunCtx) *sqlfront.SQLError {
	s.ranges = s.ranges[:0]
	s.seenLen = s.entries()
	if s.seek == nil {
		s.ranges = append(s.ranges, [2]int{0, s.entries()})
		return nil
	}
	for _, kr := range s.seek.ranges {
		lo, hi := 0, s.entries()
		var loV, hiV any
		if kr.lo != nil {
			v, err := s.env.Eval(kr.lo)
			if err != nil {
				return err
			}
			if v == nil {
				continue // comparisons with NULL match nothing
			}
			loV = v
		}
		if kr.hi != nil {
			v, err := s.env.Eval(kr.hi)
			if err != nil {
				return err
			}
			if v == nil {
				continue
			}
			hiV = v
		}
		if !s.nolock && !r.X.ReadUncommitted() {
			if err := r.X.WaitForGhosts(s.t, s.ix, loV, hiV); err != nil {
				return err
			}
		}
		if loV != nil {
			lo = s.searchLead(loV, !kr.loIncl)
		}
		if hiV != nil {
			hi = s.searchLead(hiV, kr.hiIncl)
		}
		if lo < hi {
			s.ranges = append(s.ranges, [2]int{lo, hi})
		}
	}
	return nil
}

// reposition moves pos past lastKey after the index changed under the
// scan (another session's insert or delete while this one yielded or
// waited).
func (s *scanIter) reposition() {
	if s.entries() == s.seenLen {
		return
	}
	s.seenLen = s.entries()
	if s.lastKey == nil {
		return
	}
	s.pos = sort.Search(s.entries(), func(i int) bool { return LessKey(s.lastKey, s.keyAt(i)) })
	if s.seek != nil {
		// the range ends moved too: recompute them by key
		for i := range s.ranges {
			if s.ranges[i][1] > s.entries() {
				s.ranges[i][1] = s.entries()
			}
		}
	}
}

func (s *scanIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if s.lookup {
		return s.nextLookup(r)
	}
	x := r.X
	for !s.done {
		s.reposition()
		if s.ri >= len(s.ranges) {
			s.done = true
			break
		}
		rg := s.ranges[s.ri]
		if s.pos < rg[0] {
			s.pos = rg[0]
		}
		if s.pos >= rg[1] || s.pos >= s.entries() {
			s.ri++
			continue
		}
		pos := s.pos
		pageIdx := pos / s.ix.RowsPerPage
		if s.dop > 1 {
			r.thread = 1 + pageIdx*s.dop/max(1, len(s.ix.LeafPages))
			x.SetThread(r.thread)
		}
		upd := x.UpdTarget(s.t) // the rows an UPDATE/DELETE may change: U, not S (the server's ulocks.go)
		if pageIdx < len(s.ix.LeafPages) && s.ix.LeafPages[pageIdx] != s.page {
			page := s.ix.LeafPages[pageIdx]
			if s.seek == nil && upd {
				if err := x.UpdPageLock(s.ix, page); err != nil {
					return nil, err
				}
				if s.entries() != s.seenLen {
					continue // the page changed while this scan waited
				}
			} else if s.seek == nil && !s.nolock && !x.ReadUncommitted() {
				if err := x.ReadPageLock(s.ix, page); err != nil {
					return nil, err
				}
				if s.entries() != s.seenLen {
					continue // the page changed while this scan waited
				}
			}
			s.page = page
			readLeafPage(x, r, s, pageIdx)
		}
		row := s.rowAt(pos)
		s.lastKey = s.keyAt(pos)
		s.pos++
		s.n.Counters(r.thread).rowsRead++
		x.Advance(300 * time.Nanosecond)
		if row == nil {
			continue
		}
		if upd {
			if err := x.UpdRowLock(s.ix, row); err != nil {
				return nil, err
			}
			i, ok := s.t.FindRow(s.t.KeyOf(row))
			if !ok {
				x.UpdRelease(s.ix, row)
				continue
			}
			row = s.t.Rows[i]
		} else if s.seek != nil && !s.nolock && !x.ReadUncommitted() {
			if err := x.ReadKeyLock(s.ix, row); err != nil {
				return nil, err
			}
			// read the row again under its lock: the holder may have
			// changed or removed it while this session waited
			i, ok := s.t.FindRow(s.t.KeyOf(row))
			if !ok {
				continue
			}
			row = s.t.Rows[i]
		}
		t, ok, err := s.emit(r, row)
		if err != nil {
			return nil, err
		}
		if ok {
			return t, nil
		}
		if upd {
			x.UpdRelease(s.ix, row) // the row does not qualify: its U lock goes at once
		}
		if err := r.tick(); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// emit projects a table row and applies the residual predicate.
func (s *scanIter) emit(r *RunCtx, row []any) (*Tuple, bool, *sqlfront.SQLError) {
	vals := make([]any, len(s.colMap))
	for i, c := range s.colMap {
		vals[i] = row[c]
	}
	srcs := []RowSource{{Qual: s.qual, Row: row}}
	if s.ix != nil { // a nil *index must not become a non-nil RowIndex
		srcs[0].Ix = s.ix
	}
	if s.lookup {
		srcs = nil // the outer seek's index row is the source (%%lockres%% of the hinted index)
	}
	if s.pred != nil {
		s.env.Row, s.env.Srcs = vals, srcs
		v, err := s.env.Eval(s.pred)
		if err != nil {
			return nil, false, err
		}
		if b, _ := Truth(v); !b {
			return nil, false, nil
		}
	}
	return &Tuple{Vals: vals, Srcs: srcs, thread: r.thread}, true, nil
}

// nextLookup returns the clustered row for the outer row's key (once per
// execution).
func (s *scanIter) nextLookup(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if s.done {
		return nil, nil
	}
	s.done = true
	x := r.X
	key := make([]any, len(s.keyPos))
	for i, p := range s.keyPos {
		key[i] = s.outer.Row[p]
	}
	i, ok := s.t.FindRow(key)
	if !ok {
		return nil, nil
	}
	row := s.t.Rows[i]
	if s.ix.RootPage != 0 {
		readIndexPage(x, r, s.n, s.ix.RootPage)
	}
	page, _ := s.ix.Location(i)
	readPage(x, r, s.n, page, false)
	upd := x.UpdTarget(s.t)
	if upd || !s.nolock && !x.ReadUncommitted() {
		var err *sqlfront.SQLError
		if upd {
			err = x.UpdRowLock(s.ix, row)
		} else {
			err = x.ReadKeyLock(s.ix, row)
		}
		if err != nil {
			return nil, err
		}
		j, ok := s.t.FindRow(key)
		if !ok {
			return nil, nil
		}
		row = s.t.Rows[j]
	}
	s.n.Counters(r.thread).rowsRead++
	t, ok2, err := s.emit(r, row)
	if err != nil || !ok2 {
		if upd && err == nil {
			x.UpdRelease(s.ix, row)
		}
		return nil, err
	}
	return t, nil
}

func (s *scanIter) Close(r *RunCtx) {
	if s.dop > 1 {
		r.thread = 0
		r.X.SetThread(0)
	}
}

// readLeafPage reads a leaf page of a scan, issuing read-ahead for the
// following pages when the scan is not a seek and trace flag 652 is off.
func readLeafPage(x Exec, r *RunCtx, s *scanIter, pageIdx int) {
	pages := s.ix.LeafPages
	if s.seek == nil && !x.TraceFlag(652) && pageIdx > 0 && pageIdx >= s.readHead {
		end := min(pageIdx+64, len(pages))
		readAheadPages(x, r, s.n, pages[pageIdx:end])
		s.readHead = end
	}
	readPage(x, r, s.n, pages[pageIdx], false)
}

// readIndexPage reads a non-leaf page (a seek's or lookup's root).
func readIndexPage(x Exec, r *RunCtx, n *PlanNode, page int32) {
	readPage(x, r, n, page, false)
}

// readPage touches one page: a logical read, and a physical read with its
// PAGEIOLATCH wait when the page is not in the buffer pool.
func readPage(x Exec, r *RunCtx, n *PlanNode, page int32, readAhead bool) {
	c := n.Counters(r.thread)
	c.logical++
	x.CountReads(1, 0)
	if x.PageCached(page) {
		x.Advance(2 * time.Microsecond)
		return
	}
	c.physical++
	x.CountReads(0, 1)
	wait := time.Duration(180+int(page%7)*95) * time.Microsecond
	res := xevents.FPtr("wait_resource", 0x000001E4A1000000+uint64(page)*0x40)
	if !readAhead && x.AnySessionRunning() {
		x.Emit(&xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: x.Advance(3 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("wait_type", "wait_types", "sqlos", "PAGEIOLATCH_SH"), xevents.FMap("opcode", "event_opcode", "sqlos", "Begin"),
			xevents.FUint("duration", "uint64", 0), xevents.FUint("signal_duration", "uint64", 0), res}})
	}
	fileRead(x, page, 1, wait)
	x.Emit(&xevents.EventData{Name: "physical_page_read", Pkg: "sqlserver", Time: x.Advance(1 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(page))}})
	if !readAhead && x.AnySessionRunning() {
		x.Emit(&xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: x.Advance(2 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("wait_type", "wait_types", "sqlos", "PAGEIOLATCH_SH"), xevents.FMap("opcode", "event_opcode", "sqlos", "End"),
			xevents.FUint("duration", "uint64", wait.Milliseconds()), xevents.FUint("signal_duration", "uint64", 0), res}})
	}
	x.CachePage(page)
}

// fileRead emits file_read and file_read_completed for an I/O of n pages
// starting at page, taking d.
func fileRead(x Exec, page int32, n int, d time.Duration) {
	if !x.AnySessionRunning() {
		x.Advance(d)
		return
	}
	size := int64(n) * 8192
	fields := func(done bool) []xevents.Field {
		f := []xevents.Field{xevents.FUint("database_id", "uint32", int64(x.DatabaseID())), xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(page)),
			xevents.FUint("file_group_id", "uint16", 1), xevents.FUint("offset", "uint64", int64(page)*8192), xevents.FUint("size", "uint32", size),
			xevents.FMap("mode", "file_io_mode", "sqlserver", "Contiguous")}
		if done {
			f = append(f, xevents.FUint("duration", "uint64", d.Milliseconds()))
		}
		return f
	}
	x.Emit(&xevents.EventData{Name: "file_read", Pkg: "sqlserver", Time: x.Advance(2 * time.Microsecond), Fields: fields(false)})
	x.Advance(d)
	x.Emit(&xevents.EventData{Name: "file_read_completed", Pkg: "sqlserver", Time: x.Clock(), Fields: fields(true)})
}

// readAheadPages issues one read-ahead I/O for the uncached pages among
// the next ones of a scan (what trace flag 652 turns off): a single
// file_read of up to 64 contiguous pages, physical_page_read per page, and
// no PAGEIOLATCH wait for the scan.
func readAheadPages(x Exec, r *RunCtx, n *PlanNode, pages []int32) {
	var run []int32
	for _, p := range pages {
		if x.PageCached(p) {
			break
		}
		if len(run) > 0 && p != run[len(run)-1]+1 {
			break
		}
		run = append(run, p)
	}
	if len(run) == 0 {
		return
	}
	fileRead(x, run[0], len(run), time.Duration(400+30*len(run))*time.Microsecond)
	c := n.Counters(r.thread)
	for _, p := range run {
		x.Emit(&xevents.EventData{Name: "physical_page_read", Pkg: "sqlserver", Time: x.Advance(1 * time.Microsecond), Fields: []xevents.Field{
			xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(p))}})
		x.CachePage(p)
		c.readAheads++
		x.CountReads(0, 1)
	}
}

// rowSizeOf estimates a row's size in bytes as the optimizer does:
// variable-length columns at half their declared size.
func rowSizeOf(r *Relation) int {
	n := 9
	for _, c := range r.Cols {
		n += TypeSize(c.Typ)
	}
	return n
}

// TypeSize is the bytes the optimizer assumes for a value of type t.
func TypeSize(t sqlfront.SQLType) int {
	switch t.Kind {
	case sqlfront.TypeInt:
		return 4
	case sqlfront.TypeBigInt, sqlfront.TypeFloat, sqlfront.TypeDateTime2:
		return 8
	case sqlfront.TypeSmallInt:
		return 2
	case sqlfront.TypeTinyInt, sqlfront.TypeBit:
		return 1
	case sqlfront.TypeDecimal:
		return 9
	case sqlfront.TypeDate:
		return 3
	case sqlfront.TypeUniqueIdentifier:
		return 16
	case sqlfront.TypeNVarChar:
		if t.Size == 0 {
			return 4000
		}
		return t.Size
	case sqlfront.TypeVarBinary:
		if t.Size == 0 {
			return 4000
		}
		return t.Size / 2
	}
	return 8
}

func (s *scanIter) Showplan(b *XMLBuilder) {
	if s.ix.Name == "" {
		b.Open("TableScan", "Ordered", "false", "ForcedIndex", "false", "ForceScan", "false", "NoExpandHint", "false", "Storage", "RowStore")
	} else {
		attrs := []string{"Ordered", fmt.Sprint(s.seek != nil || s.lookup), "ScanDirection", "FORWARD", "ForcedIndex", fmt.Sprint(s.n.forced),
			"ForceSeek", "false", "ForceScan", "false", "NoExpandHint", "false", "Storage", "RowStore"}
		if s.lookup {
			attrs = append([]string{"Lookup", "true"}, attrs...)
		}
		b.Open("IndexScan", attrs...)
	}
	b.definedValues(s.schema)
	b.Object(s.ix, s.qual)
	if s.lookup {
		b.seekLookup(s)
	} else if s.seek != nil {
		b.seekPredicates(s)
	}
	if s.pred != nil {
		b.predicate("Predicate", s.pred, s.schema)
	}
	b.Close()
}
