package tracer

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// maxParams keeps every lookup under SQL Server's 2,100 parameters per
// request (https://learn.microsoft.com/en-us/sql/sql-server/maximum-capacity-specifications-for-sql-server).
const maxParams = 2000

// resolveTimeout bounds name resolution; what is found by then is kept.
const resolveTimeout = time.Minute

type pageRef struct{ db, file, page uint64 }
type idRef struct{ db, id uint64 }

// identities are the storage identifiers the events touched.
type identities struct {
	pages      map[pageRef]bool
	hobts      map[idRef]bool
	allocUnits map[idRef]bool
	objects    map[idRef]bool
	keys       map[idRef]map[string]bool // hobt → %%lockres%% texts
}

func newIdentities() identities {
	return identities{pages: map[pageRef]bool{}, hobts: map[idRef]bool{}, allocUnits: map[idRef]bool{}, objects: map[idRef]bool{}, keys: map[idRef]map[string]bool{}}
}

func (i *identities) addPage(db, file, page uint64) { i.pages[pageRef{db, file, page}] = true }
func (i *identities) addHoBT(db, id uint64)         { i.hobts[idRef{db, id}] = true }
func (i *identities) addAllocUnit(db, id uint64)    { i.allocUnits[idRef{db, id}] = true }
func (i *identities) addObject(db, id uint64)       { i.objects[idRef{db, id}] = true }
func (i *identities) addKey(db, hobt uint64, desc string) {
	k := idRef{db, hobt}
	if i.keys[k] == nil {
		i.keys[k] = map[string]bool{}
	}
	i.keys[k][desc] = true
}

// nameCache caches allocation unit, HoBT and object names per database.
// Those ids never move to another object while it exists; pages do (a page
// freed by one table is reused by another), so pages are resolved per trace
// and never cached.
type nameCache struct {
	c *lru.Cache[string, timeline.ObjectName]
}

func newNameCache(size int) *nameCache {
	c, _ := lru.New[string, timeline.ObjectName](size) // only a size <= 0 fails
	return &nameCache{c: c}
}

func cacheKey(kind byte, db, id uint64) string { return fmt.Sprintf("%c:%d:%d", kind, db, id) }

// resolve names what the events touched in the traced database: pages →
// allocation units (one query), then allocation units, HoBTs and objects →
// schema/table/index (one batched catalog query), then key-lock hashes →
// rows (one query per index). Failures are recorded and the rest kept.
func (r *run) resolve(ctx context.Context, ids *identities) (*timeline.Catalog, map[timeline.LockKey]string, bundle.Resolution) {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	s := &nameResolver{r: r, ids: ids, db: uint64(r.info.databaseID)}
	cat := timeline.NewCatalog()
	pageAU := s.pageAllocUnits(ctx)
	s.nameObjects(ctx, cat, pageAU)
	lockRows := s.lockRows(ctx)
	return cat, lockRows, s.res
}

// nameResolver is one resolve call: the traced database, what the events
// touched, and what was resolved or failed so far.
type nameResolver struct {
	r   *run
	ids *identities
	db  uint64
	res bundle.Resolution
}

// local reports whether database id d is the traced database (0: events
// that do not say).
func (s *nameResolver) local(d uint64) bool { return d == s.db || d == 0 }

func (s *nameResolver) fail(step string, err error) {
	s.res.Errors = append(s.res.Errors, fmt.Sprintf("%s: %v", step, err))
}

// name is the cached name of an allocation unit ('a'), HoBT ('h') or
// object ('o') of the traced database.
func (s *nameResolver) name(kind byte, id uint64) (timeline.ObjectName, bool) {
	return s.r.t.names.c.Get(cacheKey(kind, s.db, id))
}

// DefaultMaxPageNames bounds the pages named after a trace when
// Options.MaxPageNames is 0: each is one sys.dm_db_page_info lookup of a
// page the query has just read (so in the buffer pool), a bounded cost.
const DefaultMaxPageNames = 20000

