package exporter

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// catalog names what the events identify by number: databases (from
// sys.databases), HoBTs (page_split's rowset_id, through sys.partitions)
// and pages (physical_page_read/write, through sys.dm_db_page_info). Every
// cache is bounded and expires, so renamed or dropped objects are named
// again; lookups are batched, bounded per poll, and a failed lookup only
// leaves names unresolved, never fails the poll.
type catalog struct {
	databases    map[uint64]string
	dbRefreshed  time.Time
	hobts        *expirable.LRU[idKey, objectName]
	pages        *expirable.LRU[pageKey, objIndex]
	objects      *expirable.LRU[objectKey, objectName]
	pageLookups  int
	pageInfoGone bool // sys.dm_db_page_info is missing (before SQL Server 2019)
}

type idKey struct{ db, id uint64 }
type objIndex struct{ object, index int64 }
type objectKey struct {
	db            uint64
	object, index int64
}

// objectName is the object and index labels of a HoBT or page.
type objectName struct{ object, index string }

const (
	catalogTTL       = time.Hour
	pageTTL          = 10 * time.Minute
	hobtCacheSize    = 50_000
	pageCacheSize    = 100_000
	objectCacheSize  = 50_000
	lookupBatch      = 500
	dbRefreshMinimum = 30 * time.Second
)

func newCatalog(pageLookups int) *catalog {
	return &catalog{
		databases:   map[uint64]string{},
		hobts:       expirable.NewLRU[idKey, objectName](hobtCacheSize, nil, catalogTTL),
		pages:       expirable.NewLRU[pageKey, objIndex](pageCacheSize, nil, pageTTL),
		objects:     expirable.NewLRU[objectKey, objectName](objectCacheSize, nil, catalogTTL),
		pageLookups: pageLookups,
	}
}

// databaseName returns the name of a database id, or "unknown".
func (c *catalog) databaseName(id uint64) string {
	if n, ok := c.databases[id]; ok {
		return n
	}
	return labelUnknown
}

// refreshDatabases reloads sys.databases when an id is missing, at most
// every dbRefreshMinimum
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-databases-transact-sql).
func (c *catalog) refreshDatabases(ctx context.Context, q querier, ids []uint64, force bool) error {
	missing := force
	for _, id := range ids {
		if _, ok := c.databases[id]; !ok && id != 0 {
			missing = true
		}
	}
	if !missing || (!force && time.Since(c.dbRefreshed) < dbRefreshMinimum) {
		return nil
	}
	rows, err := q.QueryContext(ctx, "SELECT database_id, name FROM sys.databases")
	if err != nil {
		return fmt.Errorf("list databases: %w", err)
	}
	defer rows.Close()
	dbs := map[uint64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return fmt.Errorf("list databases: %w", err)
		}
		dbs[uint64(id)] = name
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list databases: %w", err)
	}
	c.databases, c.dbRefreshed = dbs, time.Now()
	return nil
}

