package exporter

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
)

// The catalog lookups that name databases, HoBTs and pages, run against
// the stand-in and checked against its storage layout (standin's
// DatabaseNames, HoBTOwner, PageOwner), with a querier that counts the
// queries (the caches) and fails the ones a test picks (errors).

// countingQuerier passes queries to a real connection, counts them, and
// fails those containing failOn.
type countingQuerier struct {
	q       querier
	queries []string
	failOn  string
}

var errInjected = errors.New("injected failure")

func (c *countingQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.queries = append(c.queries, query)
	if c.failOn != "" && strings.Contains(query, c.failOn) {
		return nil, errInjected
	}
	return c.q.QueryContext(ctx, query, args...)
}

func (c *countingQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.q.ExecContext(ctx, query, args...)
}

// catalogFixture is a stand-in, a connection to it and a fresh catalog
// whose database names are loaded.
type catalogFixture struct {
	run *standin.Running
	db  *sql.DB
	q   *countingQuerier
	cat *catalog
}

func newCatalogFixture(t *testing.T, persona string, pageLookups int) *catalogFixture {
	t.Helper()
	run := startPersona(t, persona)
	db := workloadDB(t, run.DSN)
	f := &catalogFixture{run: run, db: db, q: &countingQuerier{q: db}, cat: newCatalog(pageLookups)}
	if err := f.cat.refreshDatabases(testCtx(t), f.q, nil, true); err != nil {
		t.Fatal(err)
	}
	return f
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// hobtIDs lists the HoBT ids of a database's partitions.
func (f *catalogFixture) hobtIDs(t *testing.T, database string) []uint64 {
	t.Helper()
	rows, err := f.db.QueryContext(testCtx(t), "SELECT hobt_id FROM "+database+".sys.partitions")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []uint64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, uint64(id))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatalf("%s has no partitions", database)
	}
	return ids
}

func wantName(so standin.StorageOwner, ok bool) objectName {
	o, i := storageOwner(so, ok)
	return objectName{o, i}
}

