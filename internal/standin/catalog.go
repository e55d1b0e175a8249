package standin

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

// The demo database. Its storage layout (pages, hobts, allocation units) is
// computed the way SQL Server lays out a B-tree: an IAM page per allocation
// unit, leaf pages in key order, and a root page above the leaf level once
// there is more than one leaf page. Page ids are what the XE events, the
// %%physloc%% and %%lockres%% lookups and the page DMVs all report, so every
// view of the layout agrees.

const (
	demoDBName = "QueryReplayDemo"
	demoDBID   = 5
	pageBytes  = 8096                     // usable bytes on an 8 KB page (8192 − 96-byte header)
	hobtBase   = int64(72057594037927936) // 2^56: SQL Server hobt/partition/allocation-unit ids start here
)

type tableColumn struct {
	engine.Column
	NotNull bool
	avgSize int // estimated stored bytes, for rows-per-page
}

type table struct {
	db       *database
	objectID int64
	schema   string
	name     string
	columns  []tableColumn
	pk       []int // clustered key column positions
	pkName   string
	rows     [][]any // sorted by clustered key
	indexes  []*index
	created  time.Time
	rowBytes int
}

type index struct {
	tbl         *table
	id          int // 1 = clustered
	name        string
	keyCols     []int // table column positions; nonclustered entries add the clustered key
	unique, pk  bool
	partitionID int64 // == hobt_id for a single-partition index
	allocUnitID int64
	iamPage     int32
	rootPage    int32 // 0 when the index has a single leaf page (the root is the leaf)
	leafPages   []int32
	rowsPerPage int
	entries     [][]any // nonclustered: key values + clustered key, sorted; rebuilt on change
}

type database struct {
	id        int
	name      string
	tables    []*table
	nextPage  int32
	nextHobt  int64
	pageOwner map[int32]*pageInfo
	procs     map[string]*procedure // procs.go
}

type pageInfo struct {
	idx   *index
	kind  string // IAM_PAGE, DATA_PAGE, INDEX_PAGE
	level int
	pos   int // leaf position
}

func (t *table) fullName() string { return t.schema + "." + t.name }