// Naming a page: its allocation unit, from the page's own header.
// sys.dm_db_page_info (SQL Server 2019+, Azure SQL Database, Managed
// Instance) reads one page per call; LIMITED is enough for alloc_unit_id:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-db-page-info-transact-sql
// Before 2019 only the undocumented sys.dm_db_database_page_allocations
// has it, and that walks every allocation of the database (minutes on a
// large one), so it runs only when Options.UndocumentedPageAllocations
// asks for it (docs/security.md, "What a trace does to the server").
const (
	sqlPageAllocUnitsPageInfo = "SELECT p.file_id, p.page_id, i.alloc_unit_id FROM (VALUES %s) AS p(file_id, page_id) " +
		"CROSS APPLY sys.dm_db_page_info(DB_ID(), p.file_id, p.page_id, 'LIMITED') AS i"
	sqlPageAllocUnitsAllocations = "SELECT allocated_page_file_id, allocated_page_page_id, allocation_unit_id " +
		"FROM sys.dm_db_database_page_allocations(DB_ID(), NULL, NULL, NULL, 'LIMITED') " +
		"WHERE allocated_page_page_id IN (%s)"
)

// pageAllocUnits maps the traced database's pages to their allocation
// units, at most MaxPageNames of them, without ever enumerating the
// database unasked.
func (s *nameResolver) pageAllocUnits(ctx context.Context) map[pageRef]uint64 {
	pages := s.localPages()
	limit := s.r.o.MaxPageNames
	if limit == 0 {
		limit = DefaultMaxPageNames
	}
	if limit < 0 || len(pages) == 0 {
		return nil
	}
	if len(pages) > limit {
		s.res.PageNameNote = fmt.Sprintf("pages named: %d of %d looked up (the limit)", limit, len(pages))
		pages = pages[:limit]
	}
	query, perPage := sqlPageAllocUnitsPageInfo, 2
	switch {
	case s.r.pageInfoAvailable():
	case s.r.o.UndocumentedPageAllocations:
		query, perPage = sqlPageAllocUnitsAllocations, 1
	default:
		s.res.PageNameNote = "pages are named through sys.dm_db_page_info (SQL Server 2019 and later); on this server only the " +
			"undocumented sys.dm_db_database_page_allocations can, which reads the whole database and runs only when asked for (--page-allocations-dmv)"
		return nil
	}
	pageAU := map[pageRef]uint64{}
	for start := 0; start < len(pages); start += maxParams / perPage {
		batch := pages[start:min(start+maxParams/perPage, len(pages))]
		list, args := pageList(batch, perPage == 2)
		if err := s.queryAllocUnits(ctx, fmt.Sprintf(query, list), args, pageAU); err != nil {
			s.fail("pages", err)
			break
		}
	}
	return pageAU
}

// localPages counts the pages the events touched and returns those of the
// traced database, each once, in file and page order.
func (s *nameResolver) localPages() []fp {
	seen := map[fp]bool{}
	var pages []fp
	for p := range s.ids.pages {
		s.res.Pages++
		if k := (fp{p.file, p.page}); s.local(p.db) && !seen[k] {
			seen[k] = true
			pages = append(pages, k)
		}
	}
	slices.SortFunc(pages, func(a, b fp) int { return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.page, b.page)) })
	return pages
}

// pageList is the parameter list of a page lookup: (file, page) pairs for
// a VALUES table, or page ids alone.
func pageList(pages []fp, pairs bool) (string, []any) {
	var list strings.Builder
	var args []any
	for i, p := range pages {
		if i > 0 {
			list.WriteString(", ")
		}
		if pairs {
			fmt.Fprintf(&list, "(@p%d, @p%d)", len(args)+1, len(args)+2)
			args = append(args, int64(p.file), int64(p.page))
			continue
		}
		fmt.Fprintf(&list, "@p%d", len(args)+1)
		args = append(args, int64(p.page))
	}
	return list.String(), args
}

// queryAllocUnits runs one page lookup and records the allocation unit of
// each traced page it returns.
func (s *nameResolver) queryAllocUnits(ctx context.Context, q string, args []any, pageAU map[pageRef]uint64) error {
	rows, err := s.r.conn.QueryContext(ctx, s.r.spec.Marker()+q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var file, page, au sql.NullInt64
		if err := rows.Scan(&file, &page, &au); err != nil {
			return err
		}
		if !au.Valid {
			continue
		}
		for _, d := range []uint64{s.db, 0} {
			if k := (pageRef{d, uint64(file.Int64), uint64(page.Int64)}); s.ids.pages[k] {
				pageAU[k] = uint64(au.Int64)
			}
		}
	}
	return rows.Err()
}

