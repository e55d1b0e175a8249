package engine

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The storage layout of a database: tables with their rows in clustered key
// order, indexes laid out on pages the way SQL Server lays out a B-tree (an
// IAM page per allocation unit, leaf pages in key order, a root page once
// there is more than one leaf page). Page ids are what the XE events, the
// %%physloc%% and %%lockres%% lookups and the page DMVs all report, so every
// view of the layout agrees. The server builds and changes these; the
// planner and the operators read them.

const (
	PageBytes = 8096                     // usable bytes on an 8 KB page (8192 − 96-byte header)
	HobtBase  = int64(72057594037927936) // 2^56: SQL Server hobt/partition/allocation-unit ids start here
)

// TableColumn is a column of a stored table.
type TableColumn struct {
	Column
	NotNull bool
	AvgSize int // estimated stored bytes, for rows-per-page
}

// Table is a stored table: its columns, clustered key and rows in
// clustered key order, and its indexes.
type Table struct {
	DB       *Database
	ObjectID int64
	Schema   string
	Name     string
	Columns  []TableColumn
	PK       []int // clustered key column positions
	PKName   string
	Rows     [][]any // sorted by clustered key
	Indexes  []*Index
	Created  time.Time
	RowBytes int
}

// Index is a B-tree of a table (ID 1: the clustered index) and its
// layout on pages.
type Index struct {
	Tbl         *Table
	ID          int // 1 = clustered
	Name        string
	KeyCols     []int // table column positions; nonclustered entries add the clustered key
	Unique, PK  bool
	PartitionID int64 // == hobt_id for a single-partition index
	AllocUnitID int64
	IAMPage     int32
	RootPage    int32 // 0 when the index has a single leaf page (the root is the leaf)
	LeafPages   []int32
	RowsPerPage int
	Entries     [][]any // nonclustered: key values + clustered key, sorted; rebuilt on change
}

// Database is a database's tables and its page and hobt allocation.
type Database struct {
	ID        int
	Name      string
	Tables    []*Table
	NextPage  int32
	NextHobt  int64
	PageOwner map[int32]*PageInfo
	// Procs holds the server's stored procedures (internal/standin owns
	// their type); the engine never reads it.
	Procs any
}

// PageInfo is what a page holds: its index, kind and level, and for a
// leaf page its position.
type PageInfo struct {
	Idx   *Index
	Kind  string // IAM_PAGE, DATA_PAGE, INDEX_PAGE
	Level int
	Pos   int // leaf position
}

// FullName is schema.name.
func (t *Table) FullName() string { return t.Schema + "." + t.Name }