func TestCatalogNamesDatabases(t *testing.T) {
	f := newCatalogFixture(t, "", 0)
	for id, name := range f.run.Server.DatabaseNames() {
		if got := f.cat.databaseName(uint64(id)); got != name {
			t.Errorf("database %d named %q, want %q", id, got, name)
		}
	}
	if got := f.cat.databaseName(4242); got != labelUnknown {
		t.Errorf("an unknown database id is named %q", got)
	}
	// a known id never reloads the list; an unknown one does, at most
	// every dbRefreshMinimum
	n := len(f.q.queries)
	for range 3 {
		if err := f.cat.refreshDatabases(testCtx(t), f.q, []uint64{5, 4242}, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(f.q.queries) - n; got != 0 {
		t.Errorf("%d sys.databases queries within the refresh minimum, want 0", got)
	}
	// a failed reload keeps the names already known
	f.q.failOn = "sys.databases"
	err := f.cat.refreshDatabases(testCtx(t), f.q, nil, true)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "list databases") {
		t.Errorf("refresh error = %v", err)
	}
	if got := f.cat.databaseName(5); got != "QueryReplayDemo" {
		t.Errorf("after a failed refresh database 5 is named %q", got)
	}
}

func TestCatalogNamesHoBTs(t *testing.T) {
	f := newCatalogFixture(t, "", 0)
	ids := f.hobtIDs(t, "QueryReplayDemo")
	var want []idKey
	for _, id := range ids {
		want = append(want, idKey{5, id})
	}
	// an unknown HoBT, HoBT 0 and a database with no name stay unknown
	want = append(want, idKey{5, 12345}, idKey{5, 0}, idKey{4242, ids[0]})
	if err := f.cat.resolveHoBTs(testCtx(t), f.q, want); err != nil {
		t.Fatal(err)
	}
	if got := len(f.q.queries); got != 2 { // sys.databases, then one query for database 5
		t.Errorf("%d queries, want 2: %q", got, f.q.queries)
	}
	for _, id := range ids {
		if got, w := f.cat.hobtName(5, id), wantName(f.run.Server.HoBTOwner(5, int64(id))); got != w {
			t.Errorf("HoBT %d named %v, want %v", id, got, w)
		}
	}
	unknown := objectName{labelUnknown, labelUnknown}
	for _, k := range want[len(ids):] {
		if got := f.cat.hobtName(k.db, k.id); got != unknown {
			t.Errorf("HoBT %d of database %d named %v, want unknown", k.id, k.db, got)
		}
	}
	// cached: the same HoBTs again cost no query
	n := len(f.q.queries)
	if err := f.cat.resolveHoBTs(testCtx(t), f.q, want[:len(ids)]); err != nil {
		t.Fatal(err)
	}
	if got := len(f.q.queries) - n; got != 0 {
		t.Errorf("%d queries for cached HoBTs", got)
	}
}

// A table created, named, then dropped: the name resolved while it existed
// stays cached (events counted before the drop keep their labels); a
// catalog that asks after the drop gets no row and leaves it unknown.
func TestCatalogDroppedObject(t *testing.T) {
	f := newCatalogFixture(t, "", 0)
	before := map[uint64]bool{}
	for _, id := range f.hobtIDs(t, "QueryReplayDemo") {
		before[id] = true
	}
	runSQL(t, f.db, "CREATE TABLE dbo.Scratch (ScratchID int NOT NULL PRIMARY KEY, Note nvarchar(20) NULL)")
	var scratch uint64
	for _, id := range f.hobtIDs(t, "QueryReplayDemo") {
		if !before[id] {
			scratch = id
		}
	}
	if scratch == 0 {
		t.Fatal("CREATE TABLE added no partition")
	}
	key := []idKey{{5, scratch}}
	if err := f.cat.resolveHoBTs(testCtx(t), f.q, key); err != nil {
		t.Fatal(err)
	}
	named := f.cat.hobtName(5, scratch)
	if named.object != "dbo.Scratch" || named != wantName(f.run.Server.HoBTOwner(5, int64(scratch))) {
		t.Fatalf("the new table's HoBT is named %v", named)
	}
	runSQL(t, f.db, "DROP TABLE dbo.Scratch")
	if _, ok := f.run.Server.HoBTOwner(5, int64(scratch)); ok {
		t.Fatal("the stand-in still has the dropped table's HoBT")
	}
	if err := f.cat.resolveHoBTs(testCtx(t), f.q, key); err != nil {
		t.Fatal(err)
	}
	if got := f.cat.hobtName(5, scratch); got != named {
		t.Errorf("the cached name changed to %v before its TTL", got)
	}
	fresh := newCatalog(0)
	if err := fresh.refreshDatabases(testCtx(t), f.q, nil, true); err != nil {
		t.Fatal(err)
	}
	if err := fresh.resolveHoBTs(testCtx(t), f.q, key); err != nil {
		t.Fatal(err)
	}
	if got := fresh.hobtName(5, scratch); got != (objectName{labelUnknown, labelUnknown}) {
		t.Errorf("the dropped table's HoBT is named %v, want unknown", got)
	}
}

// A failing HoBT lookup returns an error naming the database, leaves the
// names unknown, and is not cached: the next poll asks again and names them.
func TestCatalogHoBTLookupError(t *testing.T) {
	f := newCatalogFixture(t, "", 0)
	ids := f.hobtIDs(t, "QueryReplayDemo")
	key := []idKey{{5, ids[0]}}
	f.q.failOn = "sys.partitions"
	err := f.cat.resolveHoBTs(testCtx(t), f.q, key)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "name HoBTs in database QueryReplayDemo") {
		t.Fatalf("lookup error = %v", err)
	}
	if got := f.cat.hobtName(5, ids[0]); got != (objectName{labelUnknown, labelUnknown}) {
		t.Errorf("after a failed lookup the HoBT is named %v", got)
	}
	f.q.failOn = ""
	if err := f.cat.resolveHoBTs(testCtx(t), f.q, key); err != nil {
		t.Fatal(err)
	}
	if got, w := f.cat.hobtName(5, ids[0]), wantName(f.run.Server.HoBTOwner(5, int64(ids[0]))); got != w {
		t.Errorf("after the failure cleared the HoBT is named %v, want %v", got, w)
	}
}

// ownedPages returns up to n pages of the demo database that an index owns
// and one that none owns, from the stand-in's layout.
func ownedPages(t *testing.T, srv *standin.Server, n int) (owned []pageKey, free pageKey) {
	t.Helper()
	for p := int64(0); p < 100_000 && (len(owned) < n || free.page == 0); p++ {
		_, ok := srv.PageOwner(5, p)
		switch {
		case ok && len(owned) < n:
			owned = append(owned, pageKey{5, 1, uint64(p)})
		case !ok && p > 0 && free.page == 0 && len(owned) > 0:
			free = pageKey{5, 1, uint64(p)}
		}
	}
	if len(owned) < n || free.page == 0 {
		t.Fatalf("found %d owned pages and free page %d", len(owned), free.page)
	}
	return owned, free
}