// nameObjects looks up the names not cached yet and adds the pages, HoBTs,
// allocation units and objects it can name to cat.
func (s *nameResolver) nameObjects(ctx context.Context, cat *timeline.Catalog, pageAU map[pageRef]uint64) {
	ids, db := s.ids, s.db
	// Allocation units, HoBTs and objects → names. sys.allocation_units,
	// sys.partitions, sys.objects, sys.schemas, sys.indexes:
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-allocation-units-transact-sql
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-partitions-transact-sql
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-indexes-transact-sql
	var want []lookup
	addWant := func(kind byte, id uint64) {
		if _, ok := s.name(kind, id); !ok {
			want = append(want, lookup{kind, id})
		}
	}
	for h := range ids.hobts {
		if s.local(h.db) {
			addWant('h', h.id)
		}
	}
	for a := range ids.allocUnits {
		if s.local(a.db) {
			addWant('a', a.id)
		}
	}
	for _, au := range pageAU {
		addWant('a', au)
	}
	for o := range ids.objects {
		if s.local(o.db) {
			addWant('o', o.id)
		}
	}
	want = dedupe(want)
	for _, batch := range batches(want, maxParams) {
		if err := s.r.lookupNames(ctx, db, batch); err != nil {
			s.fail("names", err)
			break
		}
	}
	for p := range ids.pages {
		if au, ok := pageAU[p]; ok {
			if n, ok := s.name('a', au); ok {
				cat.AddPage(p.db, p.file, p.page, n)
				s.res.PagesNamed++
			}
		}
	}
	for h := range ids.hobts {
		s.res.HoBTs++
		if n, ok := s.name('h', h.id); ok && s.local(h.db) {
			cat.AddHoBT(h.db, h.id, n)
			s.res.HoBTsNamed++
		}
	}
	for a := range ids.allocUnits {
		if n, ok := s.name('a', a.id); ok && s.local(a.db) {
			cat.AddAllocUnit(a.db, a.id, n)
		}
	}
	for o := range ids.objects {
		if n, ok := s.name('o', o.id); ok && s.local(o.db) {
			cat.AddObject(o.db, o.id, n)
		}
	}
}

// lockRows resolves key-lock hashes to rows, within the MaxLockRows budget.
func (s *nameResolver) lockRows(ctx context.Context) map[timeline.LockKey]string {
	r, ids, res := s.r, s.ids, &s.res
	lockRows := map[timeline.LockKey]string{}
	// Key-lock hashes → rows: %%lockres%% depends on the index read, so each
	// index is read WITH (INDEX(…)) (docs/design/tracing.md §12, §17 item 7);
	// %%physloc%% gives the row's file:page:slot in that index.
	hobtKeys := make([]idRef, 0, len(ids.keys))
	for h := range ids.keys {
		hobtKeys = append(hobtKeys, h)
	}
	slices.SortFunc(hobtKeys, func(a, b idRef) int { return cmp.Compare(a.id, b.id) })
	budget := r.o.MaxLockRows
	for i, h := range hobtKeys {
		hashes := ids.keys[h]
		res.KeyLocks += len(hashes)
		n, ok := s.name('h', h.id)
		if !s.local(h.db) || !ok || n.Index == "" || budget <= 0 {
			continue
		}
		list := make([]any, 0, len(hashes))
		for d := range hashes {
			list = append(list, d)
		}
		slices.SortFunc(list, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		// Share what is left evenly among the indexes still to come.
		if share := max(1, budget/(len(hobtKeys)-i)); len(list) > share {
			list = list[:share]
		}
		if note := r.lockScanTooCostly(ctx, h.id, n); note != "" {
			res.Errors = append(res.Errors, note)
			continue
		}
		budget -= len(list)
		for _, batch := range batches(list, maxParams) {
			found, err := r.lookupKeysBounded(ctx, n, batch)
			if err != nil {
				s.fail("key locks on "+n.String(), err)
				break
			}
			for d, row := range found {
				lockRows[timeline.LockKey{DatabaseID: h.db, HoBTID: h.id, Hash: d}] = row
				res.KeyLocksRows++
			}
		}
	}
	if res.KeyLocksRows < res.KeyLocks && r.o.MaxLockRows >= 0 && res.KeyLocks > r.o.MaxLockRows {
		res.Errors = append(res.Errors, fmt.Sprintf("key locks: %d of %d resolved to rows (limit %d)", res.KeyLocksRows, res.KeyLocks, r.o.MaxLockRows))
	}
	return lockRows
}

type lookup struct {
	kind byte
	id   uint64
}

func dedupe(l []lookup) []lookup {
	slices.SortFunc(l, func(a, b lookup) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return cmp.Compare(a.id, b.id)
	})
	return slices.Compact(l)
}

