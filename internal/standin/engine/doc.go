// Package engine is the stand-in's query engine: what SQL Server's
// relational engine does with a statement once it is parsed. It holds
// the storage layout of the demo data (Table, Index, Database: rows in
// clustered key order on pages laid out as a B-tree), the planner (access
// paths, cardinality estimates, joins, aggregates, windows, parallelism —
// the operators SQL Server would choose on that data), the operators run
// as iterators with their per-thread counters, memory grants, spills and
// the events their work causes, the actual plan as showplan XML, SQL
// Server's values and data types, expression analysis and evaluation over
// the trees internal/standin/sqlfront parses, the built-in scalar
// functions, and the SQL errors evaluation raises.
//
// It must not import the server (internal/standin) or the protocol
// (internal/tds), and it does no I/O and takes no latch of its own: it
// knows no connection, session, transaction, persona, system view or
// tds.Handler. What it needs from the server it declares itself as small
// interfaces the server's request context implements, one per concern, the
// way internal/standin/xevents asks through Instance and Values:
//
//   - Host: variables, subqueries, the metadata and security functions,
//     the clock, the version's function set, the request's IN-list cache;
//   - Events: the event clock, emitting Extended Events, the operator call
//     stack and worker thread events belong to;
//   - Buffers: the buffer pool and the request's I/O counters;
//   - Locks: READ COMMITTED shared locks, the U locks of UPDATE and
//     DELETE, waits for other transactions' uncommitted deletes;
//   - Session: trace flags, yielding to other sessions (and learning of a
//     cancel or KILL), the statement limits;
//   - Catalog: name resolution (tables, system views as SysView), table-
//     valued functions, variable types, the statistics cache;
//   - RowIndex: a base-table row's %%lockres%% and %%physloc%%.
//
// Exec gathers them. internal/releasecheck TestLayers checks its imports.
package engine
