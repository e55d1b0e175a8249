// Package showplan parses SQL Server showplan XML — actual plans from the
// query_post_execution_showplan event and .sqlplan files, showplan versions
// 1.0 (SQL Server 2005) to 1.564 (SQL Server 2022) — into statements and
// operator trees, and classifies every operator as streaming, blocking or
// hybrid so that the timeline can place build and probe phases.
//
// What it covers: every statement of every batch (StmtSimple, StmtCond,
// StmtCursor, StmtReceive, StmtUseDb, statements inside UDF and stored
// procedure bodies; a cursor's PopulateQuery/FetchQuery plans become one
// Statement each so node ids stay unique); every RelOp at any depth,
// including RelOps under scalar subqueries; each operator's own objects
// (never a child's), seek and residual predicates as text, hash keys,
// warnings, per-thread runtime counters and their totals; statement-level
// QueryTimeStats, MemoryGrantInfo, WaitStats, ThreadStat, DOP, query and plan
// hashes and missing indexes. NewDocument and WriteTree render a Plan as the
// JSON and the text tree of `queryreplay plan inspect`.
//
// Semantics (semantics.go) come from a table keyed by the exact (PhysicalOp,
// LogicalOp) pair, never from substring tests, refined only by the
// operator's own XML (a Stream Aggregate without GROUP BY blocks; a spool
// without an input replays another spool's worktable). Every table entry
// carries its reason and its source (the showplan operator reference or the
// joins article on learn.microsoft.com, docs/design/tracing.md §8, or an explicit
// "general knowledge" where no page says so) and, where the classification
// is approximate, a caveat: (Hash Match, Partial Aggregate) blocks, but
// emits early when its groups outgrow memory; Window Spool streams, but a
// RANGE frame holds each tie group; a hash Left Semi Join is hybrid (a build
// row qualifies at its first match). Every decision keeps the rule that made
// it (Semantics.Rule, Reason, Source, Caveat); an operator missing from the
// table streams and is flagged Known=false. TestSemanticsAgainstReference
// checks the table against a list written independently from those sources.
// AdaptiveInputs and UnusedAdaptiveInput name an adaptive join's inputs by
// role and the one its ActualJoinType left unused.
//
// What it must NOT do: no I/O of its own (callers hand it the bytes), no
// database access, no timeline building or event matching (pkg/timeline),
// no logging. Bad input yields an error naming the problem and its line,
// never a panic (FuzzParseBytes).
//
// Why hand-written on encoding/xml tokens rather than xml.Unmarshal: RelOps
// nest at any depth under dozens of operator-specific elements (Hash,
// NestedLoops, Spool, Subquery under ScalarOperator, ...), which struct tags
// cannot express without a generic node tree, and whether an element belongs
// to an operator depends on its innermost enclosing RelOp — which a
// streaming walk with an element stack knows for free. The parser reads
// Decoder.RawToken (no namespace translation: names are matched by local
// name; nesting is checked by our own stack) and uses no reflection. On the
// 86 real plans it needs about 1.6 times less CPU than xml.Unmarshal into a
// generic tree and half the allocated bytes; the tokenizer itself is about
// 85% of its CPU time (BenchmarkParse cpu-ms/MB, pprof). A byte-level
// scanner would be faster still, but would re-implement XML entity, CDATA and
// comment handling for a parse that takes a few milliseconds per plan.
//
// Encoding: decided from the byte order mark (UTF-16LE/BE, UTF-8; UTF-16
// without a BOM from the NUL next to the first '<') and transcoded with
// unicode/utf16, so the package needs nothing outside the standard library.
// The encoding declaration is ignored because re-saved .sqlplan files
// declare utf-16 but are UTF-8 [V, docs/design/tracing.md §7.2].
package showplan
