package sqlconn

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// MaxStatementBytes bounds a looked-up statement's text (UTF-8). A longer
// statement is refused, never cut: a cut statement is another statement.
const MaxStatementBytes = 1 << 20

// MaxPlanBytes bounds the plan XML read for parameter values.
const MaxPlanBytes = 32 << 20

// MaxQueryStoreDatabases bounds how many databases' Query Stores one
// lookup searches when the caller names none.
const MaxQueryStoreDatabases = 64

// Where a statement was found.
const (
	SourcePlanCache  = "plan cache"
	SourceQueryStore = "query store"
)

// Statement is the text of a query hash and what replaying it needs.
type Statement struct {
	QueryHash uint64
	// Text is the statement alone, whole (never cut), without the
	// parameter declarations a parameterized batch starts with.
	Text string
	// Database is where it was compiled ("" when the server does not say).
	Database string
	// Params are the declared parameters with the values the cached plan
	// was compiled for (its sniffed values); nil for a statement without
	// parameters.
	Params *Params
	// Source is SourcePlanCache or SourceQueryStore.
	Source string
}

// Querier runs a query (a *sql.DB, *sql.Conn or *sql.Tx).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ErrNotFound: neither the plan cache nor a searched Query Store holds the
// query hash.
var ErrNotFound = errors.New("the query hash is in neither the plan cache nor Query Store")

// LookupStatement finds the statement of a query hash: in the plan cache
// first (the most recently executed plan), else in the Query Store of each
// database in databases (every database with Query Store on when
// databases is empty, at most MaxQueryStoreDatabases). A database whose
// Query Store cannot be read is skipped; if the hash is found nowhere the
// error is ErrNotFound, joined with those databases' errors.
func LookupStatement(ctx context.Context, q Querier, hash uint64, databases []string) (Statement, error) {
	st, err := lookupPlanCache(ctx, q, hash)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return st, err
	}
	if len(databases) == 0 {
		if databases, err = queryStoreDatabases(ctx, q); err != nil {
			return Statement{}, err
		}
	}
	var errs []error
	for _, db := range databases {
		st, err := lookupQueryStore(ctx, q, hash, db)
		if err == nil {
			return st, nil
		}
		if !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return Statement{}, errors.Join(append([]error{ErrNotFound}, errs...)...)
}

// hashArg is a query hash as the binary(8) the catalog views hold
// (query_hash in sys.dm_exec_query_stats and sys.query_store_query).
func hashArg(hash uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, hash)
}

// planCacheQuery: sys.dm_exec_query_stats by query_hash, the batch text
// from sys.dm_exec_sql_text (dbid: where an ad hoc or prepared batch was
// compiled), the statement's plan from sys.dm_exec_text_query_plan (text,
// so a plan nested deeper than the xml type allows still comes back)
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-stats-transact-sql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-text-query-plan-transact-sql).
// The plan is read only for a parameterized batch, in planQuery.
const planCacheQuery = "SELECT TOP (1) st.text, qs.statement_start_offset, qs.statement_end_offset, DB_NAME(st.dbid), qs.plan_handle " +
	"FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st " +
	"WHERE qs.query_hash = @hash ORDER BY qs.last_execution_time DESC"

const planQuery = "SELECT query_plan FROM sys.dm_exec_text_query_plan(@handle, @start, @end)"

func lookupPlanCache(ctx context.Context, q Querier, hash uint64) (Statement, error) {
	var text, db sql.NullString
	var start, end sql.NullInt64
	var handle []byte
	found, err := queryRow(ctx, q, planCacheQuery, []any{sql.Named("hash", hashArg(hash))}, &text, &start, &end, &db, &handle)
	if err != nil {
		return Statement{}, fmt.Errorf("look up the query hash in the plan cache: %w", err)
	}
	if !found || !text.Valid {
		return Statement{}, ErrNotFound
	}
	st := Statement{QueryHash: hash, Database: db.String, Source: SourcePlanCache}
	decl, _ := SplitDeclarations(text.String)
	st.Text = cutStatement(text.String, start.Int64, end.Int64)
	if d, body := SplitDeclarations(st.Text); d != "" {
		st.Text = strings.TrimSpace(body) // offsets that cover the whole batch
	}
	if decl == "" {
		return checkSize(st)
	}
	var plan sql.NullString
	if _, err := queryRow(ctx, q, planQuery, []any{sql.Named("handle", handle), sql.Named("start", start.Int64), sql.Named("end", end.Int64)}, &plan); err != nil {
		return Statement{}, fmt.Errorf("read the cached plan's parameter values: %w", err)
	}
	if st.Params, err = paramsOf(decl, plan.String); err != nil {
		return Statement{}, err
	}
	return checkSize(st)
}

