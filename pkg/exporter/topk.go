package exporter

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// topQuery is one row of a target's top-query table: the path from a spill
// alert to a replay. Statement comes from the plan cache.
type topQuery struct {
	QueryHash    uint64
	Database     string
	Spills       uint64
	SpillPages   uint64
	LogicalReads uint64
	Executions   uint64
	LastSeen     time.Time
	Statement    string
	Truncated    bool
	lookedUp     time.Time
}

// topTable keeps the queries that spill most (then read most), bounded: at
// most candidates entries are tracked and size are served; entries not
// seen for maxAge are dropped.
type topTable struct {
	entries    map[uint64]*topQuery
	size       int
	candidates int
	maxAge     time.Duration
}

func newTopTable(size int, maxAge time.Duration) *topTable {
	return &topTable{entries: map[uint64]*topQuery{}, size: size, candidates: 4 * size, maxAge: maxAge}
}

func (t *topTable) entry(hash uint64, database string) *topQuery {
	e := t.entries[hash]
	if e == nil {
		e = &topQuery{QueryHash: hash}
		t.entries[hash] = e
	}
	if database != "" {
		e.Database = database
	}
	return e
}

func (t *topTable) noteSpill(hash uint64, database string, spills, pages uint64, at time.Time) {
	e := t.entry(hash, database)
	e.Spills += spills
	e.SpillPages += pages
	e.LastSeen = laterOf(e.LastSeen, at)
}

func (t *topTable) noteStatements(hash uint64, database string, execs, reads uint64, at time.Time) {
	e := t.entry(hash, database)
	e.Executions += execs
	e.LogicalReads += reads
	e.LastSeen = laterOf(e.LastSeen, at)
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func rankTop(a, b *topQuery) int {
	if c := cmp.Compare(b.Spills, a.Spills); c != 0 {
		return c
	}
	if c := cmp.Compare(b.LogicalReads, a.LogicalReads); c != 0 {
		return c
	}
	return cmp.Compare(a.QueryHash, b.QueryHash)
}

// trim drops expired entries and keeps the best candidates.
func (t *topTable) trim(now time.Time) {
	for h, e := range t.entries {
		if now.Sub(e.LastSeen) > t.maxAge {
			delete(t.entries, h)
		}
	}
	if len(t.entries) <= t.candidates {
		return
	}
	for _, e := range t.ranked()[t.candidates:] {
		delete(t.entries, e.QueryHash)
	}
}

func (t *topTable) ranked() []*topQuery {
	out := make([]*topQuery, 0, len(t.entries))
	for _, e := range t.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, rankTop)
	return out
}

// top returns the served entries, best first.
func (t *topTable) top() []*topQuery {
	r := t.ranked()
	return r[:min(len(r), t.size)]
}

// lookupRetry is how long a query whose statement was not found waits
// before it is looked up again.
const lookupRetry = time.Minute

// pendingLookups returns the served entries that need a statement, and
// marks them looked up.
func (t *topTable) pendingLookups(now time.Time) []uint64 {
	var want []uint64
	for _, e := range t.top() {
		if e.Statement == "" && now.Sub(e.lookedUp) >= lookupRetry {
			want = append(want, e.QueryHash)
			e.lookedUp = now
		}
	}
	return want
}

// statement is a plan cache answer for one query hash.
type statement struct {
	text      string
	truncated bool
}

// databaseOf returns the database a top query was seen in ("" if none).
func (t *topTable) databaseOf(hash uint64) string {
	if e := t.entries[hash]; e != nil {
		return e.Database
	}
	return ""
}

// setStatements records looked-up statements.
func (t *topTable) setStatements(found map[uint64]statement) {
	for h, s := range found {
		if e := t.entries[h]; e != nil {
			e.Statement, e.Truncated = s.text, s.truncated
		}
	}
}