// lookupNames runs the batched catalog query for one batch of ids and fills
// the cache.
func (r *run) lookupNames(ctx context.Context, db uint64, batch []lookup) error {
	var hobts, aus, objs []any
	for _, l := range batch {
		switch l.kind {
		case 'h':
			hobts = append(hobts, int64(l.id))
		case 'a':
			aus = append(aus, int64(l.id))
		case 'o':
			objs = append(objs, int64(l.id))
		}
	}
	var conds []string
	var args []any
	n := 0
	in := func(col string, vals []any) {
		if len(vals) == 0 {
			return
		}
		ph := make([]string, len(vals))
		for i := range vals {
			n++
			ph[i] = fmt.Sprintf("@p%d", n)
		}
		conds = append(conds, col+" IN ("+strings.Join(ph, ", ")+")")
		args = append(args, vals...)
	}
	in("p.hobt_id", hobts)
	in("au.allocation_unit_id", aus)
	in("p.object_id", objs)
	if len(conds) == 0 {
		return nil
	}
	q := r.spec.Marker() + "SELECT au.allocation_unit_id, p.hobt_id, p.object_id, s.name, o.name, i.name " +
		"FROM sys.allocation_units AS au " +
		"JOIN sys.partitions AS p ON p.hobt_id = au.container_id " +
		"JOIN sys.objects AS o ON o.object_id = p.object_id " +
		"JOIN sys.schemas AS s ON s.schema_id = o.schema_id " +
		"LEFT JOIN sys.indexes AS i ON i.object_id = p.object_id AND i.index_id = p.index_id " +
		"WHERE " + strings.Join(conds, " OR ")
	rows, err := r.conn.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	dbName := r.info.database
	for rows.Next() {
		var au, hobt, obj sql.NullInt64
		var schema, table, index sql.NullString
		if err := rows.Scan(&au, &hobt, &obj, &schema, &table, &index); err != nil {
			return err
		}
		name := timeline.ObjectName{Database: dbName, Schema: schema.String, Table: table.String, Index: index.String}
		r.t.names.c.Add(cacheKey('a', db, uint64(au.Int64)), name)
		r.t.names.c.Add(cacheKey('h', db, uint64(hobt.Int64)), name)
		r.t.names.c.Add(cacheKey('o', db, uint64(obj.Int64)), timeline.ObjectName{Database: dbName, Schema: schema.String, Table: table.String})
	}
	return rows.Err()
}

// lockResSQL selects the rows of one index by %%lockres%%; the names come
// from the server's catalog and are quoted, the hashes are n parameters.
// READUNCOMMITTED: the lookup scans the whole index, and under READ
// COMMITTED its shared locks would make the server's writers wait on
// every page it passes; it takes none this way (only a schema stability
// lock). The rows it names are the ones the trace touched, which a dirty
// read finds as well as a clean one. Table hints:
// https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-table
func lockResSQL(n timeline.ObjectName, count int) string {
	return "SELECT %%lockres%%, %%physloc%% FROM " + tsql.QuoteName(n.Schema) + "." + tsql.QuoteName(n.Table) +
		" WITH (INDEX(" + tsql.QuoteName(n.Index) + "), READUNCOMMITTED) WHERE %%lockres%% IN (" + placeholders(count) + ")"
}

// lockLookupTimeout bounds one %%lockres%% lookup; one that runs longer is
// cancelled (the driver sends an attention) and reported.
const lockLookupTimeout = 10 * time.Second

