// Package compare shows what a change did: it matches the operators of two
// traces of a query (before and after an index, a hint, a bigger grant) by
// plan shape, and for every operator compares reads, waits by category,
// spills, phase timings and rows, with a one-line verdict ("Index Seek
// replaced Clustered Index Scan: reads 14,600 → 31"). Operators found in
// only one trace are listed as added or removed.
//
// # Matching
//
// Node ids are not stable across plans, so operators are matched by shape:
// their kind (physical and logical operator), their object (schema, table,
// index) and their place in the tree. The algorithm follows GumTree's
// top-down/bottom-up scheme (Falleri et al., "Fine-grained and accurate
// source code differencing", ASE 2014), adapted to plans:
//
//  1. Identical subtrees, largest first: a subtree whose every operator
//     has the same kind and object, in the same order, on both sides is
//     matched whole ("identical"). When several candidates have the same
//     shape, the one whose ancestors look most alike, then the one at the
//     nearest position, wins.
//  2. Objects: operators left over that touch a table are paired by
//     object — same table, index and kind ("same-object"), then same table
//     and index under another kind (a seek that replaced a scan of the same
//     index: "replaced"), then same table through another index when both
//     read it (Index Seek on IX_x for Clustered Index Scan on PK:
//     "replaced"). A key or RID lookup pairs only with a lookup: it
//     fetches each outer row's columns, which is not what a scan or seek
//     does. Pairs whose parents are already matched come first, then the
//     nearest in depth and position.
//  3. Containers, bottom-up: an operator left over whose descendants are
//     mostly matched to the descendants of one operator of the same family
//     on the other side (joins with joins: Nested Loops for Hash Match;
//     aggregates with aggregates; otherwise the same physical operator) is
//     matched to it when the Dice coefficient of their matched descendants
//     is at least 0.5 ("container"); the roots of the two plans are
//     matched when they are of one family.
//  4. Recovery, top-down: under each matched pair, children left over are
//     paired by kind in order (the longest common subsequence of their
//     kinds, "children"); a single leftover child of one family on each
//     side is paired too.
//
// Everything else is removed (only in A) or added (only in B). The result
// is symmetric: comparing B with A gives the same pairs, swapped, because
// the two trees are put in a canonical order (by their shape) before
// matching. Arbitrary input never makes it panic or loop: duplicate node
// ids and parent cycles are cut into separate roots.
//
// What this package must NOT do: any I/O, parse plans or events itself
// (it reads pkg/timeline traces and pkg/findings profiles), or shape frames.
package compare