// fetchStatements reads statement texts from the plan cache:
// sys.dm_exec_query_stats by query_hash (binary(8)), the text from
// sys.dm_exec_sql_text, cut at the statement's offsets (bytes of UTF-16,
// end -1 meaning the end of the batch)
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-stats-transact-sql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql).
// Several plans can share a hash; the most recently executed wins. Reading
// them needs VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on SQL Server
// 2022+).
func fetchStatements(ctx context.Context, q querier, want []uint64, maxBytes int) (map[uint64]statement, error) {
	if len(want) == 0 {
		return nil, nil
	}
	hashes := make([]string, len(want))
	for i, h := range want {
		hashes[i] = formatQueryHash(h)
	}
	query := "SELECT qs.query_hash, qs.statement_start_offset, qs.statement_end_offset, st.text, qs.last_execution_time " +
		"FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st " +
		"WHERE qs.query_hash IN (" + strings.Join(hashes, ", ") + ")"
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("look up statements in the plan cache: %w", err)
	}
	defer rows.Close()
	found := map[uint64]statement{}
	latest := map[uint64]time.Time{}
	for rows.Next() {
		var hash []byte
		var start, end sql.NullInt64
		var text sql.NullString
		var last sql.NullTime
		if err := rows.Scan(&hash, &start, &end, &text, &last); err != nil {
			return found, fmt.Errorf("look up statements: %w", err)
		}
		if len(hash) != 8 || !text.Valid {
			continue
		}
		h := binary.BigEndian.Uint64(hash)
		if prev, seen := latest[h]; seen && !last.Time.After(prev) {
			continue
		}
		latest[h] = last.Time
		txt, cut := statementText(text.String, start.Int64, end.Int64, maxBytes)
		found[h] = statement{txt, cut}
	}
	return found, rows.Err()
}

// statementText cuts a statement out of its batch by the plan cache's
// offsets, which count bytes of UTF-16, and caps it at maxBytes of UTF-8
// (on a rune boundary).
func statementText(batch string, start, end int64, maxBytes int) (string, bool) {
	u := utf16.Encode([]rune(batch))
	s, e := int(start/2), len(u)
	if end >= 0 {
		e = int(end/2) + 1
	}
	if s < 0 || s > len(u) {
		s = 0
	}
	e = min(max(e, s), len(u))
	text := strings.TrimSpace(string(utf16.Decode(u[s:e])))
	if len(text) <= maxBytes {
		return text, false
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut], true
}

// replayPath is the link to the replay dashboard (uid queryreplay-replay)
// for one query of one target: its query hash (the datasource looks the
// statement up whole, with its parameters: a link never carries a cut
// text), its database, and replay_ds, the QueryReplay datasource of the
// target's server, so the replay runs where the query ran; and
// queryreplayRun=1, the link's ask that the trace run once (a trace runs
// only when asked, docs/frames.md §1).
// Spaces are written %20, not +: Grafana decodes the query with
// decodeURIComponent, which leaves + alone.
func replayPath(grafanaURL, queryHash, database, datasource string) string {
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	return strings.TrimRight(grafanaURL, "/") + "/d/queryreplay-replay?var-query_hash=" + esc(queryHash) +
		"&var-database=" + esc(database) + "&var-replay_ds=" + esc(datasource) + "&queryreplayRun=1"
}

// fetchFromQueryStore looks up, in the Query Store of the database each
// query was seen in, the hashes the plan cache no longer holds
// (sqlconn.LookupQueryStoreText: Query Store is per database). The text kept
// is capped at maxBytes like the plan cache's; the replay link carries the
// hash, so the datasource reads the whole text itself. A Query Store that
// is off or unreadable is normal (off by default before SQL Server 2022)
// and is logged at debug level, not counted as a poll error.
func fetchFromQueryStore(ctx context.Context, q sqlconn.Querier, want map[uint64]string, maxBytes int, log *slog.Logger) map[uint64]statement {
	found := map[uint64]statement{}
	for h, db := range want {
		if db == "" || ctx.Err() != nil {
			continue
		}
		text, err := sqlconn.LookupQueryStoreText(ctx, q, h, db)
		if err != nil {
			if !errors.Is(err, sqlconn.ErrNotFound) {
				log.Debug("query store lookup failed", "query_hash", formatQueryHash(h), "err", err)
			}
			continue
		}
		txt, cut := statementText(text, 0, -1, maxBytes)
		found[h] = statement{txt, cut}
	}
	return found
}