// resolveHoBTs names the HoBTs of page splits, one catalog query per
// database for the ids not cached (sys.partitions, sys.objects,
// sys.schemas, sys.indexes:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-partitions-transact-sql).
func (c *catalog) resolveHoBTs(ctx context.Context, q querier, want []idKey) error {
	byDB := map[uint64][]uint64{}
	for _, k := range want {
		if _, ok := c.hobts.Get(k); !ok && k.id != 0 {
			byDB[k.db] = append(byDB[k.db], k.id)
		}
	}
	for db, ids := range byDB {
		name, ok := c.databases[db]
		if !ok {
			continue
		}
		d := tsql.QuoteName(name)
		err := inBatches(ids, func(part []uint64) error {
			query := "SELECT p.hobt_id, s.name, o.name, i.name FROM " + d + ".sys.partitions AS p " +
				"JOIN " + d + ".sys.objects AS o ON o.object_id = p.object_id " +
				"JOIN " + d + ".sys.schemas AS s ON s.schema_id = o.schema_id " +
				"LEFT JOIN " + d + ".sys.indexes AS i ON i.object_id = p.object_id AND i.index_id = p.index_id " +
				"WHERE p.hobt_id IN (" + joinInts(part) + ")"
			return eachRow(ctx, q, query, func(rows *sql.Rows) error {
				var hobt int64
				var schema, table, index sql.NullString
				if err := rows.Scan(&hobt, &schema, &table, &index); err != nil {
					return err
				}
				c.hobts.Add(idKey{db, uint64(hobt)}, objectName{object: schema.String + "." + table.String, index: indexLabel(index)})
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("name HoBTs in database %s: %w", name, err)
		}
	}
	return nil
}

// inBatches calls fn on the sorted, distinct ids, lookupBatch at a time.
func inBatches(ids []uint64, fn func([]uint64) error) error {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for start := 0; start < len(ids); start += lookupBatch {
		if err := fn(ids[start:min(start+lookupBatch, len(ids))]); err != nil {
			return err
		}
	}
	return nil
}

// eachRow runs query and calls scan for each row.
func eachRow(ctx context.Context, q querier, query string, scan func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// indexLabel is an index name, or "heap" for a heap (index_id 0, no name).
func indexLabel(n sql.NullString) string {
	if !n.Valid || n.String == "" {
		return "heap"
	}
	return n.String
}

func (c *catalog) hobtName(db, hobt uint64) objectName {
	if n, ok := c.hobts.Get(idKey{db, hobt}); ok {
		return n
	}
	return objectName{labelUnknown, labelUnknown}
}

// resolvePages names up to pageLookups uncached pages with
// sys.dm_db_page_info (SQL Server 2019+,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-db-page-info-transact-sql),
// then their objects and indexes. Pages past the bound stay unresolved this
// poll; they are looked up in a later one when read again.
func (c *catalog) resolvePages(ctx context.Context, q querier, pages []pageKey) error {
	if c.pageLookups == 0 || c.pageInfoGone {
		return nil
	}
	byDB := map[uint64][]pageKey{}
	budget := c.pageLookups
	for _, p := range pages {
		if _, ok := c.pages.Get(p); ok || budget == 0 || p.db == 0 {
			continue
		}
		if _, known := c.databases[p.db]; !known {
			continue
		}
		budget--
		byDB[p.db] = append(byDB[p.db], p)
	}
	var objs []objectKey
	for db, list := range byDB {
		for start := 0; start < len(list); start += lookupBatch {
			part := list[start:min(start+lookupBatch, len(list))]
			values := make([]string, len(part))
			for i, p := range part {
				values[i] = fmt.Sprintf("(%d, %d)", p.file, p.page)
			}
			query := "SELECT v.f, v.p, pi.object_id, pi.index_id FROM (VALUES " + strings.Join(values, ", ") + ") AS v(f, p) " +
				fmt.Sprintf("CROSS APPLY sys.dm_db_page_info(%d, v.f, v.p, 'LIMITED') AS pi", db)
			err := eachRow(ctx, q, query, func(rows *sql.Rows) error {
				var file, page int64
				var obj, idx sql.NullInt64
				if err := rows.Scan(&file, &page, &obj, &idx); err != nil {
					return err
				}
				oi := objIndex{-1, -1}
				if obj.Valid {
					oi = objIndex{obj.Int64, idx.Int64}
					objs = append(objs, objectKey{db, obj.Int64, idx.Int64})
				}
				c.pages.Add(pageKey{db, uint64(file), uint64(page)}, oi)
				return nil
			})
			if isInvalidObject(err) {
				c.pageInfoGone = true
				return nil
			}
			if err != nil {
				// one bad page (freed, out of range) fails the batch: the
				// batch stays unresolved for the TTL rather than retried.
				for _, p := range part {
					if _, ok := c.pages.Get(p); !ok {
						c.pages.Add(p, objIndex{-1, -1})
					}
				}
				return fmt.Errorf("name pages in database %d: %w", db, err)
			}
		}
	}
	return c.resolveObjects(ctx, q, objs)
}

// resolveObjects names (object_id, index_id) pairs.
func (c *catalog) resolveObjects(ctx context.Context, q querier, want []objectKey) error {
	byDB := map[uint64][]uint64{}
	for _, k := range want {
		if _, ok := c.objects.Get(k); !ok {
			byDB[k.db] = append(byDB[k.db], uint64(k.object))
		}
	}
	for db, objIDs := range byDB {
		name := c.databases[db]
		d := tsql.QuoteName(name)
		err := inBatches(objIDs, func(part []uint64) error {
			query := "SELECT o.object_id, i.index_id, s.name, o.name, i.name FROM " + d + ".sys.objects AS o " +
				"JOIN " + d + ".sys.schemas AS s ON s.schema_id = o.schema_id " +
				"LEFT JOIN " + d + ".sys.indexes AS i ON i.object_id = o.object_id " +
				"WHERE o.object_id IN (" + joinInts(part) + ")"
			return eachRow(ctx, q, query, func(rows *sql.Rows) error {
				var obj int64
				var idx sql.NullInt64
				var schema, table, index sql.NullString
				if err := rows.Scan(&obj, &idx, &schema, &table, &index); err != nil {
					return err
				}
				c.objects.Add(objectKey{db, obj, idx.Int64}, objectName{object: schema.String + "." + table.String, index: indexLabel(index)})
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("name objects in database %s: %w", name, err)
		}
	}
	return nil
}

func (c *catalog) pageName(p pageKey) objectName {
	oi, ok := c.pages.Get(p)
	if !ok || oi.object < 0 {
		return objectName{labelUnknown, labelUnknown}
	}
	if n, ok := c.objects.Get(objectKey{p.db, oi.object, oi.index}); ok {
		return n
	}
	return objectName{labelUnknown, labelUnknown}
}

func joinInts(ids []uint64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}
