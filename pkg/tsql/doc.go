// Package tsql reads T-SQL as SQL Server does, for QueryReplay's safety
// rules: the lexer (line continuations, ASCII-only keyword folding, a
// leading byte-order mark), the allowlist classifier that decides whether a
// batch may be traced and whether it modifies data, the decoding of a batch
// given as bytes (UTF-8 or UTF-16 with a byte-order mark), and the quoting
// that every statement built from data goes through (QuoteName with
// QUOTENAME semantics, QuoteString for N'…' literals).
//
// It is pure: no I/O, no SQL driver. It must not run anything, import the
// tracer, or accept a batch it cannot read the way SQL Server would —
// anything it cannot be sure of is refused with a *RefusedError naming the
// statement and why (docs/security.md, "What may be traced").
//
// We wrote the lexer ourselves: no maintained Go library lexes T-SQL with
// SQL Server's rules for numbers ending where SQL Server ends them, line
// continuations and bracketed names, and the classifier needs exactly
// those. The stand-in (internal/standin) has its own lexer on purpose, as
// the independent party the differential fuzz compares this one with.
package tsql
