package tracer

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// DefaultMaxPageHeaders bounds the page headers read after a trace when
// Options.MaxPageHeaders is 0.
const DefaultMaxPageHeaders = 2000

// Where page headers come from (Resolution.PageHeaderSource).
const (
	PageHeadersPageInfo    = "sys.dm_db_page_info"
	PageHeadersAllocations = "sys.dm_db_database_page_allocations"
)

// sqlPageInfo reads the headers of a list of pages: page type, B-tree level
// and the previous/next page at that level. sys.dm_db_page_info exists from
// SQL Server 2019 and on Azure SQL Database and Managed Instance; DETAILED
// fills the description columns (page_type_desc), which LIMITED leaves
// NULL. It needs VIEW DATABASE STATE (VIEW DATABASE PERFORMANCE STATE from
// SQL Server 2022):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-db-page-info-transact-sql
const sqlPageInfo = "SELECT p.file_id, p.page_id, i.page_type_desc, i.page_level, i.prev_page_file_id, i.prev_page_page_id, " +
	"i.next_page_file_id, i.next_page_page_id, i.object_id, i.index_id FROM (VALUES %s) AS p(file_id, page_id) " +
	"CROSS APPLY sys.dm_db_page_info(DB_ID(), p.file_id, p.page_id, 'DETAILED') AS i"

// sqlPageAllocations is the fallback before SQL Server 2019:
// sys.dm_db_database_page_allocations is UNDOCUMENTED (SQL Server 2012+;
// docs/design/tracing.md §11), unsupported by Microsoft, and its DETAILED mode reads
// every page header of the database's allocations — so it runs only when
// Options.UndocumentedPageAllocations asks for it. It takes the same
// columns from the allocation rows of the traced pages.
const sqlPageAllocations = "SELECT allocated_page_file_id, allocated_page_page_id, page_type_desc, page_level, previous_page_file_id, " +
	"previous_page_page_id, next_page_file_id, next_page_page_id, object_id, index_id " +
	"FROM sys.dm_db_database_page_allocations(DB_ID(), NULL, NULL, NULL, 'DETAILED') WHERE allocated_page_page_id IN (%s)"

// pageInfoAvailable: sys.dm_db_page_info is on SQL Server 2019 (15.x) and
// later, Azure SQL Database and Azure SQL Managed Instance.
func (r *run) pageInfoAvailable() bool {
	return r.info.major >= 15 || r.ed.id == editionAzureSQLDatabase || r.ed.id == editionManagedInstance
}

// readPageHeaders reads the headers of the pages the trace touched in the
// traced database (reads and writes first touched first, at most
// MaxPageHeaders) into tr.Pages. Failures are recorded, never fatal.
func (r *run) readPageHeaders(ctx context.Context, tr *timeline.Trace, res *bundle.Resolution) {
	if tr == nil || r.o.MaxPageHeaders < 0 {
		return
	}
	limit := r.o.MaxPageHeaders
	if limit == 0 {
		limit = DefaultMaxPageHeaders
	}
	db := uint64(r.info.databaseID)
	var pages []fp
	seen := map[fp]bool{}
	add := func(dbID, file, page uint64) {
		k := fp{file, page}
		if (dbID == db || dbID == 0) && !seen[k] {
			seen[k] = true
			pages = append(pages, k)
		}
	}
	for _, e := range tr.Lanes.Read {
		add(e.DatabaseID, e.FileID, e.PageID)
	}
	for _, e := range tr.Lanes.Write {
		add(e.DatabaseID, e.FileID, e.PageID)
	}
	if len(pages) == 0 {
		return
	}
	if len(pages) > limit {
		res.Errors = append(res.Errors, fmt.Sprintf("page headers: %d of %d pages read (limit %d)", limit, len(pages), limit))
		pages = pages[:limit]
	}
	var query string
	switch {
	case r.pageInfoAvailable():
		res.PageHeaderSource, query = PageHeadersPageInfo, sqlPageInfo
	case r.o.UndocumentedPageAllocations:
		res.PageHeaderSource, query = PageHeadersAllocations, sqlPageAllocations
	default:
		res.PageHeaderNote = "page headers need sys.dm_db_page_info (SQL Server 2019 and later); on this server only the undocumented sys.dm_db_database_page_allocations has them, which runs only when asked for (--page-allocations-dmv)"
		return
	}
	per := maxParams / 2
	if query == sqlPageAllocations {
		per = maxParams
	}
	got := map[fp]timeline.PageHeader{}
	for start := 0; start < len(pages); start += per {
		batch := pages[start:min(start+per, len(pages))]
		var args []any
		var list strings.Builder
		for i, p := range batch {
			if i > 0 {
				list.WriteString(", ")
			}
			if query == sqlPageInfo {
				fmt.Fprintf(&list, "(@p%d, @p%d)", len(args)+1, len(args)+2)
				args = append(args, int64(p.file), int64(p.page))
			} else {
				fmt.Fprintf(&list, "@p%d", len(args)+1)
				args = append(args, int64(p.page))
			}
		}
		if err := r.queryPageHeaders(ctx, fmt.Sprintf(query, list.String()), args, db, got); err != nil {
			res.Errors = append(res.Errors, "page headers: "+err.Error())
			break
		}
	}
	for _, p := range pages {
		if h, ok := got[p]; ok {
			tr.Pages = append(tr.Pages, h)
		}
	}
	slices.SortFunc(tr.Pages, func(a, b timeline.PageHeader) int {
		return cmp.Or(cmp.Compare(a.FileID, b.FileID), cmp.Compare(a.PageID, b.PageID))
	})
	res.PageHeaders = len(tr.Pages)
}

// fp is a page of the traced database: file and page id.
type fp struct{ file, page uint64 }

func (r *run) queryPageHeaders(ctx context.Context, q string, args []any, db uint64, got map[fp]timeline.PageHeader) error {
	rows, err := r.conn.QueryContext(ctx, r.spec.Marker()+q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var file, page, level, pf, pp, nf, np, obj, idx sql.NullInt64
		var typ sql.NullString
		if err := rows.Scan(&file, &page, &typ, &level, &pf, &pp, &nf, &np, &obj, &idx); err != nil {
			return err
		}
		h := timeline.PageHeader{DatabaseID: db, FileID: uint64(file.Int64), PageID: uint64(page.Int64), Type: typ.String, Level: int(level.Int64),
			ObjectID: obj.Int64, IndexID: idx.Int64}
		if pp.Int64 != 0 {
			h.PrevFile, h.PrevPage = uint64(pf.Int64), uint64(pp.Int64)
		}
		if np.Int64 != 0 {
			h.NextFile, h.NextPage = uint64(nf.Int64), uint64(np.Int64)
		}
		got[fp{h.FileID, h.PageID}] = h
	}
	return rows.Err()
}