// Page names on SQL Server 2019: resolved through sys.dm_db_page_info,
// bounded by page_lookups_per_poll (the rest are named in a later call),
// cached, and unknown for a page no index owns.
func TestCatalogNamesPages(t *testing.T) {
	f := newCatalogFixture(t, "sql2019", 4)
	owned, free := ownedPages(t, f.run.Server, 6)
	pages := append(append([]pageKey{}, owned...), free, pageKey{4242, 1, owned[0].page})
	check := func(resolved int) {
		t.Helper()
		named := 0
		for _, p := range owned {
			got := f.cat.pageName(p)
			if got.object == labelUnknown {
				continue
			}
			named++
			if w := wantName(f.run.Server.PageOwner(5, int64(p.page))); got != w {
				t.Errorf("page %d named %v, want %v", p.page, got, w)
			}
		}
		if named != resolved {
			t.Errorf("%d of the owned pages named, want %d", named, resolved)
		}
		for _, p := range pages[len(owned):] {
			if got := f.cat.pageName(p); got != (objectName{labelUnknown, labelUnknown}) {
				t.Errorf("page %d of database %d named %v, want unknown", p.page, p.db, got)
			}
		}
	}
	if err := f.cat.resolvePages(testCtx(t), f.q, pages); err != nil {
		t.Fatal(err)
	}
	check(4) // the budget: 4 lookups per call, the free page not among them
	if err := f.cat.resolvePages(testCtx(t), f.q, pages); err != nil {
		t.Fatal(err)
	}
	check(len(owned))
	n := len(f.q.queries)
	if err := f.cat.resolvePages(testCtx(t), f.q, owned); err != nil {
		t.Fatal(err)
	}
	if got := len(f.q.queries) - n; got != 0 {
		t.Errorf("%d queries for cached pages", got)
	}
}

// Before SQL Server 2019 sys.dm_db_page_info does not exist: the first
// lookup finds that out (Msg 208), returns no error, and no lookup is tried
// again; pages stay unknown.
func TestCatalogPagesWithoutPageInfo(t *testing.T) {
	f := newCatalogFixture(t, "sql2017", 100)
	owned, _ := ownedPages(t, f.run.Server, 3)
	for range 2 {
		if err := f.cat.resolvePages(testCtx(t), f.q, owned); err != nil {
			t.Fatal(err)
		}
	}
	pageQueries := 0
	for _, q := range f.q.queries {
		if strings.Contains(q, "dm_db_page_info") {
			pageQueries++
		}
	}
	if pageQueries != 1 {
		t.Errorf("%d sys.dm_db_page_info queries, want 1", pageQueries)
	}
	for _, p := range owned {
		if got := f.cat.pageName(p); got != (objectName{labelUnknown, labelUnknown}) {
			t.Errorf("page %d named %v without sys.dm_db_page_info", p.page, got)
		}
	}
}

// A page lookup that fails (a page past the end of the file: Msg 2561)
// returns an error naming the database and leaves its batch unknown for
// the page TTL, without asking again each poll.
func TestCatalogPageLookupError(t *testing.T) {
	f := newCatalogFixture(t, "sql2019", 100)
	owned, _ := ownedPages(t, f.run.Server, 2)
	bad := pageKey{5, 1, 50_000_000}
	batch := append(append([]pageKey{}, owned...), bad)
	err := f.cat.resolvePages(testCtx(t), f.q, batch)
	if err == nil || !strings.Contains(err.Error(), "name pages in database 5") {
		t.Fatalf("lookup error = %v", err)
	}
	for _, p := range batch {
		if got := f.cat.pageName(p); got != (objectName{labelUnknown, labelUnknown}) {
			t.Errorf("page %d named %v after its batch failed", p.page, got)
		}
	}
	n := len(f.q.queries)
	if err := f.cat.resolvePages(testCtx(t), f.q, batch); err != nil {
		t.Fatal(err)
	}
	if got := len(f.q.queries) - n; got != 0 {
		t.Errorf("%d queries for a batch that failed within the TTL", got)
	}
}