// Column is the position of column name (any case), -1 when absent.
func (t *Table) Column(name string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// Table finds a table by schema (dbo when empty) and name, in any case.
func (db *Database) Table(schema, name string) *Table {
	if schema == "" {
		schema = "dbo"
	}
	for _, t := range db.Tables {
		if strings.EqualFold(t.Schema, schema) && strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// AllocPage allocates the next page id of the database's file.
func (db *Database) AllocPage() int32 {
	p := db.NextPage
	db.NextPage++
	return p
}

// AddIndex creates index id of t over the key columns keys, with its
// partition and allocation unit ids and its IAM page.
func (t *Table) AddIndex(id int, name string, keys []int, unique, pk bool) *Index {
	db := t.DB
	ix := &Index{Tbl: t, ID: id, Name: name, KeyCols: keys, Unique: unique, PK: pk}
	ix.PartitionID = HobtBase + db.NextHobt<<16
	ix.AllocUnitID = HobtBase + (db.NextHobt+1)<<16
	db.NextHobt += 2
	if id == 1 {
		ix.RowsPerPage = PageBytes / (t.RowBytes + 2)
	} else {
		size := 9 + 2 // NC row overhead + slot
		for _, k := range keys {
			size += t.Columns[k].AvgSize
		}
		for _, k := range t.PK {
			size += t.Columns[k].AvgSize
		}
		ix.RowsPerPage = PageBytes / size
	}
	ix.IAMPage = db.AllocPage()
	db.PageOwner[ix.IAMPage] = &PageInfo{Idx: ix, Kind: "IAM_PAGE"}
	t.Indexes = append(t.Indexes, ix)
	return ix
}

// Layout (re)assigns rows to leaf pages. Existing pages keep their ids; a
// growing index allocates new pages at the end of the file, a root page
// appears once there are two leaf pages.
func (ix *Index) Layout() {
	if ix.ID != 1 {
		ix.RebuildEntries()
	}
	ix.LayoutPages()
}

// LayoutPages allocates the leaf pages (and the root) the index's current
// entries need.
func (ix *Index) LayoutPages() {
	n := len(ix.Tbl.Rows)
	if ix.ID != 1 {
		n = len(ix.Entries)
	}
	need := (n + ix.RowsPerPage - 1) / ix.RowsPerPage
	if need == 0 {
		need = 1
	}
	db := ix.Tbl.DB
	for len(ix.LeafPages) < need {
		p := db.AllocPage()
		kind := "DATA_PAGE"
		if ix.ID != 1 {
			kind = "INDEX_PAGE"
		}
		db.PageOwner[p] = &PageInfo{Idx: ix, Kind: kind, Pos: len(ix.LeafPages)}
		ix.LeafPages = append(ix.LeafPages, p)
	}
	if len(ix.LeafPages) > 1 && ix.RootPage == 0 {
		ix.RootPage = db.AllocPage()
		db.PageOwner[ix.RootPage] = &PageInfo{Idx: ix, Kind: "INDEX_PAGE", Level: 1}
	}
}

// RebuildEntries rebuilds a nonclustered index's entries from the table's
// rows.
func (ix *Index) RebuildEntries() {
	t := ix.Tbl
	ix.Entries = ix.Entries[:0]
	for _, r := range t.Rows {
		e := make([]any, 0, len(ix.KeyCols)+len(t.PK))
		for _, k := range ix.KeyCols {
			e = append(e, r[k])
		}
		for _, k := range t.PK {
			e = append(e, r[k])
		}
		ix.Entries = append(ix.Entries, e)
	}
	sort.SliceStable(ix.Entries, func(a, b int) bool { return LessKey(ix.Entries[a], ix.Entries[b]) })
}

// LessKey orders index keys column by column.
func LessKey(a, b []any) bool {
	for i := range a {
		c, _ := CompareValues(a[i], b[i])
		if c != 0 {
			return c < 0
		}
	}
	return false
}

// KeyOf returns the clustered key values of a row.
func (t *Table) KeyOf(row []any) []any {
	k := make([]any, len(t.PK))
	for i, c := range t.PK {
		k[i] = row[c]
	}
	return k
}

// FindRow returns the position of the row with the given clustered key.
func (t *Table) FindRow(key []any) (int, bool) {
	i := sort.Search(len(t.Rows), func(i int) bool { return !LessKey(t.KeyOf(t.Rows[i]), key) })
	if i < len(t.Rows) && !LessKey(key, t.KeyOf(t.Rows[i])) {
		return i, true
	}
	return i, false
}

// rowLocation is where a row (or index entry) lives: page id and slot.
func (ix *Index) Location(pos int) (page int32, slot int) {
	p := pos / ix.RowsPerPage
	if p >= len(ix.LeafPages) {
		p = len(ix.LeafPages) - 1
	}
	return ix.LeafPages[p], pos % ix.RowsPerPage
}

// EntryPos finds the position of a table row's entry in this index.
func (ix *Index) EntryPos(row []any) int {
	t := ix.Tbl
	if ix.ID == 1 {
		i, _ := t.FindRow(t.KeyOf(row))
		return i
	}
	e := make([]any, 0, len(ix.KeyCols)+len(t.PK))
	for _, k := range ix.KeyCols {
		e = append(e, row[k])
	}
	for _, k := range t.PK {
		e = append(e, row[k])
	}
	return sort.Search(len(ix.Entries), func(i int) bool { return !LessKey(ix.Entries[i], e) })
}

// KeyHash is the stand-in's %%lockres%% value for an index key: 48 bits
// printed as "(" + 12 hex digits + ")", the format SQL Server uses. SQL
// Server's own hash function is undocumented; this one (FNV-1a over the key
// Values) is deterministic, so lock events and %%lockres%% lookups agree.
func (ix *Index) KeyHash(row []any) string {
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], ix.PartitionID, 10)
	b = append(b, '|')
	add := func(v any) {
		switch x := v.(type) {
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case string:
			b = append(b, x...)
		default:
			b = append(b, ValueString(v)...)
		}
		b = append(b, '|')
	}
	for _, k := range ix.KeyCols {
		add(row[k])
	}
	if ix.ID != 1 {
		for _, k := range ix.Tbl.PK {
			add(row[k])
		}
	}
	h := fnv.New64a()
	h.Write(b)
	v := h.Sum64() & 0xFFFFFFFFFFFF
	const digits = "0123456789abcdef"
	out := make([]byte, 14)
	out[0], out[13] = '(', ')'
	for i := 12; i >= 1; i-- {
		out[i] = digits[v&0xF]
		v >>= 4
	}
	return string(out)
}

// KeyHashResources splits a key hash into lock_acquired's resource_1 and
// resource_2, the inverse of the decoding in docs/design/tracing.md §5.3 [new IV]:
// high 16 bits = byteswap16(resource_1 >> 16), low 32 bits = byteswap32(resource_2).
func KeyHashResources(hash string) (r1, r2 uint32) {
	var v uint64
	fmt.Sscanf(strings.Trim(hash, "()"), "%x", &v)
	hi := uint16(v >> 32)
	lo := uint32(v)
	r1 = uint32(hi>>8|hi<<8) << 16
	r2 = lo>>24 | (lo>>8)&0xFF00 | (lo<<8)&0xFF0000 | lo<<24
	return r1, r2
}

// IndexByName finds an index of t by name or by id given as text.
func (t *Table) IndexByName(name string) *Index {
	for _, ix := range t.Indexes {
		if strings.EqualFold(ix.Name, name) || fmt.Sprint(ix.ID) == name {
			return ix
		}
	}
	return nil
}

// Nonclustered index maintenance row by row: a modification inserts or
// removes one entry at its place instead of re-sorting the index, so a
// statement changing many rows stays linear in them.

// EntryOf is row's entry in a nonclustered index: its key columns, then
// the clustered key.
func (ix *Index) EntryOf(row []any) []any {
	t := ix.Tbl
	e := make([]any, 0, len(ix.KeyCols)+len(t.PK))
	for _, k := range ix.KeyCols {
		e = append(e, row[k])
	}
	for _, k := range t.PK {
		e = append(e, row[k])
	}
	return e
}

// InsertEntry adds row's entry to a nonclustered index at its place.
func (ix *Index) InsertEntry(row []any) {
	e := ix.EntryOf(row)
	i := sort.Search(len(ix.Entries), func(i int) bool { return !LessKey(ix.Entries[i], e) })
	ix.Entries = append(ix.Entries, nil)
	copy(ix.Entries[i+1:], ix.Entries[i:])
	ix.Entries[i] = e
}

// RemoveEntry removes row's entry from a nonclustered index.
func (ix *Index) RemoveEntry(row []any) {
	e := ix.EntryOf(row)
	i := sort.Search(len(ix.Entries), func(i int) bool { return !LessKey(ix.Entries[i], e) })
	if i < len(ix.Entries) && !LessKey(e, ix.Entries[i]) {
		ix.Entries = append(ix.Entries[:i], ix.Entries[i+1:]...)
	}
}

// LockRes implements RowIndex.
func (ix *Index) LockRes(row []any) string { return ix.KeyHash(row) }

// PhysLoc implements RowIndex.
func (ix *Index) PhysLoc(row []any) []byte {
	page, slot := ix.Location(ix.EntryPos(row))
	return Physloc(page, 1, slot)
}