// indexPagesSQL sums the pages used by every partition of the index the
// hobt (one partition of it) belongs to: what a %%lockres%% scan of that
// index reads. sys.allocation_units ties an in-row or row-overflow unit to
// the partition's hobt_id and a LOB unit to its partition_id
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-allocation-units-transact-sql);
// the two are the same number for rowstore partitions, and both are
// matched. A catalog view: it needs only metadata visibility.
const indexPagesSQL = "SELECT SUM(au.used_pages) FROM sys.partitions AS h " +
	"JOIN sys.partitions AS p ON p.object_id = h.object_id AND p.index_id = h.index_id " +
	"JOIN sys.allocation_units AS au ON au.container_id = p.hobt_id OR au.container_id = p.partition_id " +
	"WHERE h.hobt_id = @p1"

// lockScanTooCostly says why the key locks of one index are not looked up
// (its size is over MaxLockScanPages, or cannot be read), or "".
func (r *run) lockScanTooCostly(ctx context.Context, hobt uint64, n timeline.ObjectName) string {
	if r.o.MaxLockScanPages < 0 {
		return ""
	}
	pages, err := r.indexPages(ctx, hobt)
	if err != nil {
		return fmt.Sprintf("key locks on %s: not resolved to rows: the index's size could not be read (%v), and a lookup scans the whole index", n, err)
	}
	if pages.Int64 > int64(r.o.MaxLockScanPages) {
		return fmt.Sprintf("key locks on %s: not resolved to rows: the index has %d pages, over the limit of %d that a lookup may scan (MaxLockScanPages, --max-lock-scan-pages)", n, pages.Int64, r.o.MaxLockScanPages)
	}
	return ""
}

// indexPages runs indexPagesSQL for one hobt.
func (r *run) indexPages(ctx context.Context, hobt uint64) (sql.NullInt64, error) {
	var pages sql.NullInt64
	rows, err := r.conn.QueryContext(ctx, r.spec.Marker()+indexPagesSQL, int64(hobt))
	if err != nil {
		return pages, err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&pages); err != nil {
			return pages, err
		}
	}
	return pages, rows.Err()
}

// lookupKeysBounded is lookupKeys within lockLookupTimeout.
func (r *run) lookupKeysBounded(ctx context.Context, n timeline.ObjectName, hashes []any) (map[string]string, error) {
	lctx, cancel := context.WithTimeout(ctx, lockLookupTimeout)
	defer cancel()
	found, err := r.lookupKeys(lctx, n, hashes)
	if err != nil && lctx.Err() != nil && ctx.Err() == nil {
		return found, fmt.Errorf("the lookup ran longer than %s and was cancelled: %w", lockLookupTimeout, err)
	}
	return found, err
}

// lookupKeys finds the rows of one index whose %%lockres%% is in hashes
// (%%lockres%% and %%physloc%% are undocumented virtual columns,
// docs/design/tracing.md §12). Identifiers are quoted; hashes are parameters.
func (r *run) lookupKeys(ctx context.Context, n timeline.ObjectName, hashes []any) (map[string]string, error) {
	q := r.spec.Marker() + lockResSQL(n, len(hashes))
	rows, err := r.conn.QueryContext(ctx, q, hashes...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var res sql.NullString
		var loc []byte
		if err := rows.Scan(&res, &loc); err != nil {
			return out, err
		}
		out[strings.TrimSpace(res.String)] = FormatPhysLoc(loc)
	}
	return out, rows.Err()
}

// FormatPhysLoc renders a %%physloc%% value (binary(8): page id u32, file id
// u16, slot u16, little-endian) as (file:page:slot), the form of
// sys.fn_PhysLocFormatter.
func FormatPhysLoc(b []byte) string {
	if len(b) != 8 {
		return fmt.Sprintf("0x%x", b)
	}
	page := binary.LittleEndian.Uint32(b[0:4])
	file := binary.LittleEndian.Uint16(b[4:6])
	slot := binary.LittleEndian.Uint16(b[6:8])
	return fmt.Sprintf("(%d:%d:%d)", file, page, slot)
}

// placeholders returns "@p1, @p2, …, @pn" (go-mssqldb's positional names).
func placeholders(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "@p%d", i)
	}
	return b.String()
}

// batches splits s into runs of at most n.
func batches[T any](s []T, n int) [][]T {
	var out [][]T
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if len(s) > 0 {
		out = append(out, s)
	}
	return out
}
