// Package showplan parses SQL Server showplan XML — actual plans from the
// query_post_execution_showplan event and .sqlplan files, showplan versions
// 1.0 (SQL Server 2005) to 1.564 (SQL Server 2022) — into statements and
// operator trees, and classifies every operator as streaming, blocking or
// hybrid so that the timeline can place build and probe phases.
//
// What it covers: every statement of every batch (StmtSimple, StmtCond,
// StmtCursor, StmtReceive, StmtUseDb, statements inside UDF and stored
// procedure bodies); every RelOp at any depth, including RelOps under scalar
// subqueries; each operator's own objects (never a child's), predicates as
// text, hash keys, warnings, per-thread runtime counters and their totals;
// statement-level QueryTimeStats, MemoryGrantInfo, WaitStats, ThreadStat, DOP,
// hashes and missing indexes. See semantics.go for the blocking/streaming
// table and how each decision is recorded.
//
// What it must NOT do: no I/O beyond reading the given bytes or file, no
// database access, no timeline building, no event matching (pkg/timeline
// does that) and no logging. Bad input yields an error naming the problem,
// never a panic.
//
// Why hand-written on encoding/xml tokens rather than xml.Unmarshal: a
// plan's RelOps nest at arbitrary depth under dozens of operator-specific
// elements (Hash, NestedLoops, Spool, ScalarOperator subqueries, ...), which
// struct tags cannot express without a generic node tree; and whether an
// element belongs to an operator depends on its innermost enclosing RelOp,
// which a streaming walk with an element stack knows for free. The parser
// uses Decoder.RawToken (no namespace translation, since names are matched
// by local name; element nesting is checked by our own stack) and no
// reflection. It is about twice as fast as unmarshalling into a generic tree
// (see BenchmarkParse). A byte-level scanner would be faster still, but would
// re-implement XML entity, CDATA and comment handling for a parse that takes
// milliseconds per plan.
//
// Encoding: decided from the byte order mark (UTF-16LE/BE, UTF-8) and
// transcoded with unicode/utf16 (no dependency outside the standard
// library); the encoding declaration is ignored because re-saved .sqlplan
// files declare utf-16 but are UTF-8 [V].
package showplan