func (t *table) column(name string) int {
	for i, c := range t.columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func (db *database) table(schema, name string) *table {
	if schema == "" {
		schema = "dbo"
	}
	for _, t := range db.tables {
		if strings.EqualFold(t.schema, schema) && strings.EqualFold(t.name, name) {
			return t
		}
	}
	return nil
}

func (db *database) allocPage() int32 {
	p := db.nextPage
	db.nextPage++
	return p
}

// newDemoDatabase builds the demo data deterministically (fixed seed), so
// tests can rely on exact row counts and page ids.
func newDemoDatabase(created time.Time) *database {
	db := &database{id: demoDBID, name: demoDBName, nextPage: 288, nextHobt: 1000, pageOwner: map[int32]*pageInfo{}}
	rng := rand.New(rand.NewSource(20261129))
	regions := []string{"North", "South", "East", "West"}
	statuses := []string{"New", "Paid", "Shipped", "Closed"}
	categories := []string{"Tools", "Garden", "Kitchen", "Toys", "Books"}

	customers := &table{db: db, objectID: 581577110, schema: "dbo", name: "Customers", pkName: "PK_Customers", created: created,
		columns: []tableColumn{
			{engine.Column{Name: "CustomerID", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "Name", Type: engine.TNVar(100)}, true, 34},
			{engine.Column{Name: "Region", Type: engine.TNVar(20)}, true, 10},
			{engine.Column{Name: "CreatedAt", Type: engine.TDT2}, true, 8},
		}, pk: []int{0}}
	for i := 1; i <= 1000; i++ {
		customers.rows = append(customers.rows, []any{int64(i), fmt.Sprintf("Customer %04d", i), regions[rng.Intn(4)],
			created.AddDate(0, 0, -rng.Intn(1500))})
	}
	products := &table{db: db, objectID: 613577224, schema: "dbo", name: "Products", pkName: "PK_Products", created: created,
		columns: []tableColumn{
			{engine.Column{Name: "ProductID", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "Name", Type: engine.TNVar(100)}, true, 30},
			{engine.Column{Name: "Category", Type: engine.TNVar(30)}, true, 12},
			{engine.Column{Name: "ListPrice", Type: engine.TFloat}, true, 8},
		}, pk: []int{0}}
	for i := 1; i <= 200; i++ {
		products.rows = append(products.rows, []any{int64(i), fmt.Sprintf("Product %03d", i), categories[rng.Intn(5)],
			float64(100+rng.Intn(99900)) / 100})
	}
	orders := &table{db: db, objectID: 645577338, schema: "dbo", name: "Orders", pkName: "PK_Orders", created: created,
		columns: []tableColumn{
			{engine.Column{Name: "OrderID", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "CustomerID", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "OrderDate", Type: engine.TDT2}, true, 8},
			{engine.Column{Name: "Amount", Type: engine.TFloat}, true, 8},
			{engine.Column{Name: "Status", Type: engine.TNVar(20)}, true, 12},
		}, pk: []int{0}}
	lines := &table{db: db, objectID: 677577452, schema: "dbo", name: "OrderLines", pkName: "PK_OrderLines", created: created,
		columns: []tableColumn{
			{engine.Column{Name: "OrderID", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "LineNumber", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "ProductID", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "Quantity", Type: engine.TInt}, true, 4},
			{engine.Column{Name: "Price", Type: engine.TFloat}, true, 8},
		}, pk: []int{0, 1}}
	for i := 1; i <= 10000; i++ {
		amount := 0.0
		n := 1 + rng.Intn(5)
		for l := 1; l <= n; l++ {
			price := products.rows[rng.Intn(200)][3].(float64)
			qty := int64(1 + rng.Intn(9))
			amount += price * float64(qty)
			lines.rows = append(lines.rows, []any{int64(i), int64(l), int64(1 + rng.Intn(200)), qty, price})
		}
		orders.rows = append(orders.rows, []any{int64(i), int64(1 + rng.Intn(1000)), created.AddDate(0, 0, -rng.Intn(700)),
			float64(int64(amount*100)) / 100, statuses[rng.Intn(4)]})
	}
	for _, t := range []*table{customers, products, orders, lines} {
		db.tables = append(db.tables, t)
		size := 11 // row header, null bitmap, variable-offset array
		for _, c := range t.columns {
			size += c.avgSize
		}
		t.rowBytes = size
		t.addIndex(1, t.pkName, t.pk, true, true)
	}
	orders.addIndex(2, "IX_Orders_CustomerID", []int{1}, false, false)
	for _, t := range db.tables {
		for _, ix := range t.indexes {
			ix.layout()
		}
	}
	installDemoProcedures(db, created) // procs.go
	return db
}

func (t *table) addIndex(id int, name string, keys []int, unique, pk bool) *index {
	db := t.db
	ix := &index{tbl: t, id: id, name: name, keyCols: keys, unique: unique, pk: pk}
	ix.partitionID = hobtBase + db.nextHobt<<16
	ix.allocUnitID = hobtBase + (db.nextHobt+1)<<16
	db.nextHobt += 2
	if id == 1 {
		ix.rowsPerPage = pageBytes / (t.rowBytes + 2)
	} else {
		size := 9 + 2 // NC row overhead + slot
		for _, k := range keys {
			size += t.columns[k].avgSize
		}
		for _, k := range t.pk {
			size += t.columns[k].avgSize
		}
		ix.rowsPerPage = pageBytes / size
	}
	ix.iamPage = db.allocPage()
	db.pageOwner[ix.iamPage] = &pageInfo{idx: ix, kind: "IAM_PAGE"}
	t.indexes = append(t.indexes, ix)
	return ix
}

// layout (re)assigns rows to leaf pages. Existing pages keep their ids; a
// growing index allocates new pages at the end of the file, a root page
// appears once there are two leaf pages.
func (ix *index) layout() {
	if ix.id != 1 {
		ix.rebuildEntries()
	}
	ix.layoutPages()
}

// layoutPages allocates the leaf pages (and the root) the index's current
// entries need.
func (ix *index) layoutPages() {
	n := len(ix.tbl.rows)
	if ix.id != 1 {
		n = len(ix.entries)
	}
	need := (n + ix.rowsPerPage - 1) / ix.rowsPerPage
	if need == 0 {
		need = 1
	}
	db := ix.tbl.db
	for len(ix.leafPages) < need {
		p := db.allocPage()
		kind := "DATA_PAGE"
		if ix.id != 1 {
			kind = "INDEX_PAGE"
		}
		db.pageOwner[p] = &pageInfo{idx: ix, kind: kind, pos: len(ix.leafPages)}
		ix.leafPages = append(ix.leafPages, p)
	}
	if len(ix.leafPages) > 1 && ix.rootPage == 0 {
		ix.rootPage = db.allocPage()
		db.pageOwner[ix.rootPage] = &pageInfo{idx: ix, kind: "INDEX_PAGE", level: 1}
	}
}

func (ix *index) rebuildEntries() {
	t := ix.tbl
	ix.entries = ix.entries[:0]
	for _, r := range t.rows {
		e := make([]any, 0, len(ix.keyCols)+len(t.pk))
		for _, k := range ix.keyCols {
			e = append(e, r[k])
		}
		for _, k := range t.pk {
			e = append(e, r[k])
		}
		ix.entries = append(ix.entries, e)
	}
	sort.SliceStable(ix.entries, func(a, b int) bool { return lessKey(ix.entries[a], ix.entries[b]) })
}

func lessKey(a, b []any) bool {
	for i := range a {
		c, _ := engine.CompareValues(a[i], b[i])
		if c != 0 {
			return c < 0
		}
	}
	return false
}

// keyOf returns the clustered key values of a row.
func (t *table) keyOf(row []any) []any {
	k := make([]any, len(t.pk))
	for i, c := range t.pk {
		k[i] = row[c]
	}
	return k
}

// findRow returns the position of the row with the given clustered key.
func (t *table) findRow(key []any) (int, bool) {
	i := sort.Search(len(t.rows), func(i int) bool { return !lessKey(t.keyOf(t.rows[i]), key) })
	if i < len(t.rows) && !lessKey(key, t.keyOf(t.rows[i])) {
		return i, true
	}
	return i, false
}

// rowLocation is where a row (or index entry) lives: page id and slot.
func (ix *index) location(pos int) (page int32, slot int) {
	p := pos / ix.rowsPerPage
	if p >= len(ix.leafPages) {
		p = len(ix.leafPages) - 1
	}
	return ix.leafPages[p], pos % ix.rowsPerPage
}

// entryPos finds the position of a table row's entry in this index.
func (ix *index) entryPos(row []any) int {
	t := ix.tbl
	if ix.id == 1 {
		i, _ := t.findRow(t.keyOf(row))
		return i
	}
	e := make([]any, 0, len(ix.keyCols)+len(t.pk))
	for _, k := range ix.keyCols {
		e = append(e, row[k])
	}
	for _, k := range t.pk {
		e = append(e, row[k])
	}
	return sort.Search(len(ix.entries), func(i int) bool { return !lessKey(ix.entries[i], e) })
}

// keyHash is the stand-in's %%lockres%% value for an index key: 48 bits
// printed as "(" + 12 hex digits + ")", the format SQL Server uses. SQL
// Server's own hash function is undocumented; this one (FNV-1a over the key
// Values) is deterministic, so lock events and %%lockres%% lookups agree.
func (ix *index) keyHash(row []any) string {
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], ix.partitionID, 10)
	b = append(b, '|')
	add := func(v any) {
		switch x := v.(type) {
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case string:
			b = append(b, x...)
		default:
			b = append(b, engine.ValueString(v)...)
		}
		b = append(b, '|')
	}
	for _, k := range ix.keyCols {
		add(row[k])
	}
	if ix.id != 1 {
		for _, k := range ix.tbl.pk {
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

// keyHashResources splits a key hash into lock_acquired's resource_1 and
// resource_2, the inverse of the decoding in docs/design/tracing.md §5.3 [new IV]:
// high 16 bits = byteswap16(resource_1 >> 16), low 32 bits = byteswap32(resource_2).
func keyHashResources(hash string) (r1, r2 uint32) {
	var v uint64
	fmt.Sscanf(strings.Trim(hash, "()"), "%x", &v)
	hi := uint16(v >> 32)
	lo := uint32(v)
	r1 = uint32(hi>>8|hi<<8) << 16
	r2 = lo>>24 | (lo>>8)&0xFF00 | (lo<<8)&0xFF0000 | lo<<24
	return r1, r2
}

// indexByName finds an index of t by name or by id given as text.
func (t *table) indexByName(name string) *index {
	for _, ix := range t.indexes {
		if strings.EqualFold(ix.name, name) || fmt.Sprint(ix.id) == name {
			return ix
		}
	}
	return nil
}