// queryStoreQuery reads one database's Query Store: sys.query_store_query
// by query_hash, its text from sys.query_store_query_text, the plan of its
// most recent execution from sys.query_store_plan
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-query-store-query-transact-sql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-query-store-query-text-transact-sql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-query-store-plan-transact-sql).
// Query Store is per database, so the views are named in three parts with
// the database quoted as QUOTENAME would.
func queryStoreQuery(database string) string {
	db := tsql.QuoteName(database)
	return "SELECT TOP (1) qt.query_sql_text, p.query_plan " +
		"FROM " + db + ".sys.query_store_query AS q " +
		"JOIN " + db + ".sys.query_store_query_text AS qt ON qt.query_text_id = q.query_text_id " +
		"OUTER APPLY (SELECT TOP (1) qp.query_plan FROM " + db + ".sys.query_store_plan AS qp " +
		"WHERE qp.query_id = q.query_id ORDER BY qp.last_execution_time DESC) AS p " +
		"WHERE q.query_hash = @hash ORDER BY q.last_execution_time DESC"
}

// LookupQueryStoreText returns the statement text of a query hash from one
// database's Query Store only, without its parameters' values (what a
// label needs; ErrNotFound when it holds no such query, or Query Store is
// off).
func LookupQueryStoreText(ctx context.Context, q Querier, hash uint64, database string) (string, error) {
	st, _, err := queryStoreRow(ctx, q, hash, database)
	if err != nil {
		return "", err
	}
	st, err = checkSize(st)
	return st.Text, err
}

// queryStoreRow reads the statement (without its declarations) and the
// declarations and plan it needs for its parameters.
func queryStoreRow(ctx context.Context, q Querier, hash uint64, database string) (Statement, [2]string, error) {
	var text, plan sql.NullString
	found, err := queryRow(ctx, q, queryStoreQuery(database), []any{sql.Named("hash", hashArg(hash))}, &text, &plan)
	if err != nil {
		return Statement{}, [2]string{}, fmt.Errorf("look up the query hash in the Query Store of %s: %w", tsql.QuoteName(database), err)
	}
	if !found || !text.Valid {
		return Statement{}, [2]string{}, ErrNotFound
	}
	decl, body := SplitDeclarations(text.String)
	st := Statement{QueryHash: hash, Database: database, Source: SourceQueryStore, Text: strings.TrimSpace(body)}
	return st, [2]string{decl, plan.String}, nil
}

func lookupQueryStore(ctx context.Context, q Querier, hash uint64, database string) (Statement, error) {
	st, dp, err := queryStoreRow(ctx, q, hash, database)
	if err != nil {
		return Statement{}, err
	}
	if dp[0] != "" {
		if st.Params, err = paramsOf(dp[0], dp[1]); err != nil {
			return Statement{}, err
		}
	}
	return checkSize(st)
}

// queryStoreDatabases lists the online databases with Query Store on
// (sys.databases.is_query_store_on).
func queryStoreDatabases(ctx context.Context, q Querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT TOP (@n) name FROM sys.databases WHERE is_query_store_on = 1 AND state = 0 ORDER BY database_id",
		sql.Named("n", MaxQueryStoreDatabases))
	if err != nil {
		return nil, fmt.Errorf("list the databases with Query Store: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() && len(out) < MaxQueryStoreDatabases {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("list the databases with Query Store: %w", err)
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// queryRow runs query and scans its first row into dest; found is false
// when there is none.
func queryRow(ctx context.Context, q Querier, query string, args []any, dest ...any) (bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	return true, rows.Close()
}

func checkSize(st Statement) (Statement, error) {
	if len(st.Text) > MaxStatementBytes {
		return Statement{}, fmt.Errorf("the statement of query hash %s is %d bytes, more than the %d a replay takes (it is never cut)", FormatQueryHash(st.QueryHash), len(st.Text), MaxStatementBytes)
	}
	if strings.TrimSpace(st.Text) == "" {
		return Statement{}, fmt.Errorf("the statement of query hash %s is empty", FormatQueryHash(st.QueryHash))
	}
	return st, nil
}

// cutStatement cuts a statement out of its batch by the plan cache's
// offsets, which count bytes of UTF-16 (end -1: to the end of the batch).
// Nothing else is cut.
func cutStatement(batch string, start, end int64) string {
	u := utf16.Encode([]rune(batch))
	s, e := int(start/2), len(u)
	if end >= 0 {
		e = int(end/2) + 1
	}
	if start < 0 || s > len(u) {
		s = 0
	}
	e = min(max(e, s), len(u))
	return strings.TrimSpace(string(utf16.Decode(u[s:e])))
}

// ParseQueryHash reads a query hash as the exporter writes it: 0x and 16
// hexadecimal digits (either case).
func ParseQueryHash(s string) (uint64, error) {
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok {
		hex, ok = strings.CutPrefix(s, "0X")
	}
	if !ok || len(hex) != 16 {
		return 0, fmt.Errorf("query hash %q: want 0x and 16 hexadecimal digits", s)
	}
	h, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("query hash %q: want 0x and 16 hexadecimal digits", s)
	}
	return h, nil
}

// FormatQueryHash writes a query hash as 0x and 16 upper-case hex digits.
func FormatQueryHash(h uint64) string { return fmt.Sprintf("0x%016X", h) }
